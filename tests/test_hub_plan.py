"""The race hub's frame plan (server/race/frame_plan.py) as tables: state in, planned frames out, no I/O.

Each row of the progress table: who is connected and where each stands, the table every listener was
sent before (a first flush, through the plan itself), the stored lines now and how long since; then what
each listener is planned to get (its frame kind and the seats it carries), whether the hub must flush
again, and when the racers are due. Rows for the announcements follow.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from server.race import frame_plan as frames, rules
from server.race.frame_plan import Cursor, Frame, Phases, ProgressPlan, RacersPace
from server.store import EventKind, Line, RaceMeta, SeatClaim
from shared import protocol as p

TOTAL = 104
INTERVAL = 0.25
"""The racers' pace (``--racer-hz 4``)."""
T0 = 1000.0
"""The first flush's time (a monotonic clock)."""


@dataclass(frozen=True)
class L:
    """A listener: a racer (a seat) or a spectator (None)."""

    name: str
    seat: int | None
    gen: int = 1


ANN, BOB, WATCHER = L("ann", 0), L("bob", 1), L("watcher", None)


def line(seat: int, home: int = 0, moves: int = 0) -> Line:
    return Line(seat, f"p{seat}", "racing", home, moves, 1 if home else 0, 0, 1)


START = [line(0), line(1)]
ANN_MOVED = [line(0, moves=1), line(1)]
"""A move count alone: no racer's screen shows it."""
ANN_HOME = [line(0, home=1, moves=1), line(1)]
"""A card home: every racer sees it."""
BOB_GONE = [line(0)]


@dataclass
class Row:
    id: str
    conns: dict[L, str]
    """Each listener's cursor before the first flush: "fresh" (owed the full table, gets it at the first
    flush), "later" (welcomed after the first flush with a snapshot), "resumed" (after the first flush,
    with a replay that left it the first table), "behind" (welcomed at a version the read has not reached),
    "unwelcomed"."""
    now: list[Line]
    expect: dict[str, tuple[Frame, list[int]] | None]
    """By listener name: the frame kind and its seats (None: nothing)."""
    dt: float = 1.0
    """Seconds since the first flush."""
    again: bool = False
    due_in: float | None = None
    first_table: list[Line] = field(default_factory=lambda: START)


ROWS = [
    Row("a snapshot welcome gets the whole table", {ANN: "later", WATCHER: "later"}, ANN_MOVED,
        {"ann": (Frame.FULL, [0, 1]), "watcher": (Frame.FULL, [0, 1])}),
    # (the racers' table is paced whether or not a racer watches here: a move count alone leaves it behind)
    Row("a spectator gets every change at once", {WATCHER: "fresh"}, ANN_MOVED,
        {"watcher": (Frame.SPECTATORS, [0])}, due_in=frames.RACER_LAG),
    Row("a move count alone waits for the racers' lag", {ANN: "fresh", BOB: "fresh", WATCHER: "fresh"}, ANN_MOVED,
        {"ann": None, "bob": None, "watcher": (Frame.SPECTATORS, [0])}, due_in=frames.RACER_LAG),
    Row("a card home goes to the racers", {ANN: "fresh", BOB: "fresh"}, ANN_HOME,
        {"ann": (Frame.RACERS, [0]), "bob": (Frame.RACERS, [0])}),
    Row("a card home within the racers' interval waits for it", {ANN: "fresh", BOB: "fresh"}, ANN_HOME,
        {"ann": None, "bob": None}, dt=0.1, due_in=INTERVAL - 0.1),
    Row("a resumed welcome gets what differs from its replay", {WATCHER: "resumed"}, ANN_HOME,
        {"watcher": (Frame.OWN, [0])}),
    Row("a resumed welcome already up to date gets nothing", {WATCHER: "resumed"}, START,
        {"watcher": None}),
    Row("a table read before a welcome's version waits for a later read", {WATCHER: "behind"}, ANN_MOVED,
        {"watcher": None}, again=True, due_in=frames.RACER_LAG),
    Row("a racer owed its first table waits while the racers' frame is not due",
        {ANN: "fresh", BOB: "later"}, ANN_HOME, {"ann": None, "bob": None}, dt=0.1, due_in=INTERVAL - 0.1),
    Row("a seat given back: everyone gets the whole table", {ANN: "fresh", WATCHER: "fresh"}, BOB_GONE,
        {"ann": (Frame.FULL, [0]), "watcher": (Frame.FULL, [0])}),
    Row("no frame before the welcome", {WATCHER: "unwelcomed"}, ANN_MOVED, {"watcher": None},
        due_in=frames.RACER_LAG),
]


@pytest.mark.parametrize("row", ROWS, ids=[r.id for r in ROWS])
def test_a_flush_plans_each_listeners_frame(row: Row) -> None:
    progress = ProgressPlan()
    conns = {conn: Cursor() for conn in row.conns}
    for conn, kind in row.conns.items():
        if kind == "fresh":
            conns[conn].welcome(1, None)
    first = progress.flush(conns, row.first_table, True, TOTAL, 1, T0, INTERVAL)
    assert first is not None
    table = rules.progress_lines(row.first_table, True, TOTAL)
    for conn, kind in row.conns.items():
        if kind == "later":
            conns[conn].welcome(2, None)
        elif kind == "resumed":
            conns[conn].welcome(2, table)
        elif kind == "behind":
            conns[conn].welcome(3, None)
    plan = progress.flush(conns, row.now, True, TOTAL, 2, T0 + row.dt, INTERVAL)
    assert plan is not None
    got = {conn.name: (frame, [e.seat for e in players]) for conn, frame, players in plan.sends}
    assert {name: got.get(name) for name in row.expect} == row.expect
    assert plan.again is row.again
    assert plan.racers_due_in == (pytest.approx(row.due_in) if row.due_in is not None else None)


