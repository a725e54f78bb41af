"""The Forty Thieves family as values of one description.

Every game of the family is the same engine with its dials set; a new
relative is a new :class:`Variant` value, never a new class. The table in
``docs/rules.md`` is the source of the values below.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Packing(enum.Enum):
    """What a column card may be packed on (always one rank lower)."""

    SAME_SUIT = "same-suit"
    ALTERNATE_COLOUR = "alternate-colour"
    ANY_BUT_OWN_SUIT = "any-but-own-suit"
    ANY_SUIT = "any-suit"


class GroupMoves(enum.Enum):
    """Whether an ordered run may move as a unit, and which runs."""

    NONE = "none"
    SAME_SUIT_RUN = "same-suit-run"
    VALID_RUN = "valid-run"


class EmptyColumn(enum.Enum):
    """What an empty column accepts."""

    ANY = "any"
    KING_ONLY = "king-only"
    NOTHING = "nothing"


@dataclass(frozen=True)
class Variant:
    """One game of the family: its name and every dial of the rules.

    ``pysol_id`` is the PySolFC game id of the same game: deal N of this
    variant lays out the cards as that game's deal N, except for the
    variants in ``shared.deals.DEALT_AS_RULES``, which PySolFC lays out
    differently from ``rules.md`` (same shuffle, dealt as the rules say).
    """

    key: str
    name: str
    packs: int = 2
    columns: int = 10
    cards_per_column: int = 4
    face_down_per_column: int = 0
    packing: Packing = Packing.SAME_SUIT
    group_moves: GroupMoves = GroupMoves.NONE
    empty_column: EmptyColumn = EmptyColumn.ANY
    stock_passes: int = 1
    draw_count: int = 1
    aces_first: bool = False
    pysol_id: int | None = None
    notes: str = ""

    @property
    def total_cards(self) -> int:
        return self.packs * 52

    @property
    def foundations(self) -> int:
        return self.packs * 4

    @property
    def home_at_start(self) -> int:
        """Cards on the foundations before the first move (Lucas deals its aces there)."""
        return self.foundations if self.aces_first else 0

    @property
    def stock_size(self) -> int:
        """Cards left in the stock after the deal."""
        return self.total_cards - self.columns * self.cards_per_column - self.home_at_start

    def describe(self) -> str:
        """One line of the dials, as ``thieves variants`` shows them."""
        parts = [
            f"{self.packs} packs",
            f"{self.columns}x{self.cards_per_column}",
            f"packing {self.packing.value}",
            f"group moves {self.group_moves.value}",
            f"empty column takes {self.empty_column.value}",
            f"{self.stock_passes} stock pass{'es' if self.stock_passes != 1 else ''}",
            f"stock {self.stock_size}",
        ]
        if self.face_down_per_column:
            parts.append(f"{self.face_down_per_column} face down per column")
        if self.draw_count != 1:
            parts.append(f"draws {self.draw_count}")
        if self.aces_first:
            parts.append("aces start on the foundations")
        return ", ".join(parts)


FORTY_THIEVES = Variant("forty-thieves", "Forty Thieves", pysol_id=13)
SIXTY_THIEVES = Variant(
    "sixty-thieves", "Sixty Thieves", packs=3, columns=12, cards_per_column=5, pysol_id=775
)
LIMITED = Variant("limited", "Limited", columns=12, cards_per_column=3, pysol_id=228)
MARIA = Variant("maria", "Maria", columns=9, packing=Packing.ALTERNATE_COLOUR, pysol_id=73)
STREETS = Variant("streets", "Streets", packing=Packing.ALTERNATE_COLOUR, pysol_id=76)
JOSEPHINE = Variant("josephine", "Josephine", group_moves=GroupMoves.SAME_SUIT_RUN, pysol_id=462)
FORTY_AND_EIGHT = Variant(
    "forty-and-eight", "Forty and Eight", columns=8, cards_per_column=5, stock_passes=2, pysol_id=23
)
LUCAS = Variant("lucas", "Lucas", columns=13, cards_per_column=3, aces_first=True, pysol_id=125)
EIGHTY_THIEVES = Variant(
    "eighty-thieves", "Eighty Thieves", packs=4, columns=10, cards_per_column=8, pysol_id=776
)

VARIANTS: dict[str, Variant] = {
    v.key: v
    for v in (
        FORTY_THIEVES,
        SIXTY_THIEVES,
        LIMITED,
        MARIA,
        STREETS,
        JOSEPHINE,
        FORTY_AND_EIGHT,
        LUCAS,
        EIGHTY_THIEVES,
    )
}
DEFAULT_VARIANT = FORTY_THIEVES


class UnknownVariant(ValueError):
    """A variant key that names no game of the family."""


def get_variant(key: str) -> Variant:
    """Look a variant up by key; names and spaces are forgiven (``"Forty Thieves"``)."""
    norm = key.strip().lower().replace(" ", "-").replace("_", "-")
    try:
        return VARIANTS[norm]
    except KeyError:
        raise UnknownVariant(
            f"unknown variant {key!r}; known: {', '.join(VARIANTS)}"
        ) from None
