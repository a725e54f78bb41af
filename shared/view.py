"""The player view: what a racer may see of a game, and nothing more.

The server sends only this. It carries the tableau (face-down cards as
``None``), the waste, the foundations and the *number* of stock cards,
never their order: knowing the order would let a player plan draws that
the other racers must discover.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .cards import card_text, cards_text, parse_card, rank_of
from .engine import Game


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
            "tableau": [[card_text(c) if c is not None else "??" for c in col] for col in self.tableau],
            "waste": [card_text(c) for c in self.waste],
            "foundations": [card_text(c) if c is not None else None for c in self.foundation_cards()],
            "stock": self.stock_count,
            "pass": self.pass_number,
            "passes": self.stock_passes,
            "moves": self.move_count,
            "home": self.cards_home,
            "total": self.total_cards,
            "status": self.status,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "PlayerView":
        """Rebuild a view received over the wire (the client's side)."""
        found = []
        for f in d["foundations"]:
            found.append(rank_of(parse_card(f)) if f else 0)
        return cls(
            variant=d["variant"],
            tableau=tuple(tuple(None if c == "??" else parse_card(c) for c in col) for col in d["tableau"]),
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
        tuple([None] * h + col[h:]) for col, h in zip(game.tableau, game.hidden)
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


__all__ = ["PlayerView", "player_view"]
