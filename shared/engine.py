"""The rules engine: one game of any variant, sans I/O.

A :class:`Game` holds a position and its move history. It answers what is
legal (with a typed reason when not), applies and takes back moves, and
reports status and progress. It never reads a clock, a socket or a file, so
the server, the client, the solver and the tests all drive the same object.

Hot paths (``push``/``pop``/``legal_moves``) work on plain lists of small
ints and precomputed tables, since the solver and the server call them
hundreds of thousands of times a second.

The server's move path is one check and one status per move:
:meth:`Game.play_checked` checks a move once and plays it, :meth:`Game.status`
is remembered until the position changes (``push``/``pop`` forget it), and
``shared.protocol.View.of_game`` builds the acknowledgement's board from
what changed since the last one. Change a position only through ``push``,
``pop`` and ``redo`` (or build a new ``Game``): the remembered status
trusts that.
"""

from __future__ import annotations

import enum
from functools import lru_cache
from typing import TYPE_CHECKING, Iterable, Sequence

from .cards import ACE, KING, Card, is_red, rank_of, suit_of
from .moves import (
    DRAW,
    FOUNDATION,
    MAX_COLUMNS,
    REDEAL,
    STOCK,
    WASTE,
    IllegalMove,
    IllegalReason,
    Move,
)
from .variants import DEFAULT_VARIANT, EmptyColumn, GroupMoves, Packing, Variant

if TYPE_CHECKING:
    from .deals import Deal
    from .protocol import View
    from .view import PlayerView


class Status(enum.Enum):
    """Where a game stands; ``BLOCKED`` means no legal move exists at all."""

    PLAYING = "playing"
    WON = "won"
    BLOCKED = "blocked"


@lru_cache(maxsize=None)
def _packing_table(packing: Packing) -> tuple[frozenset[Card], ...]:
    """For each card, the set of cards it may be packed on."""
    table = []
    for c in range(52):
        ok = set()
        for t in range(52):
            if rank_of(t) != rank_of(c) + 1:
                continue
            same = suit_of(t) == suit_of(c)
            if (
                (packing is Packing.SAME_SUIT and same)
                or (packing is Packing.ALTERNATE_COLOUR and is_red(t) != is_red(c))
                or (packing is Packing.ANY_BUT_OWN_SUIT and not same)
                or packing is Packing.ANY_SUIT
            ):
                ok.add(t)
        table.append(frozenset(ok))
    return tuple(table)


@lru_cache(maxsize=None)
def _empty_table(rule: EmptyColumn) -> tuple[bool, ...]:
    """For each card, whether an empty column takes it."""
    return tuple(rule is EmptyColumn.ANY or (rule is EmptyColumn.KING_ONLY and c % 13 == _KING_INDEX) for c in range(52))


def _moves_table() -> list[list[Move]]:
    places = list(range(MAX_COLUMNS)) + [WASTE, STOCK, FOUNDATION]
    unused = Move(FOUNDATION, FOUNDATION)  # a placeholder for the pairs that are no place
    table = [[unused] * (FOUNDATION + 1) for _ in range(FOUNDATION + 1)]
    for s in places:
        for d in places:
            table[s][d] = Move(s, d)
    return table


_MOVE = _moves_table()
_TO_F = FOUNDATION
_KING_INDEX = KING - 1


