"""The dead-end test (``shared.solver.deadlock``) never calls a winnable position dead.

Every position it calls dead is checked against a plain exhaustive search
over the engine's own moves (written apart from the solver, in
``test_solver``), and the solver's verdicts with the cut in place are
compared with that search on positions where the cut fires mid-search.
"""

from __future__ import annotations

import random

import pytest

from shared.engine import Game
from shared.solver import Verdict, solve
from shared.solver import search as search_module
from shared.solver.board import Board
from shared.solver.deadlock import dead
from shared.variants import get_variant
from test_solver import assert_wins, plain_search, two_suit_position

VARIANT_KEYS = ("forty-thieves", "sixty-thieves", "forty-and-eight", "streets", "lucas", "limited")


def blocked_position(seed: int, sort_share: float = 0.6) -> Game:
    """Two to four suits from a high rank up, every column in use, most columns
    sorted low card at the bottom (so high cards block low ones of their suit),
    a few stock and waste cards."""
    rng = random.Random(seed)
    variant = get_variant(VARIANT_KEYS[seed % len(VARIANT_KEYS)])
    nsuits = rng.choice((2, 3, 4))
    low = 13 - rng.choice((3, 4, 5)) if nsuits == 4 else 13 - rng.choice((4, 5, 6))
    suits = rng.sample(range(4), nsuits)
    cards = [s * 13 + r for s in suits for r in range(low, 13)] * variant.packs
    rng.shuffle(cards)
    n_stock, n_waste = rng.randrange(0, 6), rng.randrange(0, 12)
    cols: list[list[int]] = [[] for _ in range(variant.columns)]
    for i, c in enumerate(cards[n_stock + n_waste:]):
        cols[i % variant.columns].append(c)
    for col in cols:
        if rng.random() < sort_share:
            col.sort(key=lambda c: c % 13)
    found = [13 if f % 4 not in suits else low for f in range(variant.foundations)]
    return Game(variant, cols, cards[:n_stock], cards[n_stock:n_stock + n_waste], found)


def settled(game: Game) -> Board:
    board = Board(game)
    board.play_safe()
    return board


def test_every_position_called_dead_is_lost_by_a_plain_search() -> None:
    fired = []
    for seed in range(3000):
        game = blocked_position(seed)
        if dead(settled(game)):
            assert plain_search(game, 20_000) is False, (seed, game.variant.key, game.position())
            fired.append(game.variant.key)
    # Not vacuous: the test fires often, and on the same-suit games the bench measures.
    assert len(fired) >= 15
    assert {"forty-thieves", "sixty-thieves", "streets", "forty-and-eight"} <= set(fired)


@pytest.fixture
def cut_counter(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts how often the search's dead-end test fires (the real test still decides)."""
    fired = [0]

    def counting(board: Board) -> bool:
        verdict = dead(board)
        fired[0] += verdict
        return verdict

    monkeypatch.setattr(search_module, "dead", counting)
    return fired


@pytest.mark.parametrize("strategy", ["depth-first", "best-first"])
def test_verdicts_agree_with_a_plain_search_where_the_cut_fires(strategy: str, cut_counter: list[int]) -> None:
    """Lost positions (two-suit Streets) and won ones (same-suit games) where
    the cut fires during the search: the verdict is the plain search's, and
    every won line replays through the engine."""
    games = [two_suit_position(seed) for seed in (25, 28, 133, 160, 193)]
    games += [blocked_position(seed, 0.9) for seed in (37, 74, 152, 235, 264, 289, 390)]
    fired_in = 0
    for game in games:
        truth = plain_search(game, 20_000)
        assert truth is not None
        cut_counter[0] = 0
        # The Python search, whose calls the counter sees; the compiled one must match it.
        result = solve(game, time_limit=None, node_limit=1_000_000, strategy=strategy, compiled=False)
        assert result.verdict is (Verdict.WON if truth else Verdict.UNWINNABLE), game.position()
        if truth:
            assert_wins(game, result)
        fired_in += cut_counter[0] > 0
        compiled = solve(game, time_limit=None, node_limit=1_000_000, strategy=strategy)
        assert (compiled.verdict, compiled.nodes, compiled.moves) == (result.verdict, result.nodes, result.moves)
    assert fired_in >= 8


def test_a_position_dead_at_the_start_is_unwinnable_at_once() -> None:
    game = next(g for g in map(blocked_position, range(3000)) if dead(settled(g)) and g.legal_moves())
    result = solve(game, time_limit=None)
    assert result.verdict is Verdict.UNWINNABLE and result.nodes == 1 and result.stopped_by is None


def test_a_loss_the_test_sees_only_mid_search_is_proven_by_exhausting_the_search() -> None:
    game = two_suit_position(193)
    assert not dead(settled(game))
    for strategy in ("depth-first", "best-first", "portfolio"):
        result = solve(game, time_limit=None, node_limit=100_000, strategy=strategy)
        assert result.verdict is Verdict.UNWINNABLE and result.nodes > 1 and result.stopped_by is None


def test_an_empty_column_or_group_moves_make_the_test_decline() -> None:
    game = next(g for g in map(blocked_position, range(3000)) if dead(settled(g)))
    board = settled(game)
    moved = next(i for i, col in enumerate(board.cols) if col)
    board.cols[moved] = b""  # the same position with one column cleared away
    assert not dead(board)
    josephine = Game(get_variant("josephine"), game.tableau[:10], (), game.waste, game.foundations[:8])
    assert not dead(Board(josephine))
