"""Numbered deals that match PySolFC's game numbers, in pure Python.

Why PySolFC: a player can type the same number into PySolFC (or any tool
that follows it, such as Shlomi Fish's ``pysol_cards``) and see the same
layout, and a deal number alone is enough to store, share and replay a race.

What PySolFC does for "game number N" of a Forty Thieves game (sources:
``pysollib/pysolrandom.py`` ``construct_random``, ``pysollib/game/__init__.py``
``createCards``/``shuffle``, ``pysollib/stack.py`` ``dealToStacks``,
``pysollib/games/fortythieves.py``, and ``pysol_cards/random.py`` which
recent PySolFC uses for its generators):

1. Cards are created pack by pack, suits in PySolFC's order clubs, spades,
   hearts, diamonds, ranks ace to king; card id = creation index.
2. ``N < 32000``: Microsoft's LCG (``LCRandom31``); otherwise the Mersenne
   Twister of Python's ``random.Random(N)`` (``MTRandom``).  PySolFC
   re-orders a 52-card list "MS style" before an LCG shuffle; with two or
   more packs that step does nothing.
3. Fisher-Yates from the end: for n = len-1 .. 1, j = randint(0, n), swap.
4. The list is the talon with its *last* element on top: dealing pops from
   the end.  ``dealRow`` gives one card to each column, left to right, so
   the tableau is dealt row by row; the stock keeps the rest, top first.
5. Forty Thieves then turns the top stock card to the waste; our engine
   starts with an empty waste, so that card is simply the first of ``stock``.

``docs/deals.md`` has the full description, pseudo-code and test vectors.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass

from shared.cards import ACE, CARDS_PER_PACK, Card, card_text
from shared.variants import Variant

MIN_DEAL = 1
"""Smallest deal number.  PySolFC answers "Invalid game number" for 0: its
LCG (``pysol_cards`` ``LCRandom31.setSeed``) only takes seeds from 1."""

MAX_DEAL = 10**20
"""Largest deal number: PySolFC's ``MTRandom.MAX_SEED`` (its random game
numbers lie below it and "next game" wraps after it)."""

LCG_LIMIT = 32000
"""Deal numbers below this use the LCG, as PySolFC's ``construct_random``
(``0 <= seed < 32000``) does; 32000 itself is a Mersenne Twister deal."""

DEALT_AS_RULES: frozenset[str] = frozenset({"forty-and-eight", "lucas"})
"""Variants whose PySolFC game of the same name lays the cards out differently
from ``rules.md``.  They use the same shuffle, dealt as ``rules.md`` says:
PySolFC's Forty and Eight (id 23) deals 8 x 4, ours 8 x 5; PySolFC's Lucas
(id 125) deals 13 x 4 with no aces out, ours moves the aces to the top the
way PySolFC's San Juan Hill does, puts them on the foundations and deals
13 x 3."""

# PySolFC suit index (clubs, spades, hearts, diamonds) -> shared.cards suit.
_PYSOL_SUIT_TO_OURS = (0, 3, 2, 1)


class DealNumberError(ValueError):
    """A deal number PySolFC would not accept (not an int, or out of range)."""


def pysol_card(card_id: int) -> Card:
    """Our card for PySolFC card id ``card_id`` (its creation index).

    Ids run pack by pack, 13 per suit, suits clubs, spades, hearts, diamonds.
    """
    suit, rank0 = divmod(card_id % CARDS_PER_PACK, 13)
    return _PYSOL_SUIT_TO_OURS[suit] * 13 + rank0


def check_deal_number(number: object) -> int:
    """Return ``number`` if it is a valid deal number, else raise DealNumberError."""
    if isinstance(number, bool) or not isinstance(number, int):
        raise DealNumberError(f"deal number must be a whole number, not {number!r}")
    if not MIN_DEAL <= number <= MAX_DEAL:
        raise DealNumberError(
            f"deal number {number} is out of range: deals run from {MIN_DEAL} to {MAX_DEAL} "
            "(PySolFC's game numbers)"
        )
    return number


def _ms_rearrange(ids: list[int]) -> list[int]:
    """PySolFC's "FreeCell mode" before an LCG shuffle: only a 52-card list is
    re-ordered (ace of clubs, diamonds, hearts, spades, then the twos, ...)."""
    if len(ids) != CARDS_PER_PACK:
        return ids
    return [ids[rank + offset] for rank in range(13) for offset in (0, 39, 26, 13)]


def _lcg_shuffle(ids: list[int], seed: int) -> None:
    """PySolFC's ``LCRandom31`` shuffle (Microsoft FreeCell's rand), in place.

    Only bits 16..30 of the state are used, so a 31-bit state is enough
    (PySolFC keeps 33 bits; the low 31 evolve identically).
    """
    state = seed
    for n in range(len(ids) - 1, 0, -1):
        state = (state * 214013 + 2531011) & 0x7FFFFFFF
        j = ((state >> 16) & 0x7FFF) % (n + 1)
        ids[n], ids[j] = ids[j], ids[n]


def _mt_shuffle(ids: list[int], seed: int) -> None:
    """PySolFC's ``MTRandom`` shuffle, in place.

    ``random.Random(int)`` seeds MT19937 by ``init_by_array`` over the 32-bit
    words of the number, the same in every CPython 2.x/3.x.  The index is
    ``int(random() * (n + 1))`` (``RandomBase.randint``), *not* Python 3's
    ``random.shuffle``, which draws indices differently.
    """
    rng = random.Random(seed)
    for n in range(len(ids) - 1, 0, -1):
        j = int(rng.random() * (n + 1))
        ids[n], ids[j] = ids[j], ids[n]


def shuffled_ids(packs: int, number: int) -> list[int]:
    """PySolFC card ids of the shuffled talon, bottom first: the *last* id is
    the first card dealt.  See :func:`pysol_card` for the id numbering."""
    check_deal_number(number)
    if packs < 1:
        raise ValueError(f"packs must be at least 1, not {packs}")
    ids = list(range(packs * CARDS_PER_PACK))
    if number < LCG_LIMIT:
        ids = _ms_rearrange(ids)
        _lcg_shuffle(ids, number)
    else:
        _mt_shuffle(ids, number)
    return ids


def shuffled_cards(packs: int, number: int) -> list[Card]:
    """The whole shuffled talon as PySolFC holds it, bottom first.

    The last card is the top of the talon and is dealt first (to column 0);
    ``shuffled_cards(...)[::-1]`` is the dealing order.
    """
    return [pysol_card(i) for i in shuffled_ids(packs, number)]


def _aces_to_top(ids: list[int]) -> list[int]:
    """PySolFC's ``_shuffleHookMoveToTop(cards, lambda c: (c.rank == ACE, c.suit))``.

    The aces leave their places and go on top of the talon, ordered so that
    they come off clubs, spades, hearts, diamonds (the foundations' order);
    two aces of a suit keep their relative order (the later one is dealt first).
    """
    rest = [i for i in ids if i % 13 != ACE - 1]
    aces = [i for i in ids if i % 13 == ACE - 1]
    aces.sort(key=lambda i: (i % CARDS_PER_PACK) // 13, reverse=True)  # stable
    return rest + aces


@dataclass(frozen=True)
class Deal:
    """One numbered deal of one variant: where every card starts."""

    variant: Variant
    number: int
    tableau: tuple[tuple[Card, ...], ...]
    """One tuple per column, left to right; each bottom card first."""
    stock: tuple[Card, ...]
    """In drawing order: the first card is the first one turned to the waste."""
    foundations: tuple[Card, ...] = ()
    """Cards dealt straight to the foundations (Lucas: the eight aces), else ()."""

    def to_json(self) -> dict[str, object]:
        """Plain JSON form; ``foundations`` only appears when cards start there."""
        out: dict[str, object] = {
            "variant": self.variant.key,
            "deal": self.number,
            "tableau": [[card_text(c) for c in col] for col in self.tableau],
            "stock": [card_text(c) for c in self.stock],
        }
        if self.foundations:
            out["foundations"] = [card_text(c) for c in self.foundations]
        return out


def deal(variant: Variant, number: int) -> Deal:
    """Deal ``number`` of ``variant``: PySolFC's game ``number`` of the same game.

    Order: (aces to the foundations when ``aces_first``), then
    ``cards_per_column`` rows of one card per column left to right, then the
    rest to the stock.  Variants in :data:`DEALT_AS_RULES` keep PySolFC's
    shuffle but follow ``rules.md``'s layout.
    """
    ids = shuffled_ids(variant.packs, check_deal_number(number))
    if variant.aces_first:
        ids = _aces_to_top(ids)
    order = [pysol_card(i) for i in reversed(ids)]
    pos = variant.foundations if variant.aces_first else 0
    foundations = tuple(order[:pos])
    columns: list[list[Card]] = [[] for _ in range(variant.columns)]
    for _ in range(variant.cards_per_column):
        for col in columns:
            col.append(order[pos])
            pos += 1
    return Deal(
        variant=variant,
        number=number,
        tableau=tuple(tuple(col) for col in columns),
        stock=tuple(order[pos:]),
        foundations=foundations,
    )


def commitment(variant: str, deal: int, salt: str) -> str:
    """The hash published when a race is made, binding the server to its secret deal before anyone
    plays it: the server computes it, ``thieves verify`` checks the revealed deal and salt against it."""
    return hashlib.sha256(f"{variant}|{deal}|{salt}".encode()).hexdigest()
