"""This process's connections to one race, and what each has been sent: the fan-out of events.

Why a hub per race per process: every process that serves some of a
race's connections hears each event once through Redis pub/sub, reads the
progress table at most ``progress_hz`` times a second, encodes one frame
and hands the same bytes to each of its connections. The cost of a move
is then independent of how many people watch it. The hub keeps each
connection's cursor (welcomed yet, owed a full table, the table a resumed
client has); a connection is only something frames can be sent to
(:class:`Listener`).

The hubs of a process flush together, on one :class:`ProgressTicker`: every hub with something to send
reads its table in the same loop pass, so the reads of all the races that moved in a tick share one
Redis round trip (the batcher's), instead of a round trip, a timer and a wake-up each at its own moment.
A hub reads only what its process did not write itself: the moves stored by its own connections come
back with the line they wrote (:meth:`RaceHub.learn`, :mod:`server.race.table`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import msgspec

from shared import protocol as p
from shared.variants import get_variant

from ..ops.log import format_event, log, logger
from ..store import UNAVAILABLE, EventKind, Line, RaceMeta
from . import rules as races
from .clock import now_ms
from .table import RaceTable, moves_only

if TYPE_CHECKING:
    from .service import Service


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


@dataclass
class Cursor:
    """Where a connection's progress table stands."""

    welcomed: bool = False
    needs_full: bool = True
    """The next flush sends the whole table (a snapshot welcome)."""
    table_version: int = 0
    """The version of the table its welcome gave (or replayed to) it: no flush may go back before it."""
    seen: dict[int, p.PlayerProgress] | None = field(default=None)
    """After a resumed welcome: the table the client has (the next flush sends the difference)."""


