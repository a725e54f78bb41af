"""Moves, their text notation, and the typed reasons a move is illegal.

A move names where a card comes from and where it goes; the engine works
out which card that is. The notation is one short token per move, in the
spirit of chess's SAN, so a game is a line of text anyone can paste:

=========  ===============================================================
``ab``     top card of column a onto column b (columns are ``a``..``t``)
``3ab``    three cards of column a onto column b as a unit (group moves)
``aF``     top card of column a to a foundation (any ready one of its suit)
``Wb``     waste top onto column b
``WF``     waste top to a foundation
``S``      turn the next stock card(s) onto the waste
``R``      turn the waste over to make the next stock pass
=========  ===============================================================

Columns are lower case and places upper case (as in chess's FEN, case
carries meaning), so column ``f`` and the foundations ``F`` never clash.
A lone ``s`` or ``r`` is accepted for ``S`` and ``R``. Moves that the rules
never allow still parse when their shape is clear (``Fa``: a foundation card
back to column a; ``Sa``: a stock card straight onto column a), so a client
that sends one gets a precise reason instead of a parse error.
``docs/notation.md`` is the full reference.

Errors form a small tree, all ``ValueError``::

    ValueError
    ├── MoveParseError      text that is not a move
    └── IllegalMove         a well-formed move the position does not allow
                            (.reason is an IllegalReason)
"""

from __future__ import annotations

import enum
from typing import NamedTuple

WASTE = 100
STOCK = 101
FOUNDATION = 102
MAX_COLUMNS = 20

_COLUMN_LETTERS = "abcdefghijklmnopqrst"
_PLACE_LETTERS = {"W": WASTE, "S": STOCK, "F": FOUNDATION}
_LETTER_OF = {WASTE: "W", STOCK: "S", FOUNDATION: "F"}


class MoveParseError(ValueError):
    """Text that is not a move in the notation."""


class IllegalReason(enum.Enum):
    """Why the position does not allow a move; the value is the wire code."""

    NO_SUCH_COLUMN = "no_such_column"
    SOURCE_EMPTY = "source_empty"
    SAME_COLUMN = "same_column"
    WRONG_SUIT = "wrong_suit"
    NOT_ONE_RANK_LOWER = "not_one_rank_lower"
    EMPTY_COLUMN_KING_ONLY = "empty_column_king_only"
    EMPTY_COLUMN_CLOSED = "empty_column_closed"
    GROUP_MOVE_NOT_ALLOWED = "group_move_not_allowed"
    NOT_A_RUN = "not_a_run"
    RUN_TOO_LONG = "run_too_long"
    FACE_DOWN = "face_down"
    FOUNDATION_NOT_READY = "foundation_not_ready"
    FOUNDATION_CARDS_NEVER_MOVE = "foundation_cards_never_move"
    STOCK_EMPTY = "stock_empty"
    STOCK_NOT_EMPTY = "stock_not_empty"
    NO_SECOND_PASS = "no_further_pass"
    STOCK_GOES_TO_WASTE = "stock_goes_to_waste"
    NOT_A_TARGET = "not_a_target"
    GAME_OVER = "game_over"
    NOTHING_TO_UNDO = "nothing_to_undo"
    NOTHING_TO_REDO = "nothing_to_redo"
    UNDO_NOT_ALLOWED = "undo_not_allowed"

    @property
    def explanation(self) -> str:
        return _EXPLANATIONS[self]


_EXPLANATIONS = {
    IllegalReason.NO_SUCH_COLUMN: "there is no such column in this game",
    IllegalReason.SOURCE_EMPTY: "there is no card to move there",
    IllegalReason.SAME_COLUMN: "a card cannot move onto its own column",
    IllegalReason.WRONG_SUIT: "the card may not be packed on a card of that suit",
    IllegalReason.NOT_ONE_RANK_LOWER: "a card must be exactly one rank lower than the card it goes on",
    IllegalReason.EMPTY_COLUMN_KING_ONLY: "only a king may go to an empty column",
    IllegalReason.EMPTY_COLUMN_CLOSED: "empty columns take no cards in this game",
    IllegalReason.GROUP_MOVE_NOT_ALLOWED: "cards move one at a time in this game",
    IllegalReason.NOT_A_RUN: "those cards are not an ordered run that may move as a unit",
    IllegalReason.RUN_TOO_LONG: "the column has fewer cards than that",
    IllegalReason.FACE_DOWN: "a face-down card cannot move",
    IllegalReason.FOUNDATION_NOT_READY: "no foundation of that suit is ready for the card",
    IllegalReason.FOUNDATION_CARDS_NEVER_MOVE: "a card on a foundation never comes back",
    IllegalReason.STOCK_EMPTY: "the stock is empty",
    IllegalReason.STOCK_NOT_EMPTY: "the waste can be turned over only when the stock is empty",
    IllegalReason.NO_SECOND_PASS: "no further pass through the stock is allowed",
    IllegalReason.STOCK_GOES_TO_WASTE: "stock cards are turned onto the waste, nowhere else",
    IllegalReason.NOT_A_TARGET: "cards go onto columns and foundations only",
    IllegalReason.GAME_OVER: "the game is over",
    IllegalReason.NOTHING_TO_UNDO: "there is no move to undo",
    IllegalReason.NOTHING_TO_REDO: "there is no move to redo",
    IllegalReason.UNDO_NOT_ALLOWED: "that move may not be taken back here",
}


