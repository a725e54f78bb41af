"""The compiled searches are the Python ones, node for node.

``shared/solver/_fastsearch.c`` claims to visit the same positions in the
same order as ``_depth_first`` and ``_best_first`` in ``search.py``; these tests hold it to that
on real deals of every variant, on random and scrambled positions, with and
without the dead-end test and waste caps, and check its lines in the engine.
"""

from __future__ import annotations

import random
import shutil

import pytest

from enginekit import play_randomly, scrambled_game
from shared.engine import Game
from shared.solver import Verdict, fast, solve
from shared.solver.board import Board
from shared.variants import FORTY_THIEVES, VARIANTS

pytestmark = pytest.mark.skipif(
    not fast.available() and not (shutil.which("cc") or shutil.which("gcc")),
    reason="no C compiler here, so the compiled search cannot be built",
)


def test_the_extension_is_built_where_a_compiler_is() -> None:
    # The install builds it whenever it can; a silent fallback would hide a broken build.
    assert fast.available()


def both(game: Game, strategy: str = "depth-first", **kw) -> tuple:
    """The same search run in Python and compiled: everything a caller sees."""
    out = []
    for compiled in (False, True):
        r = solve(game, time_limit=None, strategy=strategy, compiled=compiled, **kw)
        out.append((r.verdict, r.move_texts(), r.nodes, r.stored, r.best_home, r.stopped_by))
    return out[0], out[1]


@pytest.mark.parametrize("strategy", ["depth-first", "best-first"])
@pytest.mark.parametrize("key", sorted(VARIANTS))
def test_real_deals_search_the_same_positions(key: str, strategy: str) -> None:
    for number in (1, 2, 3):
        py, c = both(Game.new(VARIANTS[key], number), strategy, node_limit=6_000)
        assert py == c, (key, number)


@pytest.mark.parametrize("strategy", ["depth-first", "best-first"])
def test_random_and_scrambled_positions_search_the_same_positions(strategy: str) -> None:
    rng = random.Random(7)
    variants = list(VARIANTS.values())
    for i in range(36):
        v = variants[i % len(variants)]
        if i % 2:
            game = scrambled_game(v, rng)
        else:
            game = play_randomly(Game.new(v, rng.randrange(1, 10**6)), rng, rng.randrange(0, 150))
        if any(game.hidden):
            continue
        py, c = both(game, strategy, node_limit=3_000)
        assert py == c, (v.key, i)


def test_waste_caps_and_the_dead_end_switch_are_honoured_alike() -> None:
    from shared.solver.search import _depth_first

    game = Game.new(FORTY_THIEVES, 5)
    for cap, prune in ((20, False), (32, False), (None, True), (None, False)):
        runs = [
            _depth_first(game, None, 5_000, None, 50_000, lambda: 0.0, max_waste=cap, prune_dead=prune, compiled=c)
            for c in (False, True)
        ]
        a, b = ((r.verdict, r.nodes, r.stored, r.best_home, r.stopped_by) for r in runs)
        assert a == b, (cap, prune)


def test_compiled_wins_replay_in_the_engine_and_proofs_match() -> None:
    won = solve(Game.new(FORTY_THIEVES, 10), time_limit=None, node_limit=100_000, strategy="depth-first")
    assert won.verdict is Verdict.WON
    g = Game.new(FORTY_THIEVES, 10)
    for move in won.moves:
        g.push(move)
    assert g.is_won()
    # Deal 46 is proven lost (docs/solver.md): Python and C agree on the whole proof.
    py, c = both(Game.new(FORTY_THIEVES, 46), node_limit=400_000)
    assert c[0] is Verdict.UNWINNABLE and py == c
    best = solve(Game.new(FORTY_THIEVES, 46), time_limit=None, strategy="best-first")
    assert best.verdict is Verdict.UNWINNABLE and best.stopped_by is None


def test_the_budget_callback_stops_it_and_its_errors_propagate() -> None:
    board = Board(Game.new(FORTY_THIEVES, 1))
    calls = []

    def stop_at_third(nodes: int, depth: int, best: int) -> str | None:
        calls.append((nodes, depth, best))
        return "time" if len(calls) == 3 else None

    verdict, line, nodes, best, stored, stopped = fast.search(board, "depth-first", None, True, stop_at_third)
    assert (verdict, line, stopped) == ("unknown", [], "time")
    seen = [n for n, _, _ in calls]
    # Looked at once per 1,024 nodes or so (only after a position is expanded), as in Python.
    assert 1024 <= seen[0] < 1200 and all(1024 <= b - a < 1200 for a, b in zip(seen, seen[1:]))
    assert nodes == seen[-1]
    assert all(d >= 1 and 0 <= b <= 104 for _, d, b in calls)

    def broken(nodes: int, depth: int, best: int) -> None:
        raise KeyError("from the callback")

    with pytest.raises(KeyError, match="from the callback"):
        fast.search(board, "depth-first", None, True, broken)


def test_a_position_too_big_for_the_compiled_board_falls_back_to_python() -> None:
    board = Board(Game.new(FORTY_THIEVES, 1))
    board.cols[0] = bytes([12] * 60)  # sixty kings of clubs: no real game, but a clear limit
    with pytest.raises(OverflowError, match="column"):
        fast.search(board, "depth-first", None, True, lambda *a: None)
