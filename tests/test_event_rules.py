"""The events' pure rules: heats, matchpoints, tie-breaks, arena pairing and points."""

from __future__ import annotations

import json

import msgspec
import pytest

from server.events import arena
from server.store import Line
from server.store.events import ArenaState
from shared import protocol as p
from shared import scoring, standings
from shared.scoring import RoundResult


def _r(account: str, status: p.RoundStatus = "racing", home: int = 0, finish: int | None = None, at: int | None = None) -> RoundResult:
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
    out = {o.account: o for o in scoring.race_points([_r("hot", "racing", 5, at=1), _r("cold", "racing", 3, at=1)], states)}
    assert (out["hot"].points, out["hot"].won, out["cold"].points) == (4, True, 0)
    tie = {o.account: o.points for o in scoring.race_points([_r("x", "gave_up", 2, at=3), _r("y", "gave_up", 2, at=3)], {})}
    assert tie == {"x": 1, "y": 1}
    four = {o.account: o for o in scoring.race_points(
        [_r("p1", "finished", 104, finish=9), _r("p2", "racing", 50, at=1), _r("p3", "racing", 40, at=1),
         _r("p4", scoring.NO_SHOW)], {})}
    assert {a: o.points for a, o in four.items()} == {"p1": 2, "p2": 1, "p3": 0, "p4": 0}
    assert [o.home for o in four.values()] == [104, 50, 40, 0], "a race's cards home go to the tally"
    after = arena.after_race(ArenaState(streak=2, points=4, home=7), scoring.Outcome("hot", 0, False, True, 3), ["cold"])
    assert (after.streak, after.points, after.home, after.races, after.status, after.last) == (0, 4, 10, 1, "waiting", ["cold"])
    gone = arena.after_race(ArenaState(races=1), scoring.Outcome("p4", 0, False, False), [])
    assert (gone.status, gone.races) == ("paused", 1), "a no-show is paused and its race does not count"


def test_the_docs_arena_example_and_its_ranking() -> None:
    """docs/events.md, "Arenas": ann wins twice (2 + 2), is on fire, wins a third (4), loses (0, the
    fire goes out), ties for first (1): 9. The same fold is the server's and verify's."""
    ann = scoring.ArenaTally()
    for place in ("win", "win", "win", "lose", "tie"):
        field = {"win": [_r("ann", "racing", 9, at=1), _r("bob", "racing", 3, at=1)],
                 "lose": [_r("ann", "racing", 1, at=1), _r("bob", "racing", 3, at=1)],
                 "tie": [_r("ann", "racing", 3, at=1), _r("bob", "racing", 3, at=1)]}[place]
        outcome = {o.account: o for o in scoring.race_points(field, {"ann": ann})}["ann"]
        ann = scoring.after_race(ann, outcome)
    assert (ann.points, ann.wins, ann.streak, ann.races, ann.on_fire) == (9, 3, 0, 5, False)
    tallies = {"ann": ann, "bob": scoring.ArenaTally(points=2, wins=1), "cy": scoring.ArenaTally(points=2, wins=1),
               "dan": scoring.ArenaTally(points=2, wins=1, home=5)}
    assert scoring.arena_ranked(tallies) == [(1, "ann"), (2, "dan"), (3, "bob"), (3, "cy")]


def test_an_absent_round_counts_the_whole_time_limit() -> None:
    """docs/events.md, "Standings and tie-breaks": any round not won, absent rounds included, counts the
    whole time limit, so not playing a round never beats playing it to the clock."""
    played = scoring.ScoredRound("ann", "r1", 1, "racing", 0, None, None, points2=0)
    late = scoring.ScoredRound("bob", "r2", 1, "racing", 0, None, None, points2=0)
    entrants = [p.EventStandingLine(rank=0, account=a, name=a, matchpoints=0, home=0, time_ms=0) for a in ("ann", "bob")]
    lines = scoring.standing_lines(entrants, {(1, "ann"): played, (2, "ann"): played, (2, "bob"): late}, 60_000)
    assert [(line.account, line.rank, line.time_ms) for line in lines] == [("ann", 1, 120_000), ("bob", 1, 120_000)]
    assert [r.status for r in lines[1].rounds] == ["absent", "racing"]


def test_a_scored_round_encodes_and_decodes_itself_and_refuses_a_stranger() -> None:
    r = scoring.ScoredRound("ann", "r1", 2, "gave_up", 12, None, 3400, points2=5)
    assert scoring.ScoredRound.decode(r.encode()) == r
    assert json.loads(r.encode())["status"] == "gave_up", "stored as JSON: redis-cli shows it"
    with pytest.raises(msgspec.ValidationError):
        scoring.ScoredRound.decode(r.encode().replace(b"gave_up", b"won_it"))


from hypothesis import given, strategies as st  # noqa: E402

_statuses: st.SearchStrategy[p.RoundStatus] = st.sampled_from(["finished", "racing", "gave_up", scoring.NO_SHOW])


@given(st.lists(st.tuples(_statuses, st.integers(0, 3), st.integers(0, 3), st.integers(0, 3)), max_size=30))
def test_matchpoints_by_sorting_equal_the_pairwise_definition(rows: list[tuple[p.RoundStatus, int, int, int]]) -> None:
    field = [RoundResult(f"e{i}", "r", 1, status, home, finish, at) for i, (status, home, finish, at) in enumerate(rows)]
    keys = {r.account: scoring.place_key(r) for r in field}
    pairwise = {r.account: sum(2 if keys[r.account] < keys[o.account] else 1 if keys[r.account] == keys[o.account]
                               else 0 for o in field if o.account != r.account) for r in field}
    assert scoring.matchpoints(field) == pairwise
    assert sum(pairwise.values()) == len(field) * (len(field) - 1), "every pair shares out 2 points"


_lines = st.lists(st.tuples(st.sampled_from(["racing", "blocked", "finished", "gave_up", "left"]), st.integers(0, 3),
                            st.integers(0, 3), st.integers(0, 3)), min_size=1, max_size=12)


@given(_lines, st.integers(0, 5))
def test_the_race_order_and_the_round_order_are_one_total_order(rows: list[tuple[str, int, int, int]], start: int) -> None:
    """A race's table (absolute times, 0 = never) and the round it scores (times from the heat's start)
    order and tie its racers alike; the order is total (seat last) and ties are symmetric."""
    lines = [Line(i, f"e{i}", status, home, 1, start + at if at else 0, start + fin if fin and status == "finished" else 0, 1)
             for i, (status, home, at, fin) in enumerate(rows)]
    results = {line.seat: scoring.result_at(line.name, "r", 1, line.status, line.home, line.finished_at, line.home_at, start)
               for line in lines}
    order = [line.seat for _, line in standings.ranked(lines)]
    assert sorted(order) == list(range(len(lines))), "every line has one place"
    for a in lines:
        for b in lines:
            assert standings.tied(a, b) == standings.tied(b, a)
            ra, rb = scoring.place_key(results[a.seat]), scoring.place_key(results[b.seat])
            assert standings.tied(a, b) == (ra == rb)
            assert (standings.merit(a) < standings.merit(b)) == (ra < rb)
            assert (standings.rank_key(a) == standings.rank_key(b)) == (a.seat == b.seat)
    ordered = [line for _, line in standings.ranked(lines)]
    ranks = standings.places(ordered)
    for i, line in enumerate(ordered):
        assert ranks[i] == 1 + sum(1 for o in lines if standings.merit(o) < standings.merit(line)), \
            "a shared place counts everyone strictly above"