class IllegalMove(ValueError):
    """A well-formed move that the position does not allow."""

    def __init__(self, move: "Move | None", reason: IllegalReason) -> None:
        self.move = move
        self.reason = reason
        what = f"{move.text()}: " if move is not None else ""
        super().__init__(f"{what}{reason.explanation}")


class Move(NamedTuple):
    """A move from ``src`` to ``dst`` of ``count`` cards.

    ``src`` and ``dst`` are a column index (0-based) or one of ``WASTE``,
    ``STOCK``, ``FOUNDATION``. A draw is ``Move(STOCK, WASTE)``; turning
    the waste over is ``Move(WASTE, STOCK)``.
    """

    src: int
    dst: int
    count: int = 1  # type: ignore[assignment]  # the field shadows tuple.count, which no caller uses

    def text(self) -> str:
        """The move in the notation: ``"ab"``, ``"3ab"``, ``"WF"``, ``"S"``, ``"R"``."""
        known = _TEXT_OF.get(self)
        if known is not None:
            return known
        return self._write()

    def _write(self) -> str:
        if self.src == STOCK and self.dst == WASTE:
            return "S"
        if self.src == WASTE and self.dst == STOCK:
            return "R"
        prefix = str(self.count) if self.count != 1 else ""
        return prefix + _place_text(self.src) + _place_text(self.dst)

    @classmethod
    def parse(cls, text: str) -> "Move":
        """Read a move written by :meth:`text` (also ``s``/``SW`` for ``S`` and ``r``/``WS`` for ``R``)."""
        known = _PARSED.get(text)
        if known is not None:  # every one-card move, looked up: the server parses one per frame
            return known
        t = text.strip()
        if t in ("S", "s", "SW"):
            return DRAW
        if t in ("R", "r", "WS"):
            return REDEAL
        digits = 0
        while digits < len(t) and t[digits] in "0123456789":
            digits += 1
        rest = t[digits:]
        if len(rest) != 2 or digits > 3 or (digits and t[0] == "0"):
            raise MoveParseError(
                f"not a move: {text!r} (expected e.g. 'ab', '3ab', 'aF', 'Wb', 'WF', 'S' or 'R')"
            )
        count = int(t[:digits]) if digits else 1
        src, dst = _parse_place(rest[0], text), _parse_place(rest[1], text)
        if count > 1 and not (src < MAX_COLUMNS and dst < MAX_COLUMNS):
            raise MoveParseError(f"not a move: {text!r} (only column-to-column moves carry a count)")
        return cls(src, dst, count)

    def __repr__(self) -> str:
        return f"Move.parse({self.text()!r})"


DRAW = Move(STOCK, WASTE)
REDEAL = Move(WASTE, STOCK)


def column_letter(index: int) -> str:
    """The letter of a 0-based column index."""
    return _COLUMN_LETTERS[index]


def _place_text(place: int) -> str:
    return _LETTER_OF.get(place) or _COLUMN_LETTERS[place]


def _parse_place(ch: str, whole: str) -> int:
    if ch in _PLACE_LETTERS:
        return _PLACE_LETTERS[ch]
    idx = _COLUMN_LETTERS.find(ch)
    if idx < 0:
        raise MoveParseError(f"not a move: {whole!r} ({ch!r} names no column a-t, nor W, S or F)")
    return idx


_PARSED: dict[str, Move] = {}
_TEXT_OF: dict[Move, str] = {}


def _fill_one_card_tables() -> None:
    """Every one-card move (all place pairs, the ones the rules refuse too) by its text, and back.

    Filled by the slow paths themselves, so a look-up answers exactly what
    they would; the server parses one move per frame and writes it back.
    """
    places = [*range(MAX_COLUMNS), WASTE, STOCK, FOUNDATION]
    for move in (Move(s, d) for s in places for d in places):
        _TEXT_OF[move] = move._write()
    for text in [*(_place_text(s) + _place_text(d) for s in places for d in places), "S", "s", "R", "r"]:
        _PARSED[text] = Move.parse(text)


_fill_one_card_tables()


def parse_moves(text: str) -> list[Move]:
    """A whitespace- or comma-separated line of moves."""
    return [Move.parse(tok) for tok in text.replace(",", " ").split()]
