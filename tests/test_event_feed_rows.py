"""The event feed's rows of a heat (server/events/feed.py ``_heat_rows``): a line the feed saw before
gives its row again, any other line a row of its own (unit level: pure, no server)."""

from __future__ import annotations

import dataclasses

from server.events.feed import EventFeed, Feeds, Row, _heat_rows
from server.store import Line
from server.store.records import RaceMeta
from shared import scoring

STARTED = RaceMeta(id="R1", code="ABCDEF", variant="forty-thieves", deal_source="random", deal=1, salt="s",
                   commitment="c", seats=3, players=3, time_limit=600, undo=False, start_mode="organiser",
                   status="started", created_at=0, starts_at=10_000, ends_at=610_000, ended_at=0, version=9, done=0)


def line(seat: int, name: str, home: int, home_at: int) -> Line:
    return Line(seat, name, "racing", home, home * 3, home_at, 0, 1)


def test_an_unchanged_line_gives_its_row_again_and_a_new_line_a_new_row() -> None:
    made: dict[str, tuple[Line, Row]] = {}
    ann, bob = line(0, "Ann", 4, 70_000), line(1, "bob", 2, 50_000)
    first = _heat_rows(1, "R1", ["ann", "bob", "cy"], STARTED, [ann, bob], made)
    assert [(r.account, r.status, r.home, r.home_at_ms, shown) for r, shown in first] == [
        ("ann", "racing", 4, 60_000, "racing"), ("bob", "racing", 2, 40_000, "racing"),
        ("cy", scoring.NO_SHOW, 0, None, "not_joined")]
    ann2 = line(0, "Ann", 5, 80_000)  # ann's move replaced her line; bob's is the same object
    second = _heat_rows(1, "R1", ["ann", "bob", "cy"], STARTED, [ann2, bob], made)
    assert second[1] is first[1]
    assert second[0] is not first[0] and (second[0][0].home, second[0][0].home_at_ms) == (5, 70_000)
    # An equal line that is another object (a table read from Redis) is made again, to the same row.
    bob_read = line(1, "bob", 2, 50_000)
    third = _heat_rows(1, "R1", ["ann", "bob", "cy"], STARTED, [ann2, bob_read], made)
    assert third[1] is not second[1] and third[1] == second[1]


def test_rows_of_a_heat_not_started_are_not_kept() -> None:
    """Before its start a row depends on the heat's settings too (its start time, its shown status)."""
    made: dict[str, tuple[Line, Row]] = {}
    lobby = dataclasses.replace(STARTED, status="lobby", starts_at=0)
    ann = Line(0, "ann", "waiting", 0, 0, 0, 0, 1)
    rows = _heat_rows(1, "R1", ["ann"], lobby, [ann], made)
    assert made == {} and rows[0][1] == "waiting"
    started = _heat_rows(1, "R1", ["ann"], STARTED, [ann], made)
    assert started[0] is not rows[0] and made["ann"] == (ann, started[0])


def _feed_with(rows: dict[str, list[Row]]) -> EventFeed:
    feed = EventFeed(Feeds(None, None), "E1")  # type: ignore[arg-type]  # _live reads no store
    feed._heat_rows = {race: (1, heat) for race, heat in rows.items()}
    return feed


def test_live_lines_are_scored_in_the_last_frames_order_best_first_and_equal_lines_made_from_scratch() -> None:
    """The live lines of a frame: every entrant with the matchpoints the round would give now. The next
    frame scores the field in the order the last one's score found (best first: a sort meets it nearly in
    order), and its lines are the same as a fresh feed makes of the same rows."""
    made: dict[str, tuple[Line, Row]] = {}
    ann, bob, cy = line(0, "ann", 4, 70_000), line(1, "bob", 2, 50_000), line(0, "cy", 3, 20_000)
    rows = {"R1": _heat_rows(1, "R1", ["ann", "bob"], STARTED, [ann, bob], made),
            "R2": _heat_rows(2, "R2", ["cy", "dee"], STARTED, [cy], made)}
    heats = [(1, "R1", ["ann", "bob"]), (2, "R2", ["cy", "dee"])]
    feed = _feed_with(rows)
    scored: list[list[str]] = []

    def score(field: list[scoring.RoundResult]) -> dict[str, int]:
        scored.append([r.account for r in field])
        return scoring.matchpoints(field)

    first = feed._live(heats, score)
    assert [(x.account, x.heat, x.home, x.matchpoints, x.status) for x in first] == [
        ("ann", 1, 4, 3.0, "racing"), ("bob", 1, 2, 1.0, "racing"), ("cy", 2, 3, 2.0, "racing"),
        ("dee", 2, 0, 0.0, "not_joined")]
    assert scored[0] == ["ann", "bob", "cy", "dee"], "the first frame scores the field as the heats list it"

    bob2 = line(1, "bob", 5, 90_000)  # bob passes everyone
    feed._heat_rows["R1"] = (2, _heat_rows(1, "R1", ["ann", "bob"], STARTED, [ann, bob2], made))
    second = feed._live(heats, score)
    assert scored[1] == ["ann", "cy", "bob", "dee"], "scored best first as the last frame found them"
    assert [(x.account, x.matchpoints) for x in second] == [("ann", 2.0), ("bob", 3.0), ("cy", 1.0), ("dee", 0.0)]
    assert feed._live(heats, score) == second and scored[2] == ["bob", "ann", "cy", "dee"]
    fresh = _feed_with({race: heat_rows for race, (_, heat_rows) in feed._heat_rows.items()})
    assert fresh._live(heats, scoring.matchpoints) == second, "the same lines as made from scratch"

    # An account in two rows (a field that is not one row an account) is scored as it stands.
    twice = _feed_with({"R1": rows["R1"], "R3": _heat_rows(3, "R3", ["ann"], STARTED, [ann], made)})
    lines = twice._live([(1, "R1", ["ann", "bob"]), (3, "R3", ["ann"])], score)
    assert scored[-1] == ["ann", "bob", "ann"] and len(lines) == 3
