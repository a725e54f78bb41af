"""Deals must equal PySolFC's game numbers.

The reference is built here from ``pysol_cards`` (the generators recent
PySolFC imports) plus a literal emulation of PySolFC's ``Game.shuffle`` and
``FortyThieves.startGame`` (talon = list, top = last, ``dealRow`` pops one
card per column left to right, ``dealCards`` pops one to the waste), written
independently of ``shared/deals.py``.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pysol_cards.cards import Card as PCard
from pysol_cards.cards import createCards, ms_rearrange
from pysol_cards.deal_game import Game as PGame
from pysol_cards.random import LCRandom31, MTRandom, RandomBase
from pysol_cards.random import shuffle as pysol_cards_shuffle

from shared.cards import card_text, parse_card
from shared.deals import (
    DEALT_AS_RULES,
    LCG_LIMIT,
    MAX_DEAL,
    MIN_DEAL,
    Deal,
    DealNumberError,
    deal,
    shuffled_cards,
    shuffled_ids,
)
from shared.variants import VARIANTS

VECTORS = Path(__file__).parent / "data" / "deal_vectors.json"

# PySolFC pysollib/games/fortythieves.py: id -> (decks, rows, DEAL[1]); DEAL[0] is 0 for all.
PYSOLFC_GAMES = {
    13: (2, 10, 4),  # FortyThieves
    775: (3, 12, 5),  # SixtyThieves
    228: (2, 12, 3),  # Limited(BusyAces)
    73: (2, 9, 4),  # Maria(Streets)
    76: (2, 10, 4),  # Streets
    462: (2, 10, 4),  # Josephine
    23: (2, 8, 4),  # FortyAndEight: inherits DEAL = (0, 4)
    125: (2, 13, 4),  # Lucas(WaningMoon): 13 rows, DEAL = (0, 4), no aces out
    776: (4, 10, 8),  # EightyThieves
}

SAMPLE_NUMBERS = [
    *range(1, 41),
    *range(LCG_LIMIT - 10, LCG_LIMIT + 10),
    2**31 - 1,
    2**31,
    2**32,
    2**32 + 1,
    123456789,
    10**16,
    MAX_DEAL - 1,
    MAX_DEAL,
]


def _text(card: PCard) -> str:
    """pysol_cards card -> our text, by its own rank/suit fields (suits 'CSHD')."""
    return "A23456789TJQK"[card.rank - 1] + "CSHD"[card.suit].lower()


def pysolfc_talon(decks: int, number: int) -> list[PCard]:
    """PySolFC Game.shuffle(): construct_random + createCards + ms_rearrange for LCRandom31."""
    cards = createCards(decks)
    rng = LCRandom31(number) if 0 <= number < 32000 else MTRandom(number)
    if isinstance(rng, LCRandom31):
        cards = ms_rearrange(cards)
    rng.reset()
    rng.shuffle(cards)
    return cards


def pysolfc_start(pysol_id: int, number: int) -> tuple[list[list[str]], list[str]]:
    """PySolFC FortyThieves.startGame(): rows, then the waste card; returns
    (columns bottom first, waste + stock in drawing order)."""
    decks, nrows, ncards = PYSOLFC_GAMES[pysol_id]
    talon = pysolfc_talon(decks, number)
    rows: list[list[str]] = [[] for _ in range(nrows)]
    for _ in range(ncards):
        for row in rows:  # dealRow: one card per row stack, left to right
            row.append(_text(talon.pop()))
    waste = [_text(talon.pop())]  # dealCards(): top card to the waste
    return rows, waste + [_text(c) for c in reversed(talon)]


def texts(cards) -> list[str]:
    return [card_text(c) for c in cards]


# ---------------------------------------------------------------- shapes


@pytest.mark.parametrize("key", sorted(VARIANTS))
@pytest.mark.parametrize("number", [1, 2, 31999, 32000, 987654321, MAX_DEAL])
def test_counts_and_shapes(key: str, number: int) -> None:
    v = VARIANTS[key]
    d = deal(v, number)
    assert isinstance(d, Deal) and d.variant is v and d.number == number
    assert len(d.tableau) == v.columns
    assert all(len(col) == v.cards_per_column for col in d.tableau)
    assert len(d.stock) == v.stock_size
    assert len(d.foundations) == (v.foundations if v.aces_first else 0)
    if v.aces_first:
        assert all(c % 13 == 0 for c in d.foundations)
        assert not any(c % 13 == 0 for col in d.tableau for c in col)
        assert not any(c % 13 == 0 for c in d.stock)
    everything = [c for col in d.tableau for c in col] + list(d.stock) + list(d.foundations)
    assert len(everything) == v.total_cards
    assert Counter(everything) == Counter({c: v.packs for c in range(52)})


@pytest.mark.parametrize("packs", [1, 2, 3, 4])
def test_shuffled_cards_is_a_permutation(packs: int) -> None:
    for number in (1, 31999, 32000, 10**19):
        ids = shuffled_ids(packs, number)
        assert sorted(ids) == list(range(52 * packs))
        assert Counter(shuffled_cards(packs, number)) == Counter({c: packs for c in range(52)})


def test_to_json() -> None:
    d = deal(VARIANTS["forty-thieves"], 1)
    j = d.to_json()
    assert set(j) == {"variant", "deal", "tableau", "stock"}
    assert j["variant"] == "forty-thieves" and j["deal"] == 1
    assert j["tableau"] == [texts(col) for col in d.tableau]
    assert j["stock"] == texts(d.stock)
    assert [parse_card(t) for t in j["stock"]] == list(d.stock)
    json.dumps(j)
    lucas = deal(VARIANTS["lucas"], 1).to_json()
    assert lucas["foundations"] == ["Ac", "Ac", "As", "As", "Ah", "Ah", "Ad", "Ad"]


def test_deals_differ_and_repeat() -> None:
    v = VARIANTS["forty-thieves"]
    assert deal(v, 7) == deal(v, 7)
    assert len({deal(v, n).tableau for n in range(1, 50)}) == 49


# ---------------------------------------------------------------- bad numbers


@pytest.mark.parametrize("bad", [0, -1, -(10**30), MAX_DEAL + 1, 10**40, 1.0, 2.5, "7", None, True])
def test_bad_numbers(bad: object) -> None:
    with pytest.raises(DealNumberError) as info:
        deal(VARIANTS["forty-thieves"], bad)  # type: ignore[arg-type]
    assert isinstance(info.value, ValueError)
    assert "deal number" in str(info.value)
    with pytest.raises(DealNumberError):
        shuffled_cards(2, bad)  # type: ignore[arg-type]


def test_limits() -> None:
    assert MIN_DEAL == 1 and MAX_DEAL == 10**20 and LCG_LIMIT == 32000
    assert MAX_DEAL == MTRandom.MAX_SEED
    with pytest.raises(ValueError):  # PySolFC's own LCG refuses game 0 too
        LCRandom31(0)


# ---------------------------------------------------------------- against pysol_cards / PySolFC


@pytest.mark.parametrize("packs", [1, 2, 3, 4])
def test_shuffle_matches_pysol_cards_generators(packs: int) -> None:
    numbers = SAMPLE_NUMBERS + random.Random(packs).sample(range(LCG_LIMIT), 60)
    for number in numbers:
        if number == 0:
            continue
        assert shuffled_ids(packs, number) == [c.id for c in pysolfc_talon(packs, number)], number


def test_pysol_cards_shuffle_function_agrees_except_at_32000() -> None:
    """``pysol_cards.random.shuffle`` (used by make_pysol_freecell_board.py) picks
    the LCG for ``<= 32000``; PySolFC's construct_random for ``< 32000``. We follow
    PySolFC, so game 32000 is the only number where the two differ."""
    for number in [*range(1, 30), *range(31990, 32010), 10**12, MAX_DEAL]:
        theirs = [c.id for c in pysol_cards_shuffle(createCards(2), number, RandomBase.DEALS_PYSOLFC)]
        if number == 32000:
            assert theirs != shuffled_ids(2, number)
            assert shuffled_ids(2, number) == [c.id for c in pysolfc_talon(2, number)]
        else:
            assert theirs == shuffled_ids(2, number), number


def _check_against_pysolfc(key: str, number: int) -> None:
    v = VARIANTS[key]
    assert v.pysol_id in PYSOLFC_GAMES
    d = deal(v, number)
    ours_cols = [texts(col) for col in d.tableau]
    ours_stock = texts(d.stock)
    if key == "lucas":
        # rules.md Lucas: PySolFC's shuffle, San Juan Hill's aces-to-top hook
        # (implemented by pysol_cards), 8 aces to the foundations, 13 x 3.
        talon = pysolfc_talon(2, number)
        talon = PGame("freecell", 1, 1)._shuffleHookMoveToTop(talon, lambda c: (c.rank == 1, c.suit))
        found = [_text(talon.pop()) for _ in range(8)]
        assert found == texts(d.foundations) == ["Ac", "Ac", "As", "As", "Ah", "Ah", "Ad", "Ad"]
        rows: list[list[str]] = [[] for _ in range(13)]
        for _ in range(3):
            for row in rows:
                row.append(_text(talon.pop()))
        assert ours_cols == rows
        assert ours_stock == [_text(c) for c in reversed(talon)]
        # and its non-aces come in PySolFC Lucas's (id 125) dealing order
        cols125, stock125 = pysolfc_start(125, number)
        flat125 = [c for r in range(4) for col in cols125 for c in [col[r]]] + stock125
        flat_ours = [c for r in range(3) for col in ours_cols for c in [col[r]]] + ours_stock
        assert flat_ours == [c for c in flat125 if c[0] != "A"]
        return
    cols, stock = pysolfc_start(v.pysol_id, number)  # type: ignore[index]
    if key == "forty-and-eight":
        # PySolFC deals 8 x 4; rules.md deals a fifth row from the same talon.
        assert [col[:4] for col in ours_cols] == cols
        assert [col[4] for col in ours_cols] + ours_stock == stock
        return
    assert key not in DEALT_AS_RULES
    assert ours_cols == cols
    assert ours_stock == stock


@pytest.mark.parametrize("key", sorted(VARIANTS))
def test_every_variant_matches_pysolfc(key: str) -> None:
    for number in SAMPLE_NUMBERS:
        _check_against_pysolfc(key, number)


@pytest.mark.parametrize("key", sorted(VARIANTS))
def test_many_numbers_match_pysolfc(key: str) -> None:
    """300 LCG numbers and 300 Mersenne Twister numbers per variant."""
    rng = random.Random(key)
    for number in rng.sample(range(MIN_DEAL, LCG_LIMIT), 300):
        _check_against_pysolfc(key, number)
    for _ in range(300):
        _check_against_pysolfc(key, rng.randint(LCG_LIMIT, MAX_DEAL))


@settings(max_examples=60, deadline=None)
@given(key=st.sampled_from(sorted(VARIANTS)), number=st.integers(MIN_DEAL, MAX_DEAL))
def test_random_numbers_match_pysolfc(key: str, number: int) -> None:
    _check_against_pysolfc(key, number)


@settings(max_examples=60, deadline=None)
@given(key=st.sampled_from(sorted(VARIANTS)), number=st.integers(MIN_DEAL, LCG_LIMIT - 1))
def test_random_small_numbers_match_pysolfc(key: str, number: int) -> None:
    _check_against_pysolfc(key, number)


def test_dealt_as_rules_set() -> None:
    assert DEALT_AS_RULES == {"forty-and-eight", "lucas"}
    ids = {v.key: v.pysol_id for v in VARIANTS.values()}
    assert ids == {
        "forty-thieves": 13,
        "sixty-thieves": 775,
        "limited": 228,
        "maria": 73,
        "streets": 76,
        "josephine": 462,
        "forty-and-eight": 23,
        "lucas": 125,
        "eighty-thieves": 776,
    }


# ---------------------------------------------------------------- literal vectors


def test_vector_file() -> None:
    data = json.loads(VECTORS.read_text())
    seen = {(v["variant"], v["deal"]) for v in data["vectors"]}
    assert {("forty-thieves", n) for n in (1, 2, 31999, 32000, 123456789)} <= seen
    assert ("sixty-thieves", 1) in seen
    for vec in data["vectors"]:
        v = VARIANTS[vec["variant"]]
        assert deal(v, vec["deal"]).to_json() == vec
        _check_against_pysolfc(v.key, vec["deal"])
        if v.key not in DEALT_AS_RULES:  # straight from the emulation, no shared code
            cols, stock = pysolfc_start(v.pysol_id, vec["deal"])  # type: ignore[index]
            assert vec["tableau"] == cols and vec["stock"] == stock


def test_forty_thieves_vector_heads() -> None:
    """The first cards quoted in docs/deals.md."""
    v = VARIANTS["forty-thieves"]
    assert texts(deal(v, 1).tableau[0]) == ["3d", "As", "Kd", "7d"]
    assert texts(deal(v, 1).stock[:4]) == ["3s", "9c", "7d", "4s"]
    assert texts(deal(v, 32000).tableau[0]) == ["Kh", "3c", "7c", "7h"]


def _freecell_columns(packs: int, number: int, ncols: int, ncards: int) -> list[str]:
    order = shuffled_cards(packs, number)[::-1]
    cols: list[list[str]] = [[] for _ in range(ncols)]
    for i, c in enumerate(order[:ncards]):
        cols[i % ncols].append(card_text(c).upper())
    return [" ".join(col) for col in cols]


def test_microsoft_freecell_deal_1() -> None:
    """Independent vector: MS FreeCell deal #1, which PySolFC's FreeCell game 1 reproduces
    (published on Rosetta Code and many solvers; rows across the 8 cascades)."""
    rows = [
        "JD 2D 9H JC 5D 7H 7C 5H",
        "KD KC 9S 5S AD QC KH 3H",
        "2S KS 9D QD JS AS AH 3C",
        "4C 5C TS QH 4H AC 4D 7S",
        "3S TD 4S TH 8H 2C JH 7D",
        "6D 8S 8D QS 6C 3D 8C TC",
        "6S 9C 2H 6H",
    ]
    cols = [c.split() for c in _freecell_columns(1, 1, 8, 52)]
    assert [" ".join(col[r] for col in cols if r < len(col)) for r in range(7)] == rows


def test_pysol_cards_published_vectors() -> None:
    """Literal layouts from pysol_cards' own test-suite (make_pysol_freecell_board.py)."""
    ms24 = "4C 2C 9C 8C QS 4S 2H|5H QH 3C AC 3H 4H QD|QC 9S 6H 9H 3S KS 3D|5D 2S JC 5C JH 6D AS|2D KD TH TC TD 8D|7H JS KH TS KC 7C|AH 5S 6S AD 8H JD|7S 6C 7D 4D 8S 9D"
    assert _freecell_columns(1, 24, 8, 52) == ms24.split("|")
    f300 = "4S KD 6H 2D QC 4D AH|QS 7S 5C AS KC 6S 8H|TH JC 9S 2C 3D 4H 7D|5S 4C 8D 7C JD 8C JS|QH TS AC KS TC 5H|6C 9D 9H 2H JH 3C|9C 2S 8S 3H 6D QD|KH 3S TD 5D 7H AD"
    assert _freecell_columns(1, 300000000000, 8, 52) == f300.split("|")


