"""The event feed's rows of a heat (server/events/feed.py ``_heat_rows``): a line the feed saw before
gives its row again, any other line a row of its own (unit level: pure, no server)."""

from __future__ import annotations

import dataclasses

from server.events.feed import Row, _heat_rows
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
