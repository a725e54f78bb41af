"""A race's progress lines as a process knows them (server/race/table.py): complete at a version only when
every change up to it came in, from a read or from the process's own moves, in whatever order."""

from __future__ import annotations

import msgspec

from server.race.table import EARLY_MAX, RaceTable, moves_only
from server.store import LINE_FIELDS, Line


def line(seat: int, home: int = 0, moves: int = 0, status: str = "racing", **fields: int) -> Line:
    return Line(seat=seat, name=f"p{seat}", status=status, home=home, moves=moves, home_at=fields.get("home_at", 0),
                finished_at=fields.get("finished_at", 0), online=fields.get("online", 1),
                helped=fields.get("helped", 0))


def blob(of: Line) -> bytes:
    """The progress hash value the moves script writes for a line (records.decode_line reads it)."""
    return msgspec.msgpack.encode([getattr(of, name) for name in LINE_FIELDS])


def test_nothing_is_known_before_the_first_read_and_a_move_before_it_is_left_to_that_read() -> None:
    table = RaceTable()
    table.wrote(3, 0, blob(line(0, moves=1)))
    assert not table.complete_at(0)
    table.read(3, [line(0, moves=1), line(1)])
    assert table.complete_at(3) and not table.complete_at(4)
    assert table.sorted_lines() == [line(0, moves=1), line(1)]


def test_own_moves_after_a_read_complete_the_table_in_order_whatever_order_their_replies_came_in() -> None:
    table = RaceTable()
    table.read(5, [line(1), line(0)])
    table.wrote(7, 1, blob(line(1, moves=1)))  # the reply of a second round trip came first
    assert table.version == 5 and not table.complete_at(7), "version 6 is still missing"
    table.wrote(6, 0, blob(line(0, home=1, moves=1, home_at=10)))
    assert table.version == 7
    assert table.sorted_lines() == [line(0, home=1, moves=1, home_at=10), line(1, moves=1)]


def test_a_change_of_another_process_leaves_the_table_incomplete_until_a_read_brings_it() -> None:
    table = RaceTable()
    table.read(1, [line(0), line(1)])
    table.wrote(3, 0, blob(line(0, moves=2)))  # version 2 was another process's move
    assert not table.complete_at(3)
    table.read(2, [line(0, moves=1), line(1, home=1, moves=1)])  # the read the hub made for it
    assert table.version == 3, "the later own move applies on top of the read"
    assert table.sorted_lines() == [line(0, moves=2), line(1, home=1, moves=1)]


def test_a_read_older_than_what_own_moves_made_of_the_table_is_ignored() -> None:
    table = RaceTable()
    table.read(4, [line(0)])
    table.wrote(5, 0, blob(line(0, moves=1)))
    table.read(4, [line(0)])  # a read sent before the move, answered after it
    assert table.version == 5 and table.sorted_lines() == [line(0, moves=1)]
    table.wrote(5, 0, blob(line(0, moves=9)))  # a version the table has: nothing changes
    assert table.sorted_lines() == [line(0, moves=1)]


def test_lines_waiting_for_a_missing_version_are_bounded() -> None:
    table = RaceTable()
    table.read(0, [line(0)])
    for version in range(2, 2 + EARLY_MAX + 5):  # version 1 never comes: each waits for it
        table.wrote(version, 0, blob(line(0, moves=version)))
    assert table.version == 0
    table.read(EARLY_MAX + 10, [line(0, moves=99)])
    assert table.version == EARLY_MAX + 10 and table.sorted_lines() == [line(0, moves=99)]


def test_only_a_move_count_changing_is_nothing_a_racer_sees() -> None:
    assert moves_only(line(0, moves=1), line(0, moves=2))
    for changed in (line(0, home=1, moves=2), line(0, moves=2, status="blocked"), line(0, moves=2, helped=1),
                    line(0, moves=2, online=0), line(0, moves=2, home_at=5), line(0, moves=2, finished_at=7)):
        assert not moves_only(line(0, moves=1), changed), changed
