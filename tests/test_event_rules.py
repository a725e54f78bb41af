"""The events' pure rules: heats, matchpoints, tie-breaks, arena pairing and points."""

from __future__ import annotations

from server.events import arena
from shared import scoring
from shared.scoring import RoundResult
from server.store.events import ArenaState


def _r(account: str, status: str = "racing", home: int = 0, finish: int | None = None, at: int | None = None) -> RoundResult:
    return RoundResult(account, "r", 1, status, home, finish, at)


def test_heats_are_the_fewest_with_sizes_one_apart_dealt_down_the_order() -> None:
    assert scoring.draw_heats([str(i) for i in range(10)], 4) == [["0", "3", "6", "9"], ["1", "4", "7"], ["2", "5", "8"]]
    assert [len(h) for h in scoring.draw_heats([str(i) for i in range(30)], 10)] == [10, 10, 10]
    assert scoring.draw_heats(["a"], 8) == [["a"]] and scoring.draw_heats([], 8) == []


def test_matchpoints_follow_the_standings_rule_with_ties_and_no_shows() -> None:
    field = [_r("win", "finished", 104, finish=5000), _r("fast", "finished", 104, finish=4000),
             _r("on", "racing", 60, at=100), _r("quit", "gave_up", 60, at=50),
             _r("tie1", "racing", 10, at=7), _r("tie2", "racing", 10, at=7), _r("gone", scoring.NO_SHOW),
             _r("gone2", scoring.NO_SHOW)]
    mp = scoring.matchpoints(field)
    assert mp["fast"] == 14 and mp["win"] == 12
    assert mp["on"] > mp["quit"], "playing on beats giving up with the same cards home, whoever got there first"
    assert mp["tie1"] == mp["tie2"] == 2 * 2 + 1, "beat the two no-shows, tie each other"
    assert mp["gone"] == mp["gone2"] == 1


def test_event_ranks_by_points_then_cards_home_then_time_sharing_equal_places() -> None:
    totals = [scoring.Total("a", "a", 10, 50, 900), scoring.Total("b", "b", 10, 60, 999),
              scoring.Total("c", "c", 10, 60, 800), scoring.Total("d", "d", 10, 60, 800), scoring.Total("e", "e", 12, 0, 0)]
    assert [(rank, t.account) for rank, t in scoring.ranked(totals)] == [(1, "e"), (2, "c"), (2, "d"), (4, "b"), (5, "a")]


def test_arena_pairs_close_scores_and_not_the_same_pair_twice_in_a_row() -> None:
    waiting = [("a", ArenaState(points=9, last=["b"])), ("b", ArenaState(points=8, last=["a"])),
               ("c", ArenaState(points=1)), ("d", ArenaState(points=0)), ("e", ArenaState(points=5))]
    assert arena.pair(waiting, 2) == [["a", "e"], ["b", "c"]], "a and b just met: b swaps with the next"
    assert arena.pair([("a", ArenaState(last=["b"])), ("b", ArenaState(last=["a"]))], 2) == [["a", "b"]], \
        "with nobody else waiting they meet again"
    assert arena.pair(waiting, 3) == [["a", "b", "e"]]


def test_arena_points_win_two_tie_one_and_double_on_fire() -> None:
    states = {"hot": ArenaState(streak=2), "cold": ArenaState()}
    out = {o.account: o for o in arena.race_points([_r("hot", "racing", 5, at=1), _r("cold", "racing", 3, at=1)], states)}
    assert (out["hot"].points, out["hot"].won, out["cold"].points) == (4, True, 0)
    tie = {o.account: o.points for o in arena.race_points([_r("x", "gave_up", 2, at=3), _r("y", "gave_up", 2, at=3)], {})}
    assert tie == {"x": 1, "y": 1}
    four = {o.account: o.points for o in arena.race_points(
        [_r("p1", "finished", 104, finish=9), _r("p2", "racing", 50, at=1), _r("p3", "racing", 40, at=1),
         _r("p4", scoring.NO_SHOW)], {})}
    assert four == {"p1": 2, "p2": 1, "p3": 0, "p4": 0}
    after = arena.after_race(ArenaState(streak=2, points=4), arena.Outcome("hot", 0, False, True), 3, ["cold"])
    assert (after.streak, after.status, after.last) == (0, "waiting", ["cold"])
    gone = arena.after_race(ArenaState(), arena.Outcome("p4", 0, False, False), 0, [])
    assert gone.status == "paused"


from hypothesis import given, strategies as st  # noqa: E402

_statuses = st.sampled_from(["finished", "racing", "gave_up", scoring.NO_SHOW])


@given(st.lists(st.tuples(_statuses, st.integers(0, 3), st.integers(0, 3), st.integers(0, 3)), max_size=30))
def test_matchpoints_by_sorting_equal_the_pairwise_definition(rows: list[tuple[str, int, int, int]]) -> None:
    field = [RoundResult(f"e{i}", "r", 1, status, home, finish, at) for i, (status, home, finish, at) in enumerate(rows)]
    keys = {r.account: scoring.place_key(r) for r in field}
    pairwise = {r.account: sum(2 if keys[r.account] < keys[o.account] else 1 if keys[r.account] == keys[o.account]
                               else 0 for o in field if o.account != r.account) for r in field}
    assert scoring.matchpoints(field) == pairwise
    assert sum(pairwise.values()) == len(field) * (len(field) - 1), "every pair shares out 2 points"