class RaceHub:
    """This process's connections to one race, and what they have been sent."""

    def __init__(self, service: "Service", race: str) -> None:
        self.service = service
        self.race = race
        self.conns: dict[Listener, Cursor] = {}
        """This process's connections to the race, each with what its table has been sent."""
        self.meta: RaceMeta | None = None
        self.version = 0
        """The highest race version this hub knows of (its frames carry it)."""
        self.heard = 0
        """The highest version this hub handled as an event (a note, a catch-up, or a move of its own that
        left its table complete): a flush may read a later table, and an end stored meanwhile must still be
        caught up (:meth:`catch_up`)."""
        self._noted = 0
        """The highest version a note of this race said (the moves this process owes a note of: :meth:`learn`)."""
        self._last_sent: dict[int, p.PlayerProgress] = {}
        """The table as the spectators (and connections just given a table) have it."""
        self._racers_sent: dict[int, p.PlayerProgress] = {}
        """The table as the racers have it: changes no racer sees wait (:data:`RACER_LAG`)."""
        self._racers_behind_since: float | None = None
        """When the racers' table first fell behind with changes they do not see (None: it is not)."""
        self._racers_timer: asyncio.Handle | None = None
        self._racers_due_at = 0.0
        """When :attr:`_racers_timer` fires (the loop's clock)."""
        self._racers_last = -1e9
        """When the racers were last sent a frame (monotonic): the next waits :attr:`Service.racer_interval`."""
        self._made: races.MadeLines = {}
        """The progress lines of the hub's last tables, by seat (a line its table did not replace gives its
        progress line again: :func:`server.race.rules.progress_lines`)."""
        self._read_version = -1
        """The race version of the table :attr:`_last_sent` was made from (a later read at the same
        version holds nothing new: every change of a progress line is an event, which bumps it)."""
        self.table = RaceTable()
        """The race's stored lines as this process knows them (read, or written by its own moves)."""
        self._owed = 0
        """The highest version of a move of this process whose note the moves script held back."""
        self._owed_timer: asyncio.TimerHandle | None = None
        self._dirty = False
        self._flushing: asyncio.Task[None] | None = None
        """This hub's flush under way (the ticker starts no second one before it is over)."""
        self._end_timer: asyncio.TimerHandle | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._racers_current: bool | None = None
        """:meth:`_racers_only`'s answer while no connection came, went or had its cursor changed (None:
        to be looked at again)."""
        self._announced: set[EventKind] = set()
        """The phase changes (start, end) this hub's connections were told of, or learnt of from their
        welcome (a hub born in a running race: see :meth:`set_meta`)."""

    # ------------------------------------------------------- life cycle
    def set_meta(self, meta: RaceMeta) -> None:
        """Remember the race's settings and arm the end timer once it has a start."""
        if self.meta is None:  # the first meta: what it shows, the welcomes built from it showed too
            self._announced |= {EventKind.START} if meta.started else set()
            self._announced |= {EventKind.END} if meta.status == "finished" else set()
        elif meta.started and not self.meta.started:
            # A flush that read the table after the start was stored but before this hub had the started
            # meta made it with the lobby's statuses ("ready", not "racing"), and a flush at the same version
            # sends nothing again: the next flush makes the table anew (it sends only what differs).
            self._read_version = -1
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
        if lobby and self._told(EventKind.START):
            self.spawn(self._countdown_to(conn))
        cursor.table_version = version
        cursor.seen = None if seen is None else {e.seat: e for e in seen}
        cursor.needs_full = seen is None
        cursor.welcomed = True
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
        if self._owed_timer is not None:
            self._owed_timer.cancel()
        self.service.ticker.forget(self)
        if self._racers_timer is not None:
            self._racers_timer.cancel()
        if self._flushing is not None:
            self._flushing.cancel()
        for task in self._tasks:
            task.cancel()

    def spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)

    def _task_done(self, task: "asyncio.Task[Any]") -> None:
        """A task of this hub is over: forgotten, and its failure logged with the race. Why: an exception
        nobody retrieves shows at best as asyncio's complaint when the task is collected, naming no race
        (a lost announcement or catch-up was invisible)."""
        self._tasks.discard(task)
        if task.cancelled() or (exc := task.exception()) is None:
            return
        if isinstance(exc, UNAVAILABLE):
            log("hub_task_failed", logging.WARNING, race=self.race, error=exc)
        else:
            logger.error(format_event("hub_task_failed", {"race": self.race, "error": repr(exc)}), exc_info=exc)

    async def _time_up(self) -> None:
        await self.service.end_race(self.race)

    def _told(self, change: EventKind) -> bool:
        return change in self._announced

    def announced(self, change: EventKind) -> bool:
        """Whether this hub will announce ``change`` no more (it did, or its first meta showed it): a
        connection welcomed since must be told by its welcome."""
        return change in self._announced

    def _first_time(self, change: EventKind) -> bool:
        """True once per phase change: a start or an end is announced once, however it was heard
        (called with no await before the frames go out, so two announcers cannot both send)."""
        if change in self._announced:
            return False
        self._announced.add(change)
        return True

    async def catch_up(self) -> None:
        """Redo what a lost pub/sub message would have done (the race moved on without this hub hearing).

        Why: pub/sub delivers at most once; a message published while this
        process's subscription was down (Redis restarting, a failover, a
        dropped connection) is gone. The stored race is the truth, so
        compare it with what this hub's connections were told.
        """
        meta = await self.service.store.meta(self.race)
        if meta is None:
            if self.meta is not None and self.meta.status == "lobby":
                self.on_event(self.version + 1, EventKind.ABANDON)
            return
        if meta.started and not self._told(EventKind.START):
            self.on_event(meta.version, EventKind.START)
        if meta.status == "finished" and not self._told(EventKind.END):
            self.on_event(meta.version, EventKind.END)
        self.on_event(meta.version, None)

    # ---------------------------------------------------------- events
    def on_event(self, version: int, kind: EventKind | None) -> None:
        """An event of this race was stored (by any process); None: something changed (a catch-up)."""
        self.version = max(self.version, version)
        self.heard = max(self.heard, version)
        if kind is not None:
            self._noted = max(self._noted, version)
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
        ttl = self.service.config.lobby_ttl
        frame = p.encode(p.error(p.ErrorCode.RACE_NOT_FOUND,
                                 f"the race was removed before it started: nobody started it within {ttl} s of its "
                                 "creation, or (a race formed from seeks) a player did not come in time"))
        for conn in list(self.conns):
            conn.send(frame)
            conn.close_after_queue(p.CloseCode.NORMAL)

    async def _release_left_seats(self) -> None:
        """A lobby seat was given back: the connections still holding it (other connections of
        that player, here or on a process that heard late) are told ``left`` and closed, before a
        new player can be taken for them."""
        holders = [conn for conn in self.conns if conn.seat is not None]
        seats = {conn.seat for conn in holders if conn.seat is not None}
        claims = {seat: await self.service.store.seat(self.race, seat) for seat in seats}
        frame = p.encode(p.Left(version=self.version))
        for conn in holders:
            claim = claims.get(conn.seat) if conn.seat is not None else None
            if claim is None or claim.status == "left" or claim.gen != conn.gen:
                conn.send(frame)
                conn.close_after_queue(p.CloseCode.NORMAL)

    async def _announce_start(self) -> None:
        if self._told(EventKind.START):
            return
        meta = await self.service.store.meta(self.race)
        if meta is None or not self._first_time(EventKind.START):
            return
        self.set_meta(meta)
        self._send_countdown(meta, [conn for conn, cursor in self.conns.items() if cursor.welcomed])

    def _send_countdown(self, meta: RaceMeta, conns: list[Listener]) -> None:
        """The start, with the first board for players (spectators never see one)."""
        view = p.View.from_player_view(races.new_game(meta).view())
        countdown = p.Countdown(version=self.version, starts_at=meta.starts_at, ends_at=meta.ends_at,
                                server_time=now_ms())
        for_players = p.encode(msgspec.structs.replace(countdown, view=view))
        for_spectators = p.encode(countdown)
        for conn in conns:
            conn.send(for_players if conn.seat is not None else for_spectators)
            self.service.metrics.sent("countdown")

    async def _countdown_to(self, conn: Listener) -> None:
        meta = await self.service.store.meta(self.race)
        if meta is not None and meta.started and conn in self.conns:
            self._send_countdown(meta, [conn])

    async def _announce_end(self) -> None:
        if self._told(EventKind.END):
            return
        blob = await self.service.store.results(self.race)
        meta = await self.service.store.meta(self.race)
        if blob is None or meta is None or not self._first_time(EventKind.END):
            return
        self.set_meta(meta)
        if self._end_timer is not None:
            self._end_timer.cancel()
        frame = p.encode(p.Finished(version=meta.version, results=races.shown_results(meta, blob, now_ms())))
        for conn, cursor in list(self.conns.items()):
            if cursor.welcomed:
                conn.send(frame)
                self.service.metrics.sent("finished")

    # -------------------------------------------------------- progress
    def learn(self, version: int, seat: int, line: bytes | None, held: bool) -> None:
        """A move of this process's connection was stored at ``version``, writing ``line``: the table takes
        it without reading it back, and the next tick flushes it. ``held``: the moves script held back the
        race's note of it (another move announced the race within the tick): this process announces it
        :data:`OWED_TICKS` ticks later, unless a note of a later version comes first (in a race that goes on
        moving, the next tick's first move announces it), so the other processes' hubs read it.

        Why the committer announces: the note was the only way another process heard of a move, and a
        hub read its table once more a tick after each note for the moves the tick key held back: a
        second read of the whole table for nearly every move at a human pace.

        A move that changes nothing a racer sees (most at a human pace: only its move count) is not
        flushed at once when only racers watch here: their tables catch up within :data:`RACER_LAG`, as
        :meth:`_racers_changes` would have decided after a flush; nor is one made before the racers' next
        frame is due (``racer_interval``): the flush then takes it (one flush, not one now that sends
        nothing and another when the frame is due)."""
        self.version = max(self.version, version)
        before = self.table.lines.get(seat) if self.table.version == version - 1 else None
        if line is not None:
            self.table.wrote(version, seat, line)
            if self.table.complete_at(version) and self._told(EventKind.START):
                # Every version up to this one is in the table, and none of them is a phase change still to
                # announce (the start was; an end comes after the last move): nothing for a catch-up to do.
                self.heard = max(self.heard, version)
        if held:
            self._owed = max(self._owed, version)
            if self._owed_timer is None:
                self._owed_timer = asyncio.get_running_loop().call_later(
                    self.service.ticker.interval * OWED_TICKS, self._announce_owed)
        if self.table.version == version and self._racers_only():
            if before is not None and moves_only(before, self.table.lines[seat]):
                self._racers_behind()
                return
            wait = self._racers_last + self.service.racer_interval - time.monotonic()
            if wait > 0:  # the racers' next frame is not due yet: its flush will take this change too
                self._racers_behind()
                self._racers_due_in(wait)
                return
        self.mark_dirty()

    def _racers_only(self) -> bool:
        """Only racers with their table up to date are connected here (no spectator, no welcome owed a table).

        Kept until a connection comes, goes, is welcomed or is sent its table (:attr:`_racers_current`):
        this runs for every move, and a race's connections change a few times in its life."""
        current = self._racers_current
        if current is None:
            current = self._racers_current = all(
                conn.seat is not None and cursor.welcomed and not cursor.needs_full and cursor.seen is None
                for conn, cursor in self.conns.items())
        return current

    def _racers_behind(self) -> None:
        """The racers' tables lack a change they do not see: a flush sends it within :data:`RACER_LAG`."""
        if self._racers_behind_since is None:
            self._racers_behind_since = time.monotonic()
        self._racers_due_in(RACER_LAG)

    def _announce_owed(self) -> None:
        self._owed_timer = None
        if self._owed > self._noted:  # no note of it (or of a later version) came meanwhile
            self.spawn(self._publish_move())

    async def _publish_move(self) -> None:
        try:
            await self.service.store.announce(self.race)
        except UNAVAILABLE as exc:  # the other processes' catch-up finds the version (Service._catch_up)
            log("announce_failed", race=self.race, error=exc)

    def known_lines(self) -> tuple[int, list[Line]] | None:
        """The race's version and lines, when this hub's table has every change it has heard of (no read
        needed); None otherwise."""
        table = self.table
        return (table.version, table.sorted_lines()) if table.complete_at(self.version) else None

    def mark_dirty(self) -> None:
        self._dirty = True
        self.service.ticker.mark(self)

    def tick(self) -> None:
        """The ticker's turn: flush once, unless the last flush is still under way (then next tick)."""
        if self._flushing is not None:
            self.service.ticker.mark(self)
            return
        if not self._dirty:
            return
        self._dirty = False
        self._flushing = asyncio.ensure_future(self._flush_once())

    async def _flush_once(self) -> None:
        try:
            await self._flush()
        except UNAVAILABLE as exc:
            log("progress_failed", race=self.race, error=exc)
            self._dirty = True
        finally:
            self._flushing = None
            if self._dirty:
                self.service.ticker.mark(self)

    async def _flush(self) -> None:
        if self.meta is None:
            meta = await self.service.store.meta(self.race)
            if meta is None:
                return
            self.set_meta(meta)
        assert self.meta is not None
        if not self.table.complete_at(self.version):
            self.table.read(*await self.service.store.lines(self.race))
        version, lines = self.table.version, self.table.sorted_lines()
        if (version == self._read_version and self._racers_behind_since is None
                and not any(c.needs_full or c.seen is not None for c in self.conns.values())):
            return  # nothing stored since the last table (a trailing flush after a quiet tick): nothing to send
        self._read_version = version
        self._racers_current = None  # the cursors change below (each is sent its table, or owed a full one)
        total = get_variant(self.meta.variant).total_cards
        table = races.progress_lines(lines, self.meta.started, total, self._made)
        changed = [e for e in table if self._last_sent.get(e.seat) != e]
        seats = {e.seat for e in table}
        if self._last_sent.keys() - seats or self._racers_sent.keys() - seats:
            # A seat given back left the table: a merge by seat cannot drop a line, a full table can.
            for cursor in self.conns.values():
                cursor.needs_full, cursor.seen = True, None
        self._last_sent = {e.seat: e for e in table}
        racers_changed = self._racers_changes(table, first=any(
            conn.seat is not None and cursor.welcomed and (cursor.needs_full or cursor.seen is not None)
            for conn, cursor in self.conns.items()))
        # Every racer given its table has the racers' table; one given its first (full, or the difference
        # from its resumed welcome) has this one: only once the racers' table is this one too may it be
        # given it, or the racers' next frame (made from theirs) would repeat lines it has, and miss a line
        # changed back to what theirs shows (a rival ready, then waiting again: never sent to it).
        racers_in_step = self._racers_behind_since is None
        self.version = max(self.version, version)
        status = self.meta.phase(now_ms())
        delta = racers_delta = full = None
        sent = 0
        for conn, cursor in list(self.conns.items()):
            if not cursor.welcomed:
                continue
            if (cursor.needs_full or cursor.seen is not None) and version < cursor.table_version:
                # Read before this connection's welcome: its first table must not go back in time.
                self._dirty = True
                continue
            if (cursor.needs_full or cursor.seen is not None) and conn.seat is not None and not racers_in_step:
                continue  # the racers' frame is not due yet: its flush gives this racer its first table
            if cursor.needs_full:
                cursor.needs_full = False
                if full is None:
                    full = p.encode(p.Progress(version=version, server_time=now_ms(), race_status=status,
                                               players=table, full=True))
                conn.hold(full)
                sent += 1
            elif cursor.seen is not None:
                # Resumed: this connection's table is the one its welcome left it with, not the hub's.
                own = [e for e in table if cursor.seen.get(e.seat) != e]
                cursor.seen = None
                if own:
                    conn.hold(p.encode(p.Progress(version=version, server_time=now_ms(), race_status=status,
                                                  players=own)))
                    sent += 1
            elif conn.seat is not None:
                if racers_changed:
                    if racers_delta is None:
                        racers_delta = p.encode(p.Progress(version=version, server_time=now_ms(),
                                                           race_status=status, players=racers_changed))
                    conn.hold(racers_delta)
                    sent += 1
            elif changed:
                if delta is None:
                    delta = p.encode(p.Progress(version=version, server_time=now_ms(), race_status=status,
                                                players=changed))
                conn.hold(delta)
                sent += 1
        self.service.progress_frames += sent
        self.service.metrics.sent("progress", sent)


    def _racers_changes(self, table: list[p.PlayerProgress], first: bool = False) -> list[p.PlayerProgress]:
        """The lines to send the racers now: every line that differs from theirs once one of them differs
        in what a racer's screen shows (:func:`shared.protocol.racer_sees`), or once they have been behind
        for :data:`RACER_LAG`, or (``first``) a racer waits for its first table, and at most one frame every
        ``racer_interval`` (``--racer-hz``); none before (a timer marks the hub when they are due).

        Why: at a human pace most moves change only a racer's move count, which no racer's screen shows,
        and each flush cost a frame to every racer of the race (most of a move's CPU). And a racer watches
        its own board: the others' cards home a quarter of a second later change nothing it does, where a
        frame to every racer for each card any of them brought home was most of what a move still cost.
        Spectators still get every change at ``progress_hz``. Coalesced, not dropped: the racers' frames
        carry every change since their last, so a racer's table is still exactly the race's at the frame's
        version (a resume diffs from it).
        """
        behind = [e for e in table if self._racers_sent.get(e.seat) != e]
        if not behind:
            self._racers_behind_since = None
            if len(self._racers_sent) != len(table):  # a seat given back: every table is sent whole
                self._racers_sent = {e.seat: e for e in table}
            return behind
        now = time.monotonic()
        seen = self._racers_sent
        if self._racers_behind_since is None:
            self._racers_behind_since = now
        if (first or any(e.seat not in seen or p.racer_sees(seen[e.seat]) != p.racer_sees(e) for e in behind)
                or now - self._racers_behind_since >= RACER_LAG):
            wait = self._racers_last + self.service.racer_interval - now
            if wait <= 0:
                self._racers_sent = {e.seat: e for e in table}
                self._racers_behind_since = None
                self._racers_last = now
                return behind
            self._racers_due_in(wait)
            return []
        self._racers_due_in(self._racers_behind_since + RACER_LAG - now)
        return []

    def _racers_due_in(self, seconds: float) -> None:
        """Have the hub marked for the racers within ``seconds`` (a timer armed for later is brought forward).

        The due time is kept here, not asked of the timer: uvloop answers ``call_later(0)`` with a plain
        ``Handle``, which has no ``when()`` (the move that asked again got ``internal`` under load)."""
        loop = asyncio.get_running_loop()
        delay = max(0.0, seconds)
        due = loop.time() + delay
        if self._racers_timer is not None:
            if self._racers_due_at <= due:
                return
            self._racers_timer.cancel()
        self._racers_due_at = due
        self._racers_timer = loop.call_later(delay, self._racers_due)

    def _racers_due(self) -> None:
        self._racers_timer = None
        if self._racers_behind_since is not None:
            self.mark_dirty()

