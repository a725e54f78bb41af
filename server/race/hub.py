"""This process's connections to one race, and what each has been sent: the fan-out of events.

Why a hub per race per process: every process that serves some of a
race's connections hears each event once through Redis pub/sub, reads the
progress table at most ``progress_hz`` times a second, encodes one frame
and hands the same bytes to each of its connections. The cost of a move
is then independent of how many people watch it. The hub keeps each
connection's cursor (welcomed yet, owed a full table, the table a resumed
client has); a connection is only something frames can be sent to
(:class:`Listener`).

The hub does the I/O: reads, timers, tasks, encoding and sending. What each listener is sent, the racers'
pace and who is told of a start or an end is decided by the plan (:mod:`server.race.frame_plan`), from state.
The hub takes its collaborators (:class:`HubParts`), not the service that owns it.

The hubs of a process flush together, on one :class:`~server.race.ticker.ProgressTicker`: every hub with
something to send reads its table in the same loop pass, so the reads of all the races that moved in a tick
share one Redis round trip (the batcher's). A hub reads only what its process did not write itself: the
moves stored by its own connections come back with the line they wrote (:meth:`RaceHub.learn`,
:mod:`server.race.table`).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Protocol

from shared import protocol as p
from shared.variants import get_variant

from ..ops.log import log
from ..store import UNAVAILABLE, EventKind, Line, RaceMeta, Store
from . import frame_plan as plan
from . import rules as races
from .clock import now_ms
from .frame_plan import Cursor, Frame, Phases, ProgressPlan
from .table import RaceTable, moves_only
from .tasks import FailureRun, RaceTasks
from .ticker import DueTimer, ProgressTicker

__all__ = ["Cursor", "HubParts", "Listener", "ProgressTicker", "RaceHub"]


class Listener(Protocol):
    """What a hub needs of a connection."""

    seat: int | None
    """None for a spectator (who never sees a board)."""
    member: str
    """A player connection's presence lease name (the hub's heartbeat renews it)."""
    gen: int
    """The generation of the seat this connection holds (raised when a lobby seat is given back)."""

    def send(self, data: bytes) -> None: ...

    def hold(self, data: bytes) -> None:
        """Send a frame that may wait for the answer to the connection's move in flight (a progress frame)."""

    def close_after_queue(self, code: p.CloseCode) -> None: ...


@dataclass(frozen=True)
class HubParts:
    """What a hub uses, given when it is made (lila's ``SwissDirector`` takes its collaborators, not the
    world): the store, the process's ticker, a frame counter, the race's end and two settings."""

    store: Store
    ticker: ProgressTicker
    sent: Callable[[str, int], None]
    """Count frames sent, by kind (the process's metrics)."""
    end_race: Callable[[str], Awaitable[object]]
    """End the race (its time is up): stores its results once, from any process."""
    lobby_ttl: float
    """Seconds a lobby may wait (said in the frame that tells its connections it was removed)."""
    racer_interval: float
    """Seconds between two progress frames to a race's racers, at least (``--racer-hz``)."""


