"""Cards as small integers, and their two-character text form.

The rules never look at which pack a card came from, so the two (or three,
or four) copies of the seven of hearts are the same value here. A card is an
``int`` from 0 to 51: ``suit * 13 + rank - 1`` with suits in the order
clubs, diamonds, hearts, spades. Integers keep the engine's hot paths cheap
(list operations, no attribute look-ups); the helpers below give them names.

Text form: rank ``A23456789TJQK`` then suit ``cdhs``, e.g. ``"Th"``, ``"As"``.
"""

from __future__ import annotations

from typing import Iterable

RANKS = "A23456789TJQK"
SUITS = "cdhs"
SUIT_NAMES = ("clubs", "diamonds", "hearts", "spades")
SUIT_SYMBOLS = "♣♦♥♠"
CLUBS, DIAMONDS, HEARTS, SPADES = range(4)
ACE, KING = 1, 13
CARDS_PER_PACK = 52

Card = int
"""A card value, 0..51 (see the module docstring)."""


class CardParseError(ValueError):
    """Text that is not a card (for example ``"1h"`` or ``"Tx"``)."""


def make_card(rank: int, suit: int) -> Card:
    """The card of ``rank`` (1 = ace .. 13 = king) and ``suit`` (0..3)."""
    if not (ACE <= rank <= KING and 0 <= suit < 4):
        raise ValueError(f"no card has rank {rank} and suit {suit}")
    return suit * 13 + rank - 1


def rank_of(card: Card) -> int:
    """1 for an ace up to 13 for a king."""
    return card % 13 + 1


def suit_of(card: Card) -> int:
    """0 clubs, 1 diamonds, 2 hearts, 3 spades."""
    return card // 13


def is_red(card: Card) -> bool:
    """Diamonds and hearts are red; alternate-colour packing needs this."""
    return 13 <= card < 39


def card_text(card: Card) -> str:
    """Two characters, rank then suit: ``"Th"``."""
    return RANKS[card % 13] + SUITS[card // 13]


CARD_TEXTS: tuple[str, ...] = tuple(RANKS[c % 13] + SUITS[c // 13] for c in range(52))
"""``card_text`` of every card, by card: for loops over whole boards (a lookup, not a call, per card)."""


def card_pretty(card: Card) -> str:
    """Rank and suit symbol for people: ``"10♥"`` is written ``"T♥"``."""
    return RANKS[card % 13] + SUIT_SYMBOLS[card // 13]


_RANK_INDEX = {r: i for i, r in enumerate(RANKS)}
_SUIT_INDEX = {s: i for i, s in enumerate(SUITS)}


def parse_card(text: str) -> Card:
    """Read ``"Th"``; rank letters are upper or lower case, ``10`` is accepted for ``T``."""
    t = text.strip()
    if len(t) == 3 and t[:2] == "10":
        t = "T" + t[2]
    if len(t) != 2:
        raise CardParseError(f"not a card: {text!r} (expected rank A23456789TJQK then suit cdhs, like 'Th')")
    r = _RANK_INDEX.get(t[0].upper())
    s = _SUIT_INDEX.get(t[1].lower())
    if r is None or s is None:
        raise CardParseError(f"not a card: {text!r} (expected rank A23456789TJQK then suit cdhs, like 'Th')")
    return s * 13 + r


def cards_text(cards: Iterable[Card]) -> str:
    """Cards written back to back, e.g. ``"Th9hAs"``."""
    return "".join(RANKS[c % 13] + SUITS[c // 13] for c in cards)


def parse_cards(text: str) -> list[Card]:
    """The inverse of :func:`cards_text`."""
    if len(text) % 2:
        raise CardParseError(f"not a run of two-character cards: {text!r}")
    return [parse_card(text[i : i + 2]) for i in range(0, len(text), 2)]


def full_packs(packs: int) -> list[Card]:
    """Every card of ``packs`` packs, each pack in card order."""
    return [c for _ in range(packs) for c in range(CARDS_PER_PACK)]