def test_pysol_cards_binary_star_240000() -> None:
    """Two packs, Mersenne Twister: pysol_cards' published Binary Star deal 240000
    (make_pysol_freecell_board.py -F -t 240000 binary_star). Its deal_game takes
    the reversed talon, moves the first two cards that are an AS or a KH (in the
    version that made this vector both of them are the kings of hearts) out to
    the foundations and deals the other 102 round-robin to 17 piles."""
    expected = """5H 6H 5D QD 4H 4C
2S KS 5S 9D 4H 6C
KC QH 5D TS QD TH
JH QS QC 6H 7H 7H
7D 9D 2S JS TH AH
AD KD 2C 7S 6D JD
AH 8H 7C 3H 3S 8H
TD AC 4S 4S JC 7C
8S KS 9C 3C QC 9S
KC 7D TC JD AS 9C
2H 7S 6D 4D 9H 8C
QS 5H 5C 3D 6C TD
4C 5C TS 5S JS 3H
9S AC QH 2H 4D 3S
KD 8C 6S 6S 3D 3C
2D 8S JH 8D TC 9H
8D 2C AS JC AD 2D""".splitlines()
    order = [card_text(c).upper() for c in shuffled_cards(2, 240000)[::-1]]
    out = [i for i, t in enumerate(order) if t in ("AS", "KH")][:2]
    rest = [t for i, t in enumerate(order) if i not in out]
    assert [order[i] for i in out] == ["KH", "KH"]
    assert [" ".join(rest[c::17]) for c in range(17)] == expected