class RaceHub:
    """This process's connections to one race, and what they have been sent."""

    def __init__(self, race: str, parts: HubParts) -> None:
        self.race = race
        self.parts = parts
        self.store = parts.store
        self.conns: dict[Listener, Cursor] = {}
        """This process's connections to the race, each with what its table has been sent."""
        self.meta: RaceMeta | None = None
        self.version = 0
        """The highest race version this hub knows of (its frames carry it)."""
        self.heard = 0
        """The highest version this hub handled as an event (a note, a catch-up, or a move of its own that
        left its table complete): a flush may read a later table, and an end stored meanwhile must still be
        caught up (:meth:`catch_up`)."""
        self.progress = ProgressPlan()
        """The tables this hub's connections have, and the racers' pace (the plan of every flush)."""
        self.phases = Phases()
        """The phase changes (start, end) this hub's connections were told of, or learnt from their welcome."""
        self.table = RaceTable()
        """The race's stored lines as this process knows them (read, or written by its own moves)."""
        self._racers_timer = DueTimer(self._racers_due)
        self._owed = OwedNote(race, self.store, parts.ticker.interval * OWED_TICKS, self.spawn)
        self._dirty = False
        self._flushing: asyncio.Task[None] | None = None
        """This hub's flush under way (the ticker starts no second one before it is over)."""
        self._flush_failures = FailureRun("progress_failed", "progress_recovered", race=race)
        self._end_timer: asyncio.TimerHandle | None = None
        self._tasks = RaceTasks(race)
        self._racers_current: bool | None = None
        """:func:`frames.racers_only`'s answer while no connection came, went or had its cursor changed
        (None: to be looked at again). Kept: it is asked for every move, and connections change rarely."""

    @property
    def flushed_version(self) -> int:
        """The race version of the last table a flush made (-1: none yet, or the next is made anew)."""
        return self.progress.read_version

    # ------------------------------------------------------- life cycle
    def set_meta(self, meta: RaceMeta) -> None:
        """Remember the race's settings and arm the end timer once it has a start."""
        if self.meta is None:
            self.phases.first_meta(meta)
        elif meta.started and not self.meta.started:
            # A flush that read the table after the start was stored but before this hub had the started
            # meta made it with the lobby's statuses: the next flush makes the table anew.
            self.progress.restart()
            self.mark_dirty()
        self.meta = meta
        self.version = max(self.version, meta.version)
        if meta.status == "started" and self._end_timer is None:
            delay = max(0.0, (meta.ends_at - now_ms()) / 1000) + 0.01
            self._end_timer = asyncio.get_running_loop().call_later(delay, lambda: self.spawn(self._time_up()))

    # ------------------------------------------------------- connections
    def add(self, conn: Listener) -> None:
        self.conns[conn] = Cursor()
        self._racers_current = None

    def remove(self, conn: Listener) -> None:
        """``conn`` left (it is sent nothing more)."""
        self.conns.pop(conn, None)
        self._racers_current = None

    def welcome(self, conn: Listener, version: int, seen: list[p.PlayerProgress] | None, lobby: bool) -> None:
        """``conn`` was sent its welcome at ``version``: a snapshot (``seen`` None: the next flush sends it the
        full table) or a replay that left it with ``seen`` (the next flush sends it what differs).

        ``lobby``: the welcome showed the race in its lobby. If the start was announced while that
        welcome was under way, the announcement passed this connection by: it gets its own countdown.
        """
        cursor = self.conns.get(conn)
        if cursor is None:
            return
        if lobby and EventKind.START in self.phases.told:
            self.spawn(self._countdown_to(conn))
        cursor.welcome(version, seen)
        self._racers_current = None
        if cursor.needs_full:
            self.mark_dirty()  # the promised progress with full: true, even when nothing else happens

    def welcomed(self, conn: Listener) -> bool:
        cursor = self.conns.get(conn)
        return cursor is not None and cursor.welcomed

    def close(self) -> None:
        """Stop this hub's timers and tasks. A note still owed (:meth:`learn`) is left to the other processes'
        catch-up (``Service._catch_up``): the hub closes when its last connection here has gone."""
        if self._end_timer is not None:
            self._end_timer.cancel()
        self.parts.ticker.forget(self)
        self._racers_timer.cancel()
        if self._flushing is not None:
            self._flushing.cancel()
        self._owed.cancel()
        self._tasks.cancel()

    def spawn(self, coro: Any) -> None:
        """Run ``coro`` as a task of this hub (cancelled when it closes; a failure logged with the race)."""
        self._tasks.spawn(coro)

    async def _time_up(self) -> None:
        await self.parts.end_race(self.race)

    def announced(self, change: EventKind) -> bool:
        """Whether ``change`` is announced already (a connection welcomed since is told by its welcome)."""
        return change in self.phases.told

    async def catch_up(self) -> None:
        """Redo what a lost pub/sub message would have done (the race moved on without this hub hearing).

        Why: pub/sub delivers at most once; a message published while this
        process's subscription was down (Redis restarting, a failover, a
        dropped connection) is gone. The stored race is the truth, so
        compare it with what this hub's connections were told.
        """
        meta = await self.store.meta(self.race)
        for version, kind in plan.caught_up(meta, self.meta, self.phases.told, self.version):
            self.on_event(version, kind)

    # ---------------------------------------------------------- events
    def on_event(self, version: int, kind: EventKind | None) -> None:
        """An event of this race was stored (by any process); None: something changed (a catch-up)."""
        self.version = max(self.version, version)
        self.heard = max(self.heard, version)
        if kind is not None:
            self._owed.heard(version)
        if kind is EventKind.MOVE and self.table.complete_at(version):
            return  # this process's own moves, which its table took (learn decided when to flush them)
        if kind is EventKind.START:
            self.spawn(self._announce_start())
        elif kind is EventKind.END:
            self.spawn(self._announce_end())
        elif kind is EventKind.ABANDON:
            self._announce_abandoned()
            return
        elif kind is EventKind.LEAVE:
            self.spawn(self._release_left_seats())
        self.mark_dirty()

    def _announce_abandoned(self) -> None:
        """The lobby waited too long and the race is gone: say so and let everyone go."""
        ttl = self.parts.lobby_ttl
        frame = p.encode(p.error(p.ErrorCode.RACE_NOT_FOUND,
                                 f"the race was removed before it started: nobody started it within {ttl} s of its "
                                 "creation, or (a race formed from seeks) a player did not come in time"))
        self._close_with(frame, list(self.conns))

    def _close_with(self, frame: bytes, conns: list[Listener]) -> None:
        for conn in conns:
            conn.send(frame)
            conn.close_after_queue(p.CloseCode.NORMAL)

    async def _release_left_seats(self) -> None:
        """A lobby seat was given back: the connections still holding it (other connections of
        that player, here or on a process that heard late) are told ``left`` and closed, before a
        new player can be taken for them."""
        holders = [conn for conn in self.conns if conn.seat is not None]
        seats = {conn.seat for conn in holders if conn.seat is not None}
        claims = {seat: await self.store.seat(self.race, seat) for seat in seats}
        self._close_with(p.encode(p.Left(version=self.version)), plan.released(holders, claims))

    async def _announce_start(self) -> None:
        if EventKind.START in self.phases.told:
            return
        meta = await self.store.meta(self.race)
        if meta is None or not self.phases.first_time(EventKind.START):
            return
        self.set_meta(meta)
        self._send_countdown(meta, plan.welcomed(self.conns))

    def _send_countdown(self, meta: RaceMeta, conns: list[Listener]) -> None:
        encoded: dict[int, bytes] = {}
        for conn, msg in plan.countdowns(meta, self.version, now_ms(), conns):
            conn.send(encoded.get(id(msg)) or encoded.setdefault(id(msg), p.encode(msg)))
            self.parts.sent("countdown", 1)

    async def _countdown_to(self, conn: Listener) -> None:
        meta = await self.store.meta(self.race)
        if meta is not None and meta.started and conn in self.conns:
            self._send_countdown(meta, [conn])

    async def _announce_end(self) -> None:
        if EventKind.END in self.phases.told:
            return
        blob = await self.store.results(self.race)
        meta = await self.store.meta(self.race)
        if blob is None or meta is None or not self.phases.first_time(EventKind.END):
            return
        self.set_meta(meta)
        if self._end_timer is not None:
            self._end_timer.cancel()
        frame = p.encode(p.Finished(version=meta.version, results=races.shown_results(meta, blob, now_ms())))
        for conn in plan.welcomed(self.conns):
            conn.send(frame)
            self.parts.sent("finished", 1)

    # -------------------------------------------------------- progress
    def learn(self, version: int, seat: int, line: bytes | None, held: bool) -> None:
        """A move of this process's connection was stored at ``version``, writing ``line``: the table takes
        it without reading it back, and the next tick flushes it. ``held``: the moves script held back the
        race's note of it (another move announced the race within the tick): this process announces it
        :data:`OWED_TICKS` ticks later, unless a note of a later version comes first (in a race that goes on
        moving, the next tick's first move announces it), so the other processes' hubs read it.

        Why the committer announces: the note was the only way another process heard of a move, and a
        hub read its table once more a tick after each note for the moves the tick key held back: a
        second read of the whole table for nearly every move at a human pace. Whether the flush waits
        for the racers' next frame: :meth:`frames.RacersPace.after_own_move`."""
        self.version = max(self.version, version)
        before = self.table.lines.get(seat) if self.table.version == version - 1 else None
        if line is not None:
            self.table.wrote(version, seat, line)
            if self.table.complete_at(version) and EventKind.START in self.phases.told:
                # Every version up to this one is in the table, and none of them is a phase change still to
                # announce (the start was; an end comes after the last move): nothing for a catch-up to do.
                self.heard = max(self.heard, version)
        if held:
            self._owed.held(version)
        only = self.table.version == version and self._racers_only()
        unseen = only and before is not None and moves_only(before, self.table.lines[seat])
        due_in = self.progress.racers.after_own_move(unseen, only, time.monotonic(), self.parts.racer_interval)
        if due_in is None:
            self.mark_dirty()
        else:
            self._racers_timer.within(due_in)

    def _racers_only(self) -> bool:
        current = self._racers_current
        if current is None:
            current = self._racers_current = plan.racers_only(self.conns)
        return current

    def known_lines(self) -> tuple[int, list[Line]] | None:
        """The race's version and lines, when this hub's table has every change it has heard of (no read
        needed); None otherwise."""
        table = self.table
        return (table.version, table.sorted_lines()) if table.complete_at(self.version) else None

    def mark_dirty(self) -> None:
        self._dirty = True
        self.parts.ticker.mark(self)

    def tick(self) -> None:
        """The ticker's turn: flush once, unless the last flush is still under way (then next tick)."""
        if self._flushing is not None:
            self.parts.ticker.mark(self)
            return
        if not self._dirty:
            return
        self._dirty = False
        self._flushing = asyncio.ensure_future(self._flush_once())

    async def _flush_once(self) -> None:
        """One flush; one that Redis failed is tried again at the next tick. A run of failed flushes is
        logged once, at its first and when a flush works again (an outage fails every tick's)."""
        try:
            await self._flush()
        except Exception as exc:  # (never left for asyncio to complain of, naming no race)
            self._flush_failures.failed(exc)
            if isinstance(exc, UNAVAILABLE):
                self._dirty = True
        else:
            self._flush_failures.worked()
        finally:
            self._flushing = None
            if self._dirty:
                self.parts.ticker.mark(self)

    async def _flush(self) -> None:
        if self.meta is None:
            meta = await self.store.meta(self.race)
            if meta is None:
                return
            self.set_meta(meta)
        assert self.meta is not None
        if not self.table.complete_at(self.version):
            self.table.read(*await self.store.lines(self.race))
        version = self.table.version
        flush = self.progress.flush(self.conns, self.table.sorted_lines(), self.meta.started,
                                    get_variant(self.meta.variant).total_cards, version, time.monotonic(),
                                    self.parts.racer_interval)
        if flush is None:
            return  # nothing stored since the last table (a trailing flush after a quiet tick): nothing to send
        self._racers_current = None  # the cursors changed (each was sent its table, or owed a full one)
        if flush.racers_due_in is not None:
            self._racers_timer.within(flush.racers_due_in)
        self._dirty = self._dirty or flush.again
        self.version = max(self.version, version)
        status = self.meta.phase(now_ms())
        shared: dict[Frame, bytes] = {}  # one encoding a kind of frame, but each connection's own
        full, own = Frame.FULL, Frame.OWN
        for conn, frame, players in flush.sends:
            data = shared.get(frame)
            if data is None:
                data = p.encode(p.Progress(version=version, server_time=now_ms(), race_status=status,
                                           players=players, full=frame is full))
                if frame is not own:
                    shared[frame] = data
            conn.hold(data)
        self.parts.sent("progress", len(flush.sends))

    def _racers_due(self) -> None:
        if self.progress.racers.behind_since is not None:
            self.mark_dirty()