OWED_TICKS = 3
"""Ticks a process waits before announcing a move of its own whose note the moves script held back. At
one tick (the first try) it announced half the moves of bench/event_round.py itself, a publish each: in a
race that goes on moving, a later move's note comes within three ticks and covers it. The cost is on
the other processes' racers only (this process's hub took the move at once): a move that ended a burst
reaches them up to three ticks late."""

RACER_LAG = 1.0
"""Seconds the racers' tables may lag behind with changes no racer sees (a move count) before a flush
sends them anyway: every racer's version (and move counts) catches up within this while the race is quiet."""


class ProgressTicker:
    """The process's progress clock: each tick, every hub marked since the last flushes once.

    At most ``progress_hz`` ticks a second, so no race gets more progress frames than that; a tick
    comes at once when the ticker was idle (the first change after a quiet spell is not held back).
    Why one clock for every hub: their table reads start in the same loop pass and go to Redis in one
    round trip of the batcher, and one timer wakes the process per tick, not one per race.
    """

    def __init__(self, hz: float) -> None:
        self.interval = 1.0 / hz
        self._marked: dict[RaceHub, None] = {}
        """The hubs to flush at the next tick, in the order they were marked."""
        self._task: asyncio.Task[None] | None = None

    def mark(self, hub: RaceHub) -> None:
        self._marked[hub] = None
        if self._task is None:
            self._task = asyncio.ensure_future(self._run())

    def forget(self, hub: RaceHub) -> None:
        self._marked.pop(hub, None)

    async def _run(self) -> None:
        try:
            while self._marked:
                hubs, self._marked = self._marked, {}
                for hub in hubs:
                    hub.tick()
                await asyncio.sleep(self.interval)
        finally:
            self._task = None