def test_nothing_stored_since_the_last_table_plans_no_flush() -> None:
    progress = ProgressPlan()
    conns = {WATCHER: Cursor()}
    conns[WATCHER].welcome(1, None)
    assert progress.flush(conns, START, True, TOTAL, 1, T0, INTERVAL) is not None
    assert progress.flush(conns, START, True, TOTAL, 1, T0 + 1, INTERVAL) is None
    progress.restart()  # the start heard late: the table is made anew
    assert progress.flush(conns, START, True, TOTAL, 1, T0 + 2, INTERVAL) is not None


@pytest.mark.parametrize(("moves_only", "racers_only", "since_last", "due_in"), [
    (True, True, 10.0, frames.RACER_LAG),  # a move count alone: the racers' lag
    (False, True, 0.1, INTERVAL - 0.1),  # seen by racers, their frame not due: it takes it
    (False, True, 10.0, None),  # their frame is due: flush now
    (True, False, 10.0, None),  # a spectator (or a welcome owed a table) watches: flush now
    (False, False, 0.1, None),
])
def test_a_move_of_this_process_is_flushed_now_or_when_the_racers_are_due(
        moves_only: bool, racers_only: bool, since_last: float, due_in: float | None) -> None:
    pace = RacersPace(last=T0)
    got = pace.after_own_move(moves_only, racers_only, T0 + since_last, INTERVAL)
    assert got == (pytest.approx(due_in) if due_in is not None else None)
    assert (pace.behind_since is not None) is (due_in is not None)


@pytest.mark.parametrize(("cursors", "only"), [
    ({ANN: "current", BOB: "current"}, True),
    ({ANN: "current", WATCHER: "current"}, False),
    ({ANN: "current", BOB: "owed"}, False),
    ({ANN: "unwelcomed"}, False),
    ({}, True),
])
def test_only_racers_up_to_date(cursors: dict[L, str], only: bool) -> None:
    conns = {}
    for conn, state in cursors.items():
        cursor = conns[conn] = Cursor()
        if state != "unwelcomed":
            cursor.welcome(1, None)
        if state == "current":
            cursor.needs_full = False
    assert frames.racers_only(conns) is only


def _meta(status: str, started: bool, version: int = 5) -> RaceMeta:
    meta = rules.new_race(p.Create(seats=2, deal_source="number", deal=1), 1_000)
    return RaceMeta(**{**vars(meta), "status": status, "version": version,
                       "starts_at": 2_000 if started else 0, "ends_at": 60_000 if started else 0})


@pytest.mark.parametrize(("stored", "known", "told", "events"), [
    (None, "lobby", set(), [(8, EventKind.ABANDON)]),  # the lobby was removed
    (None, "started", {EventKind.START}, []),  # gone after its end (kept no longer): nothing to say
    ("lobby", "lobby", set(), [(5, None)]),
    ("started", "lobby", set(), [(5, EventKind.START), (5, None)]),  # the start's note was lost
    ("started", "started", {EventKind.START}, [(5, None)]),
    ("finished", "started", {EventKind.START}, [(5, EventKind.END), (5, None)]),  # the end's note was lost
    ("finished", "lobby", set(), [(5, EventKind.START), (5, EventKind.END), (5, None)]),
])
def test_a_catch_up_redoes_the_phase_changes_not_told(stored: str | None, known: str,
                                                       told: set[EventKind], events: list[object]) -> None:
    def meta(status: str) -> RaceMeta:
        return _meta(status, status != "lobby")
    assert frames.caught_up(meta(stored) if stored else None, meta(known), told, 7) == events


@pytest.mark.parametrize(("meta", "told"), [
    (("lobby", False), set()),
    (("started", True), {EventKind.START}),
    (("finished", True), {EventKind.START, EventKind.END}),
])
def test_a_hubs_first_meta_counts_as_told_what_its_welcomes_showed(meta: tuple[str, bool],
                                                                   told: set[EventKind]) -> None:
    phases = Phases()
    phases.first_meta(_meta(*meta))
    assert phases.told == told
    assert [phases.first_time(kind) for kind in (EventKind.START, EventKind.END)] == [
        EventKind.START not in told, EventKind.END not in told]
    assert not phases.first_time(EventKind.START) and not phases.first_time(EventKind.END), "once each"


def test_the_start_gives_players_the_first_board_and_spectators_none() -> None:
    meta = _meta("started", True)
    planned = frames.countdowns(meta, 6, 1_500, [ANN, WATCHER, BOB])
    assert [conn for conn, _ in planned] == [ANN, WATCHER, BOB]
    ann, watcher, bob = (msg for _, msg in planned)
    assert ann is bob and ann.view is not None and watcher.view is None
    assert (watcher.version, watcher.starts_at, watcher.ends_at, watcher.server_time) == (6, 2_000, 60_000, 1_500)


def test_only_welcomed_listeners_are_told_of_a_start_or_an_end() -> None:
    conns = {ANN: Cursor(), WATCHER: Cursor()}
    conns[WATCHER].welcome(1, None)
    assert frames.welcomed(conns) == [WATCHER]


@pytest.mark.parametrize(("claim", "told"), [
    (None, True),  # the seat is gone
    (SeatClaim(1, "left", None), True),
    (SeatClaim(2, "waiting", None), True),  # a new player took it (a later generation)
    (SeatClaim(1, "waiting", None), False),  # still this connection's
])
def test_a_seat_given_back_tells_its_holders(claim: SeatClaim | None, told: bool) -> None:
    assert frames.released([ANN], {0: claim}) == ([ANN] if told else [])
