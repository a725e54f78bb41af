"""The player view: what a racer may see of a game, and nothing more.

The server sends only this. It carries the tableau (face-down cards as
``None``), the waste, the foundations and the *number* of stock cards,
never their order: knowing the order would let a player plan draws that
the other racers must discover.

:func:`wire_view` is the same board as the protocol's ``View``, built for
the server's every acknowledged move from what changed since the game's
last one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import msgspec

from .cards import CARD_TEXTS, card_text, cards_text, parse_card, rank_of
from .engine import Game
from .protocol import View

FACE_DOWN_TEXT = "??"
"""A face-down card on the wire."""
_SHOWN_TEXT: dict[int | None, str] = {None: FACE_DOWN_TEXT, **dict(enumerate(CARD_TEXTS))}


@dataclass(frozen=True)
class PlayerView:
    variant: str
    tableau: tuple[tuple[int | None, ...], ...]
    waste: tuple[int, ...]
    foundations: tuple[int, ...]
    stock_count: int
    pass_number: int
    stock_passes: int
    move_count: int
    cards_home: int
    total_cards: int
    status: str
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    def foundation_cards(self) -> list[int | None]:
        return [(i % 4) * 13 + r - 1 if r else None for i, r in enumerate(self.foundations)]

    def to_dict(self) -> dict[str, Any]:
        """Plain data for the wire: cards as text (``"Th"``), face-down cards as ``"??"``."""
        return {
            "variant": self.variant,
            "tableau": [[_SHOWN_TEXT[c] for c in col] for col in self.tableau],
            "waste": [CARD_TEXTS[c] for c in self.waste],
            "foundations": _foundation_texts(self.foundations),
            "stock": self.stock_count,
            "pass": self.pass_number,
            "passes": self.stock_passes,
            "moves": self.move_count,
            "home": self.cards_home,
            "total": self.total_cards,
            "status": self.status,
        }

    @classmethod
    def of_wire(cls, view: View) -> "PlayerView":
        """A board received over the wire (the client's side); here, not on ``View``, so the protocol
        imports nothing of the rules."""
        return cls.from_dict(msgspec.to_builtins(view))

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "PlayerView":
        """Rebuild a view received over the wire (the client's side)."""
        found = []
        for f in d["foundations"]:
            found.append(rank_of(parse_card(f)) if f else 0)
        return cls(
            variant=d["variant"],
            tableau=tuple(tuple(None if c == FACE_DOWN_TEXT else parse_card(c) for c in col) for col in d["tableau"]),
            waste=tuple(parse_card(c) for c in d["waste"]),
            foundations=tuple(found),
            stock_count=int(d["stock"]),
            pass_number=int(d["pass"]),
            stock_passes=int(d["passes"]),
            move_count=int(d["moves"]),
            cards_home=int(d["home"]),
            total_cards=int(d["total"]),
            status=str(d["status"]),
        )

    def text(self) -> str:
        """The position notation with the stock written ``#N`` (count only)."""
        found = ",".join(card_text(c) if c is not None else "-" for c in self.foundation_cards())
        cols = []
        for col in self.tableau:
            down = sum(1 for c in col if c is None)
            up = cards_text(c for c in col if c is not None)
            cols.append(("??" * down + "|" if down else "") + up if col else "-")
        waste = cards_text(self.waste) if self.waste else "-"
        return f"{self.variant} {self.pass_number} {found} {'/'.join(cols)} {waste} #{self.stock_count}"


def player_view(game: Game) -> PlayerView:
    """The view of ``game`` that its player may see."""
    tableau = tuple(
        tuple([*([None] * h), *col[h:]]) for col, h in zip(game.tableau, game.hidden)
    )
    return PlayerView(
        variant=game.variant.key,
        tableau=tableau,
        waste=tuple(game.waste),
        foundations=tuple(game.foundations),
        stock_count=len(game.stock),
        pass_number=game.pass_number,
        stock_passes=game.variant.stock_passes,
        move_count=game.move_count,
        cards_home=game.cards_home,
        total_cards=game.total_cards,
        status=game.status().value,
    )


def _foundation_texts(foundations: Sequence[int]) -> list[str | None]:
    """The wire form of the foundations: each one's top card as text, ``None`` when empty."""
    return [CARD_TEXTS[(i % 4) * 13 + r - 1] if r else None for i, r in enumerate(foundations)]


def _texts(cards: list[int], hidden: int, old: list[int], old_hidden: int, old_texts: list[str]) -> list[str]:
    """The wire texts of a pile (its first ``hidden`` cards face down), made from its last ones where it allows.

    A move adds cards to a pile's top or takes them off, so the old texts
    are reused whenever the pile still starts with the cards they were made
    from, under the same face-down count; anything else is written anew.
    Always a new list: lists already handed out never change.
    """
    n, m = len(old), len(cards)
    if hidden == old_hidden and min(n, m) >= hidden:  # the same cards at the same places show the same
        if m >= n:
            if cards[:n] == old:
                return old_texts + [CARD_TEXTS[c] for c in cards[n:]]
        elif cards == old[:m]:
            return old_texts[:m]
    return [FACE_DOWN_TEXT] * hidden + [CARD_TEXTS[c] for c in cards[hidden:]]


class _WireMemo:
    """A game's last wire board, with the cards each pile's texts were made from (see :func:`wire_view`).

    Every part is compared with the position before it is reused, so the
    memo is right however the game got where it is (moves, undos, several
    moves between two views); the last move only says where to look first.
    """

    __slots__ = ("columns", "hidden", "texts", "waste", "waste_texts", "foundations", "foundation_texts")

    def __init__(self, game: Game) -> None:
        n = len(game.tableau)
        self.columns: list[list[int]] = [[] for _ in range(n)]
        self.hidden: list[int] = [0] * n
        self.texts: list[list[str]] = [[] for _ in range(n)]
        self.waste: list[int] = []
        self.waste_texts: list[str] = []
        self.foundations: list[int] = []
        self.foundation_texts: list[str | None] = []

    def update(self, game: Game) -> None:
        """Bring every part up to ``game``'s position, rewriting only the piles that differ."""
        tab, hidden = game.tableau, game.hidden
        if self.columns != tab or self.hidden != hidden:
            last = game.move_stack[-1] if game.move_stack else None
            if last is not None:
                for i in (last.src, last.dst):
                    if i < len(tab):
                        self._column(game, i)
            if self.columns != tab or self.hidden != hidden:
                for i in range(len(tab)):
                    if self.columns[i] != tab[i] or self.hidden[i] != hidden[i]:
                        self._column(game, i)
        waste = game.waste
        if self.waste != waste:
            self.waste_texts = _texts(waste, 0, self.waste, 0, self.waste_texts)
            self.waste = waste[:]
        if self.foundations != game.foundations:
            self.foundations = game.foundations[:]
            self.foundation_texts = _foundation_texts(game.foundations)

    def _column(self, game: Game, i: int) -> None:
        col, h = game.tableau[i], game.hidden[i]
        self.texts[i] = _texts(col, h, self.columns[i], self.hidden[i], self.texts[i])
        self.columns[i] = col[:]
        self.hidden[i] = h


def wire_view(game: Game) -> View:
    """The player's board as the protocol's :class:`~shared.protocol.View`: equal to
    ``View.from_player_view(game.view())``, so encoded to the same bytes, for a fraction of its work.

    Why: the server sends this board with every acknowledged move. Only the
    piles that changed since the game's last wire view are written again
    (most moves change one or two columns, a draw only the waste), and the
    status is the game's remembered one. The pile lists are shared with
    the game's later views until that pile changes: read them, encode
    them, never change them.
    """
    memo = game._view_memo
    if not isinstance(memo, _WireMemo) or len(memo.columns) != len(game.tableau):
        memo = game._view_memo = _WireMemo(game)
    memo.update(game)
    variant = game.variant
    return View(
        variant=variant.key,
        tableau=memo.texts[:],
        waste=memo.waste_texts,
        foundations=memo.foundation_texts,
        stock=len(game.stock),
        pass_=game.pass_number,
        passes=variant.stock_passes,
        moves=len(game.move_stack),
        home=game.cards_home,
        total=variant.total_cards,
        status=game.status().value,
    )


__all__ = ["FACE_DOWN_TEXT", "PlayerView", "player_view", "wire_view"]