# ---------------------------------------------------------------- docs pseudo-code


def _mt_reference(seed: int, count: int) -> list[float]:
    """MT19937 exactly as docs/deals.md writes it, to prove the pseudo-code."""
    mt = [0] * 624
    mt[0] = 19650218
    for i in range(1, 624):
        mt[i] = (1812433253 * (mt[i - 1] ^ (mt[i - 1] >> 30)) + i) & 0xFFFFFFFF
    key = []
    n = seed
    while True:
        key.append(n & 0xFFFFFFFF)
        n >>= 32
        if not n:
            break
    i, j = 1, 0
    for _ in range(max(624, len(key))):
        mt[i] = ((mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1664525)) + key[j] + j) & 0xFFFFFFFF
        i, j = i + 1, j + 1
        if i >= 624:
            mt[0], i = mt[623], 1
        if j >= len(key):
            j = 0
    for _ in range(623):
        mt[i] = ((mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1566083941)) - i) & 0xFFFFFFFF
        i += 1
        if i >= 624:
            mt[0], i = mt[623], 1
    mt[0] = 0x80000000
    idx = 624

    def genrand() -> int:
        nonlocal idx
        if idx >= 624:
            for k in range(624):
                y = (mt[k] & 0x80000000) | (mt[(k + 1) % 624] & 0x7FFFFFFF)
                mt[k] = mt[(k + 397) % 624] ^ (y >> 1) ^ (0x9908B0DF if y & 1 else 0)
            idx = 0
        y = mt[idx]
        idx += 1
        y ^= y >> 11
        y ^= (y << 7) & 0x9D2C5680
        y ^= (y << 15) & 0xEFC60000
        return y ^ (y >> 18)

    return [((genrand() >> 5) * 67108864 + (genrand() >> 6)) / 9007199254740992 for _ in range(count)]


@pytest.mark.parametrize("seed", [32000, 123456789, 2**32 + 5, MAX_DEAL])
def test_documented_mt_matches_python_random(seed: int) -> None:
    rng = random.Random(seed)
    assert _mt_reference(seed, 5) == [rng.random() for _ in range(5)]


def test_documented_lcg() -> None:
    """The first LCG outputs for seed 1 (Microsoft's rand(): 41, 18467, 6334)."""
    state, outs = 1, []
    for _ in range(3):
        state = (state * 214013 + 2531011) & 0x7FFFFFFF
        outs.append((state >> 16) & 0x7FFF)
    assert outs == [41, 18467, 6334]
