"""The event feed's rows of a heat (server/events/feed.py ``heat_rows``): once the heat has started, a line
that did not change since the feed's last look, or changed in its move count alone, gives its row again;
any other line a row of its own (unit level: pure, no server)."""

from __future__ import annotations

import dataclasses

from server.events.feed import EventFeed, Feeds, HeatRows, heat_rows
from server.events.format import Formats
from server.events.formats import ALL
from server.store import Line
from server.store.records import RaceMeta
from shared import scoring

STARTED = RaceMeta(id="R1", code="ABCDEF", variant="forty-thieves", deal_source="random", deal=1, salt="s",
                   commitment="c", seats=3, players=3, time_limit=600, undo=False, start_mode="organiser",
                   status="started", created_at=0, starts_at=10_000, ends_at=610_000, ended_at=0, version=9, done=0)


def line(seat: int, name: str, home: int, home_at: int) -> Line:
    return Line(seat, name, "racing", home, home * 3, home_at, 0, 1)


def test_an_unchanged_line_gives_its_row_again_and_a_changed_line_a_new_row() -> None:
    accounts = ["ann", "bob", "cy"]
    ann, bob = line(0, "Ann", 4, 70_000), line(1, "bob", 2, 50_000)
    first = heat_rows(1, "R1", accounts, STARTED, 5, [ann, bob], None)
    assert first.version == 5
    assert [(r.account, r.status, r.home, r.home_at_ms, shown) for r, shown in first.rows] == [
        ("ann", "racing", 4, 60_000, "racing"), ("bob", "racing", 2, 40_000, "racing"),
        ("cy", scoring.NO_SHOW, 0, None, "not_joined")]
    ann2 = line(0, "Ann", 5, 80_000)  # ann's move replaced her line; bob's is the same object
    second = heat_rows(1, "R1", accounts, STARTED, 6, [ann2, bob], first)
    assert second.rows[1] is first.rows[1] and second.rows[2] is first.rows[2]
    assert second.rows[0] is not first.rows[0] and (second.rows[0][0].home, second.rows[0][0].home_at_ms) == (5, 70_000)
    assert [r.home for r, _ in first.rows] == [4, 2, 0], "the rows of the last look are left as they were"
    # A line that changed in its move count alone (another object, as a table read from Redis gives)
    # shows the same: its row is taken again.
    bob_moved = dataclasses.replace(bob, moves=bob.moves + 1)
    third = heat_rows(1, "R1", accounts, STARTED, 7, [ann2, bob_moved], second)
    assert third.rows[1] is second.rows[1] and third.rows[0] is second.rows[0]
    # Anything else a row shows is made again: the status (gave up), the connection (offline).
    gave_up = dataclasses.replace(bob_moved, status="gave_up")
    fourth = heat_rows(1, "R1", accounts, STARTED, 8, [ann2, gave_up], third)
    assert fourth.rows[1][0].status == "gave_up" and fourth.rows[1][1] == "gave_up"
    offline = dataclasses.replace(ann2, online=0)
    fifth = heat_rows(1, "R1", accounts, STARTED, 9, [offline, gave_up], fourth)
    assert fifth.rows[0][1] == "disconnected" and fifth.rows[1] is fourth.rows[1]


def test_a_table_of_other_seats_is_made_into_rows_afresh() -> None:
    """A table whose seats or names are not those the rows were made of (a read that does not match the
    last), or a heat whose entrants are not, is not patched line by line: every row is made again."""
    ann, bob = line(0, "ann", 4, 70_000), line(1, "bob", 2, 50_000)
    first = heat_rows(1, "R1", ["ann", "bob"], STARTED, 1, [ann, bob], None)
    swapped = heat_rows(1, "R1", ["ann", "bob"], STARTED, 2, [line(0, "bob", 3, 60_000), line(1, "ann", 6, 90_000)],
                        first)
    assert [(r.account, r.home) for r, _ in swapped.rows] == [("ann", 6), ("bob", 3)]
    fewer = heat_rows(1, "R1", ["ann", "bob"], STARTED, 3, [ann], swapped)
    assert [(r.account, r.home, shown) for r, shown in fewer.rows] == [("ann", 4, "racing"), ("bob", 0, "not_joined")]
    # Other entrants than the rows were made for (the heat's list in the schedule changed): made afresh too.
    other = heat_rows(1, "R1", ["bob", "ann"], STARTED, 4, [ann], fewer)
    assert [(r.account, shown) for r, shown in other.rows] == [("bob", "not_joined"), ("ann", "racing")]


def test_rows_of_a_heat_not_started_are_not_kept() -> None:
    """Before its start a row depends on the heat's settings too (its start time, its shown status)."""
    lobby = dataclasses.replace(STARTED, status="lobby", starts_at=0)
    ann = Line(0, "ann", "waiting", 0, 0, 0, 0, 1)
    rows = heat_rows(1, "R1", ["ann"], lobby, 1, [ann], None)
    assert rows.lines == [] and rows.rows[0][1] == "waiting"
    started = heat_rows(1, "R1", ["ann"], STARTED, 2, [ann], rows)
    assert started.rows[0] is not rows.rows[0] and started.rows[0][1] == "racing" and started.lines == [ann]


def _feed_with(rows: dict[str, HeatRows]) -> EventFeed:
    feeds = Feeds(None, None, formats=Formats(ALL), sse_event=bytes)  # type: ignore[arg-type]  # _live reads no store
    feed = EventFeed(feeds, "E1")
    feed._heat_rows = dict(rows)
    return feed


def test_live_lines_are_scored_in_the_last_frames_order_best_first_and_equal_lines_made_from_scratch() -> None:
    """The live lines of a frame: every entrant with the matchpoints the round would give now. The next
    frame scores the field in the order the last one's score found (best first: a sort meets it nearly in
    order), and its lines are the same as a fresh feed makes of the same rows."""
    ann, bob, cy = line(0, "ann", 4, 70_000), line(1, "bob", 2, 50_000), line(0, "cy", 3, 20_000)
    rows = {"R1": heat_rows(1, "R1", ["ann", "bob"], STARTED, 1, [ann, bob], None),
            "R2": heat_rows(2, "R2", ["cy", "dee"], STARTED, 1, [cy], None)}
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
    feed._heat_rows["R1"] = heat_rows(1, "R1", ["ann", "bob"], STARTED, 2, [ann, bob2], rows["R1"])
    second = feed._live(heats, score)
    assert scored[1] == ["ann", "cy", "bob", "dee"], "scored best first as the last frame found them"
    assert [(x.account, x.matchpoints) for x in second] == [("ann", 2.0), ("bob", 3.0), ("cy", 1.0), ("dee", 0.0)]
    assert feed._live(heats, score) == second and scored[2] == ["bob", "ann", "cy", "dee"]
    fresh = _feed_with(feed._heat_rows)
    assert fresh._live(heats, scoring.matchpoints) == second, "the same lines as made from scratch"

    # An account in two rows (a field that is not one row an account) is scored as it stands.
    twice = _feed_with({"R1": rows["R1"], "R3": heat_rows(3, "R3", ["ann"], STARTED, 1, [ann], None)})
    lines = twice._live([(1, "R1", ["ann", "bob"]), (3, "R3", ["ann"])], score)
    assert scored[-1] == ["ann", "bob", "ann"] and len(lines) == 3