class Game:
    """A position of one variant plus the moves that led to it.

    Layout: ``tableau[i]`` lists column i bottom card first, the first
    ``hidden[i]`` of them face down; ``waste`` bottom first; ``stock`` has
    its *next card last* (drawing is ``pop()``); ``foundations[i]`` is the
    top rank (0 = empty) of foundation i, whose suit is ``i % 4``.
    """

    __slots__ = (
        "variant",
        "tableau",
        "hidden",
        "waste",
        "stock",
        "foundations",
        "pass_number",
        "move_stack",
        "_undo",
        "_redo",
        "_home",
        "_pack_ok",
        "_fidx",
        "_group",
        "_empty_rule",
        "_empty_ok",
        "_status",
        "_view_memo",
    )

    def __init__(
        self,
        variant: Variant = DEFAULT_VARIANT,
        tableau: Sequence[Sequence[Card]] = (),
        stock: Sequence[Card] = (),
        waste: Sequence[Card] = (),
        foundations: Sequence[int] | None = None,
        hidden: Sequence[int] | None = None,
        pass_number: int = 1,
    ) -> None:
        """``stock`` is given in draw order (next card first)."""
        self.variant = variant
        self.tableau: list[list[Card]] = [list(col) for col in tableau] or [[] for _ in range(variant.columns)]
        self.hidden: list[int] = list(hidden) if hidden is not None else [0] * len(self.tableau)
        self.waste: list[Card] = list(waste)
        self.stock: list[Card] = list(reversed(stock))
        self.foundations: list[int] = list(foundations) if foundations is not None else [0] * variant.foundations
        self.pass_number = pass_number
        self.move_stack: list[Move] = []
        self._undo: list[tuple[int, bool]] = []
        self._redo: list[Move] = []
        self._home = sum(self.foundations)
        self._pack_ok = _packing_table(variant.packing)
        nf = len(self.foundations)
        self._fidx = tuple(tuple(range(s, nf, 4)) for s in range(4))
        self._group = variant.group_moves
        self._empty_rule = variant.empty_column
        self._empty_ok = _empty_table(variant.empty_column)
        self._status: Status | None = None
        self._view_memo: object = None
        """Owned by ``shared.view.wire_view``: the last wire board, checked against the position before reuse."""

    # ----------------------------------------------------------- creation
    @classmethod
    def from_deal(cls, deal: "Deal") -> "Game":
        """The starting position of a deal (aces already home where the variant says)."""
        v = deal.variant
        foundations = [0] * v.foundations
        for card in deal.foundations:
            s = suit_of(card)
            f = next(i for i in range(s, v.foundations, 4) if foundations[i] == 0)
            foundations[f] = rank_of(card)
        hidden = [min(v.face_down_per_column, len(col)) for col in deal.tableau]
        return cls(v, deal.tableau, deal.stock, (), foundations, hidden)

    @classmethod
    def new(cls, variant: Variant = DEFAULT_VARIANT, deal_number: int = 1) -> "Game":
        """Deal ``deal_number`` of ``variant``, ready to play."""
        from .deals import deal

        return cls.from_deal(deal(variant, deal_number))

    def copy(self, history: bool = True) -> "Game":
        """An independent copy; without ``history`` it cannot undo past this point."""
        g = Game.__new__(Game)
        g.variant = self.variant
        g.tableau = [col[:] for col in self.tableau]
        g.hidden = self.hidden[:]
        g.waste = self.waste[:]
        g.stock = self.stock[:]
        g.foundations = self.foundations[:]
        g.pass_number = self.pass_number
        g.move_stack = self.move_stack[:] if history else []
        g._undo = self._undo[:] if history else []
        g._redo = self._redo[:] if history else []
        g._home = self._home
        g._pack_ok = self._pack_ok
        g._fidx = self._fidx
        g._group = self._group
        g._empty_rule = self._empty_rule
        g._empty_ok = self._empty_ok
        g._status = self._status
        g._view_memo = None
        return g

    # -------------------------------------------------------------- state
    @property
    def cards_home(self) -> int:
        """Cards on the foundations: the race's progress figure."""
        return self._home

    @property
    def total_cards(self) -> int:
        return self.variant.total_cards

    @property
    def move_count(self) -> int:
        return len(self.move_stack)

    @property
    def stock_count(self) -> int:
        return len(self.stock)

    @property
    def passes_left(self) -> int:
        """Times the waste may still be turned over."""
        return self.variant.stock_passes - self.pass_number

    def is_won(self) -> bool:
        return self._home == self.variant.total_cards

    def status(self) -> Status:
        """Won, blocked or playing; remembered until the next ``push`` or ``pop``.

        Why remembered: the server asks once for the player's status and once
        more for the board it sends back, and once the stock is empty each
        answer is a whole legal-move generation.
        """
        status = self._status
        if status is None:
            if self._home == self.variant.total_cards:
                status = Status.WON
            elif not self.has_legal_move():
                status = Status.BLOCKED
            else:
                status = Status.PLAYING
            self._status = status
        return status

    def stock_in_draw_order(self) -> list[Card]:
        """The stock, next card first (the server's secret)."""
        return self.stock[::-1]

    def foundation_ready(self, card: Card) -> int:
        """Index of the first foundation that takes ``card``, or -1."""
        need = card % 13
        found = self.foundations
        for f in self._fidx[card // 13]:
            if found[f] == need:
                return f
        return -1

    # ----------------------------------------------------------- legality
    def reason(self, move: Move) -> IllegalReason | None:
        """Why ``move`` is illegal here, or ``None`` when it is legal."""
        if self._home == self.variant.total_cards:
            return IllegalReason.GAME_OVER
        src, dst, count = move
        ncols = len(self.tableau)
        if src == FOUNDATION:
            return IllegalReason.FOUNDATION_CARDS_NEVER_MOVE
        if src == STOCK:
            if dst != WASTE:
                return IllegalReason.STOCK_GOES_TO_WASTE
            return None if self.stock else IllegalReason.STOCK_EMPTY
        if dst == STOCK:
            if src != WASTE:
                return IllegalReason.NOT_A_TARGET
            if self.stock:
                return IllegalReason.STOCK_NOT_EMPTY
            if self.pass_number >= self.variant.stock_passes:
                return IllegalReason.NO_SECOND_PASS
            return None if self.waste else IllegalReason.SOURCE_EMPTY
        if dst == WASTE:
            return IllegalReason.NOT_A_TARGET
        if src != WASTE and not 0 <= src < ncols:
            return IllegalReason.NO_SUCH_COLUMN
        if dst != FOUNDATION and not 0 <= dst < ncols:
            return IllegalReason.NO_SUCH_COLUMN
        if src == dst:
            return IllegalReason.SAME_COLUMN
        if src == WASTE:
            if not self.waste:
                return IllegalReason.SOURCE_EMPTY
            if count != 1:
                return IllegalReason.GROUP_MOVE_NOT_ALLOWED
            card = self.waste[-1]
        else:
            col = self.tableau[src]
            if not col:
                return IllegalReason.SOURCE_EMPTY
            if count != 1:
                r = self._group_reason(src, count)
                if r is not None:
                    return r
            elif len(col) <= self.hidden[src]:
                return IllegalReason.FACE_DOWN
            card = col[-count]
        if dst == FOUNDATION:
            if count != 1:
                return IllegalReason.GROUP_MOVE_NOT_ALLOWED
            return None if self.foundation_ready(card) >= 0 else IllegalReason.FOUNDATION_NOT_READY
        target = self.tableau[dst]
        if not target:
            rule = self._empty_rule
            if rule is EmptyColumn.ANY:
                return None
            if rule is EmptyColumn.KING_ONLY:
                return None if card % 13 == _KING_INDEX else IllegalReason.EMPTY_COLUMN_KING_ONLY
            return IllegalReason.EMPTY_COLUMN_CLOSED
        top = target[-1]
        if top in self._pack_ok[card]:
            return None
        if top % 13 != card % 13 + 1:
            return IllegalReason.NOT_ONE_RANK_LOWER
        return IllegalReason.WRONG_SUIT

    def _group_reason(self, src: int, count: int) -> IllegalReason | None:
        if count < 1:
            return IllegalReason.NOT_A_RUN
        if self._group is GroupMoves.NONE:
            return IllegalReason.GROUP_MOVE_NOT_ALLOWED
        col = self.tableau[src]
        if count > len(col):
            return IllegalReason.RUN_TOO_LONG
        if count > len(col) - self.hidden[src]:
            return IllegalReason.FACE_DOWN
        if not self._is_run(col, len(col) - count):
            return IllegalReason.NOT_A_RUN
        return None

    def _is_run(self, col: list[Card], start: int) -> bool:
        """Whether ``col[start:]`` may move as a unit under this variant's group rule."""
        same_suit = self._group is GroupMoves.SAME_SUIT_RUN
        ok = self._pack_ok
        for i in range(start, len(col) - 1):
            lower, upper = col[i + 1], col[i]
            if same_suit:
                if upper != lower + 1 or lower % 13 == _KING_INDEX:
                    return False
            elif upper not in ok[lower]:
                return False
        return True

    def is_legal(self, move: Move) -> bool:
        return self.reason(move) is None

    def __contains__(self, move: Move) -> bool:
        return self.reason(move) is None

    # --------------------------------------------------------- applying
    def play_checked(self, move: Move) -> IllegalReason | None:
        """Play ``move`` and return ``None`` if it is legal, else return why and change nothing.

        The server's entry point: one legality check per move (asking
        :meth:`reason` and then :meth:`push` checks twice), and a refusal is
        a value, not an exception, since racers' refused moves are routine.
        """
        why = self.reason(move)
        if why is None:
            self._apply(move)
            redo = self._redo
            if redo:
                if redo[-1] == move:
                    redo.pop()
                else:
                    redo.clear()
        return why

    def push(self, move: Move) -> None:
        """Play ``move``; an illegal one raises :class:`IllegalMove` and changes nothing."""
        why = self.play_checked(move)
        if why is not None:
            raise IllegalMove(move, why)

    def push_text(self, text: str) -> Move:
        """Parse and play one move of the notation."""
        move = Move.parse(text)
        self.push(move)
        return move

    def _apply(self, move: Move) -> None:
        """Apply a move already known to be legal."""
        src, dst, count = move
        info = 0
        if src == STOCK:
            n = min(self.variant.draw_count, len(self.stock))
            for _ in range(n):
                self.waste.append(self.stock.pop())
            info = n
        elif dst == STOCK:
            self.stock = self.waste[::-1]
            self.waste = []
            self.pass_number += 1
        else:
            if src == WASTE:
                cards = [self.waste.pop()]
            else:
                col = self.tableau[src]
                if count == 1:
                    cards = [col.pop()]
                else:
                    cards = col[-count:]
                    del col[-count:]
            if dst == FOUNDATION:
                card = cards[0]
                f = self.foundation_ready(card)
                self.foundations[f] += 1
                self._home += 1
                info = f
            else:
                self.tableau[dst].extend(cards)
        flipped = False
        if src < MAX_COLUMNS:
            h = self.hidden[src]
            if h and len(self.tableau[src]) == h:
                self.hidden[src] = h - 1
                flipped = True
        self.move_stack.append(move)
        self._undo.append((info, flipped))
        self._status = None

    def pop(self) -> Move:
        """Take back the last move and return it; it becomes redoable."""
        if not self.move_stack:
            raise IllegalMove(None, IllegalReason.NOTHING_TO_UNDO)
        move = self.move_stack.pop()
        info, flipped = self._undo.pop()
        src, dst, count = move
        if flipped:
            self.hidden[src] += 1
        if src == STOCK:
            for _ in range(info):
                self.stock.append(self.waste.pop())
        elif dst == STOCK:
            self.waste = self.stock[::-1]
            self.stock = []
            self.pass_number -= 1
        else:
            if dst == FOUNDATION:
                f = info
                rank = self.foundations[f]
                self.foundations[f] = rank - 1
                self._home -= 1
                cards = [(f % 4) * 13 + rank - 1]
            else:
                col = self.tableau[dst]
                cards = col[-count:]
                del col[-count:]
            if src == WASTE:
                self.waste.extend(cards)
            else:
                self.tableau[src].extend(cards)
        self._redo.append(move)
        self._status = None
        return move

    def redo(self) -> Move:
        """Play again the last move taken back."""
        if not self._redo:
            raise IllegalMove(None, IllegalReason.NOTHING_TO_REDO)
        move = self._redo[-1]
        self.push(move)
        return move

    @property
    def redo_stack(self) -> list[Move]:
        """Moves taken back, most recent last (a new different move clears it)."""
        return list(self._redo)

    def peek(self) -> Move | None:
        return self.move_stack[-1] if self.move_stack else None

    # ---------------------------------------------------- move generation
    def legal_moves(self) -> list[Move]:
        """Every legal move, in a fixed order: foundations, columns, waste, stock."""
        if self._home == self.variant.total_cards:
            return []
        moves: list[Move] = []
        tab = self.tableau
        ncols = len(tab)
        ok_table = self._pack_ok
        empty_table = self._empty_ok
        tops = [col[-1] if col else -1 for col in tab]
        for s, card in self._sources(tops):
            row = _MOVE[s]
            if self.foundation_ready(card) >= 0:
                moves.append(row[_TO_F])
            ok = ok_table[card]
            empty_ok = empty_table[card]
            for d in range(ncols):
                if d == s:
                    continue
                t = tops[d]
                if t < 0:
                    if empty_ok:
                        moves.append(row[d])
                elif t in ok:
                    moves.append(row[d])
        if self._group is not GroupMoves.NONE:
            moves.extend(self._group_moves(tops))
        if self.stock:
            moves.append(DRAW)
        elif self.waste and self.pass_number < self.variant.stock_passes:
            moves.append(REDEAL)
        return moves

    def _sources(self, tops: list[int]) -> list[tuple[int, Card]]:
        """The places a single card may leave, with that card: face-up column tops, then the waste's top."""
        tab, hidden = self.tableau, self.hidden
        sources = [(s, tops[s]) for s in range(len(tab)) if tops[s] >= 0 and len(tab[s]) > hidden[s]]
        if self.waste:
            sources.append((WASTE, self.waste[-1]))
        return sources

    def _group_moves(self, tops: list[int]) -> Iterable[Move]:
        tab = self.tableau
        for s, col in enumerate(tab):
            face_up = len(col) - self.hidden[s]
            count = 2
            while count <= face_up and self._is_run(col, len(col) - count):
                base = col[-count]
                ok = self._pack_ok[base]
                empty_ok = self._empty_ok[base]
                for d, t in enumerate(tops):
                    if d != s and ((t < 0 and empty_ok) or (t >= 0 and t in ok)):
                        yield Move(s, d, count)
                count += 1

    def has_legal_move(self) -> bool:
        """``bool(legal_moves())``, mostly without generating them.

        With a stock left a draw is legal. Without one (the last part of a
        game, where the server asks after every move), a single card that
        goes home or onto some column top or empty column proves a move with
        a few set operations; only when none does is the whole list made.
        """
        if self.stock:
            return True
        if self._home == self.variant.total_cards:
            return False
        if self.waste and self.pass_number < self.variant.stock_passes:
            return True  # the waste turns over
        tops = [col[-1] if col else -1 for col in self.tableau]
        empty = -1 in tops
        ok_table, empty_table = self._pack_ok, self._empty_ok
        for _, card in self._sources(tops):
            if self.foundation_ready(card) >= 0 or not ok_table[card].isdisjoint(tops):
                return True  # a card never packs on its own rank, so its own column is never the target
            if empty and empty_table[card]:
                return True  # a source column is not empty, so the empty one is another
        return bool(self.legal_moves())

    # ---------------------------------------------------------- text forms
    def position(self) -> str:
        """The whole position in the text notation (see ``shared.position``)."""
        from .position import position_text

        return position_text(self)

    @classmethod
    def from_position(cls, text: str) -> "Game":
        from .position import parse_position

        return parse_position(text)

    def to_bytes(self) -> bytes:
        from .position import position_bytes

        return position_bytes(self)

    @classmethod
    def from_bytes(cls, data: bytes) -> "Game":
        from .position import parse_position_bytes

        return parse_position_bytes(data)

    def view(self) -> "PlayerView":
        """What the player may see: everything but the stock's order."""
        from .view import player_view

        return player_view(self)

    def wire_view(self) -> "View":
        """The board as the protocol's ``View``, rewriting only what changed since the last call
        (``shared.view.wire_view``; ``View.of_game`` calls it)."""
        from .view import wire_view

        return wire_view(self)

    def same_position(self, other: "Game") -> bool:
        """Equal positions (history aside)."""
        return (
            self.variant == other.variant
            and self.tableau == other.tableau
            and self.hidden == other.hidden
            and self.waste == other.waste
            and self.stock == other.stock
            and self.foundations == other.foundations
            and self.pass_number == other.pass_number
        )

    def __repr__(self) -> str:
        return f"Game.from_position({self.position()!r})"

    def __str__(self) -> str:
        from .render import render_text

        return render_text(self.view())

    def foundation_cards(self) -> list[Card | None]:
        """The top card of each foundation, ``None`` where empty."""
        return [(i % 4) * 13 + r - 1 if r else None for i, r in enumerate(self.foundations)]


__all__ = ["Game", "Status", "ACE", "KING"]