OWED_TICKS = 3
"""Ticks a process waits before announcing a move of its own whose note the moves script held back. At
one tick (the first try) it announced half the moves of bench/event_round.py itself, a publish each: in a
race that goes on moving, a later move's note comes within three ticks and covers it. The cost is on
the other processes' racers only (this process's hub took the move at once): a move that ended a burst
reaches them up to three ticks late."""


class OwedNote:
    """The note of this process's own moves that the moves script held back (:meth:`RaceHub.learn`):
    announced :data:`OWED_TICKS` ticks later, unless a note of that version or a later one comes first."""

    def __init__(self, race: str, store: Store, delay: float, spawn: Callable[[Any], None]) -> None:
        self.race, self.store, self.delay, self.spawn = race, store, delay, spawn
        self.owed = 0
        """The highest version of a move of this process whose note the moves script held back."""
        self.noted = 0
        """The highest version a note of this race said."""
        self._timer: asyncio.TimerHandle | None = None

    def heard(self, version: int) -> None:
        self.noted = max(self.noted, version)

    def held(self, version: int) -> None:
        self.owed = max(self.owed, version)
        if self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(self.delay, self._due)

    def cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()

    def _due(self) -> None:
        self._timer = None
        if self.owed > self.noted:  # no note of it (or of a later version) came meanwhile
            self.spawn(self._publish())

    async def _publish(self) -> None:
        try:
            await self.store.announce(self.race)
        except UNAVAILABLE as exc:  # the other processes' catch-up finds the version (Service._catch_up)
            log("announce_failed", race=self.race, error=exc)
