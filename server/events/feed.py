"""Live event frames for spectators: one feed per event per process, however many watch.

A feed wakes on the notes of the current round's heats (the races' own pub/sub messages, which this
process hears through its one subscription: :meth:`Service.listen`), or at the latest every
:data:`FEED_POLL_SECONDS` (the event's own changes, entries, steps and scores, publish nothing; a note
can be lost). Awake, it looks at the event's version and at every heat's version, and takes the tables
of the heats that moved: those whose racers play here as this process's hubs know them (their own
moves' lines: server/race/table.py; no read at all), the others read (one round trip for their versions,
then one a table). When anything moved it builds one
:class:`~shared.protocol.EventLive` frame (the event, its standings, each entrant of the round as
its heat's table shows it, with the matchpoints the round would give if the heats ended now) and
hands the same encoded frame to every watcher. So frames are coalesced like a race's progress: at
most five in any one second (:data:`FRAMES_A_SECOND`), only on change, and a watcher that reads slowly is dropped rather than slowing
the others. Spectators learn nothing a race's spectator does not (no board, no deal before the end).

Why notes wake it rather than a poll every 0.2 s: a quiet event costs nothing (a poll a second), and
the first change after a quiet spell is framed at once. Why it still reads every heat's version once
awake, rather than only the heats whose notes came: a heat announces at most one move a progress tick
(moves.lua), and under load this process's subscription hears notes late (tried: standings-frame p99
1,261 ms in bench/event_round.py, against 305 ms polling), while the version read is one round trip.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from typing import Awaitable, Callable, Protocol, cast

import msgspec

from shared import protocol as p
from shared import scoring
from shared.standings import shown_status

from ..ops.log import log
from ..race.clock import now_ms
from ..race.outbox import Outbox
from ..race.table import moves_only
from ..race.tasks import report
from ..store import UNAVAILABLE, Line, RaceMeta, Store
from ..store.events import EventMeta, EventStore
from .format import Formats

FEED_SECONDS = 0.2
"""How often a feed looks for changes: a watcher sees a change within this (plus a read) at most."""
FRAMES_A_SECOND = 5
"""The most frames a feed sends in any one second (any window, not an average: a frame that took long
to make is not followed by one sooner to catch up): the frame after the last five waits until a second
has passed since the first of them."""
FEED_POLL_SECONDS = 1.0
"""How often a feed looks at every heat and at the event itself, notes or not: the longest a lost note
or a change of the event's own (an entry, a step) waits."""
FEED_READS_AT_ONCE = 32
"""Heat tables a feed reads at once. On a Redis Cluster each is a call of its own: a round of hundreds of
heats read all at once took every pooled connection, and the moves of the running heats queued behind
them (the client waits for a free connection: store/client.py; it used to refuse them)."""
WATCHER_QUEUE = 8
"""Frames a watcher may have unread before it is dropped (each frame is complete: it loses nothing)."""

_json = msgspec.json.Encoder()


class RaceNotes(Protocol):
    """Where a feed hears of its heats' notes (the race service: its pub/sub subscription)."""

    def listen(self, race: str, heard: Callable[[str], None]) -> Awaitable[None]: ...

    def unlisten(self, race: str, heard: Callable[[str], None]) -> Awaitable[None]: ...

    def known_lines(self, race: str) -> tuple[int, list[Line]] | None:
        """The race's version and lines as this process knows them without a read (its hub's table), or None."""


class Feeds:
    """This process's live event feeds: one per event watched here, gone when its last watcher is."""

    def __init__(self, events: EventStore, store: Store, notes: RaceNotes | None = None, *, formats: Formats,
                 sse_event: Callable[[bytes], bytes]) -> None:
        self.events = events
        self.store = store
        self.notes = notes
        self.formats = formats
        self.sse_event = sse_event
        """A frame's Server-Sent Event bytes (the web layer's encoding, handed in by the composition root:
        the events import nothing of the web)."""
        """None: the feeds poll every heat at each frame (no subscription to hear notes by)."""
        self.live: dict[str, EventFeed] = {}

    def watch(self, event: str) -> tuple["EventFeed", Outbox]:
        """The event's feed (made on the first watcher) and a new watcher's queue of it."""
        feed = self.live.get(event)
        if feed is None:
            feed = self.live[event] = EventFeed(self, event)
        return feed, feed.watch()

    async def frame(self, event: str) -> bytes | None:
        """A frame of the event at once, however quiet (a fresh feed's first), as every watcher gets them."""
        return await EventFeed(self, event).frame()


class EventFeed:
    """The frames of one event, for this process's watchers."""

    def __init__(self, feeds: Feeds, event: str) -> None:
        self.feeds = feeds
        self.event = event
        self.watchers: set[Outbox] = set()
        self.last: bytes | None = None
        self._event: tuple[bytes, bytes] | None = None
        """The latest frame and its Server-Sent Event (:meth:`as_event`)."""
        self._seen: tuple[int | None, ...] | None = None
        self._task: asyncio.Task[None] | None = None
        self._read_event: tuple[EventMeta, msgspec.Raw, msgspec.Raw] | None = None
        """The event as last read, with its description and standings encoded: read and made again only
        when its version moved (an entry, a step, a scored round), not with every move of a heat. A frame
        reads the version alone: the whole event holds the schedule, every heat and entrant."""
        self._heat_rows: dict[str, HeatRows] = {}
        """Each heat's entrants as its table showed them at a race version (a heat that did not move since
        the last frame is not read again; one that moved makes again only the rows of the lines that changed)."""
        self._field: list[str] = []
        """The accounts of the last frame's field, in the heats' order."""
        self._index: dict[str, int] | None = None
        """Where each account of :attr:`_field` is in it (None: an account has two rows there)."""
        self._best_first: list[int] = []
        """The last frame's field, best first, as places in it: the next frame scores it in this order."""
        self._started: dict[str, RaceMeta] = {}
        """The settings of heats that have started (what a heat's rows need of them no longer changes)."""
        self._woken = asyncio.Event()
        """Set by a note of a followed heat since the last frame began."""
        self._followed: set[str] = set()
        """The heats whose notes this feed listens to."""
        self._sent: deque[float] = deque(maxlen=FRAMES_A_SECOND)
        """When (the loop's clock) the latest frames were sent, up to :data:`FRAMES_A_SECOND` of them."""

    def watch(self) -> Outbox:
        """A new watcher's outbox: the latest frame at once, then every new one (it ends with the feed, or
        when the watcher falls :data:`WATCHER_QUEUE` frames behind: the outbox's slow-reader rule)."""
        queue = Outbox(WATCHER_QUEUE)
        if self.last is not None:
            queue.put(self.last)
        self.watchers.add(queue)
        if self._task is None:
            self._task = task = asyncio.ensure_future(self._run())
            task.add_done_callback(lambda done: report(done, "event_feed_failed", tournament=self.event))
        return queue

    def as_event(self, frame: bytes) -> bytes:
        """A frame of this feed as its Server-Sent Event, encoded once for all the watchers it went to.

        Why: every watcher's stream encoded the same frame again (sse-starlette splits the data by
        lines with a regular expression and copies it twice), a frame of a 500-entrant round being
        tens of kilobytes, five times a second, so the cost grew with the watchers."""
        cached = self._event
        if cached is None or cached[0] is not frame:
            cached = self._event = (frame, self.feeds.sse_event(frame))
        return cached[1]

    def unwatch(self, queue: Outbox) -> None:
        self.watchers.discard(queue)

    def _heard(self, race: str) -> None:
        """A note of a followed heat: frame soon."""
        self._woken.set()

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            while self.watchers:
                began = loop.time()
                self._woken.clear()
                try:
                    frame = await self.frame()
                    await self._follow()
                except UNAVAILABLE as exc:
                    log("event_feed_failed", logging.WARNING, tournament=self.event, error=exc)
                    frame = None
                if frame is not None:
                    self._send(frame)
                    self._sent.append(loop.time())
                due = began + FEED_SECONDS
                if len(self._sent) == FRAMES_A_SECOND:  # (the next is sent after this, and a frame's making)
                    due = max(due, self._sent[0] + 1.0)
                await asyncio.sleep(max(0.0, due - loop.time()))
                if self.feeds.notes is not None and not self._woken.is_set():
                    try:  # quiet: until a heat speaks, or the poll is due
                        await asyncio.wait_for(self._woken.wait(), max(0.0, began + FEED_POLL_SECONDS - loop.time()))
                    except asyncio.TimeoutError:
                        pass
        finally:
            self._task = None
            for queue in list(self.watchers):
                queue.end()
            if self.feeds.live.get(self.event) is self:
                del self.feeds.live[self.event]
            await self._unfollow(self._followed)

    async def _follow(self) -> None:
        """Listen to the notes of the heats the last frame showed, and to no others."""
        notes = self.feeds.notes
        if notes is None:
            return
        heats = set(self._heat_rows)
        await self._unfollow(self._followed - heats)
        for race in heats - self._followed:
            await notes.listen(race, self._heard)
            self._followed.add(race)

    async def _unfollow(self, races: set[str]) -> None:
        notes = self.feeds.notes
        for race in list(races):
            self._followed.discard(race)
            if notes is not None:
                try:
                    await notes.unlisten(race, self._heard)
                except UNAVAILABLE:
                    pass

    def _send(self, frame: bytes) -> None:
        self.last = frame
        for queue in list(self.watchers):
            if not queue.put(frame):  # a watcher this far behind is cut loose
                self.watchers.discard(queue)
                log("event_watcher_dropped", tournament=self.event)

    async def frame(self) -> bytes | None:
        """The next frame's JSON, or None when nothing moved since the last: the event and every heat's
        version in one read, then the tables of the heats that moved."""
        events = self.feeds.events
        read = self._read_event
        if read is None or read[0].version != await events.version(self.event):
            meta = await events.meta(self.event)
            if meta is None:
                return None
            fmt = self.feeds.formats.of(meta.format)
            info, table = await fmt.info(events, meta), await fmt.standings(events, meta)
            read = self._read_event = (meta, msgspec.Raw(_json.encode(info)), msgspec.Raw(_json.encode(table)))
        meta, info_json, table_json = read
        fmt = self.feeds.formats.of(meta.format)
        heats = [(h.heat, h.race, h.entrants) for h in fmt.live_heats(meta)]
        known = self._known([race for _, race, _ in heats])
        versions = await self._versions([race for _, race, _ in heats], known)
        look = {race for _, race, _ in heats
                if race not in self._heat_rows or self._heat_rows[race].version != versions[race]}
        await self._read([h for h in heats if h[1] in look], known)
        gone = set(self._heat_rows) - {race for _, race, _ in heats}
        for race in gone:
            del self._heat_rows[race]  # a heat of an earlier round
        seen = (meta.version, *(self._heat_rows[race].version for _, race, _ in heats))
        if seen == self._seen:
            return None
        self._seen = seen
        live = self._live(heats, fmt.live_points) if heats else []
        # The event and its standings go in as the JSON they were encoded to when they last changed: the
        # encoder copies a Raw as it is, so the frame is the same bytes, without encoding a table of every
        # entrant five times a second (tests/test_events.py, the stream's frames).
        return _json.encode(p.EventLive(event=cast(p.EventInfo, info_json), standings=cast(p.EventStandings, table_json),
                                        live=live, server_time=now_ms()))

    def _known(self, races: list[str]) -> dict[str, tuple[int, list[Line]]]:
        """The heats this process's hubs know without a read (their racers play here, their tables complete
        as far as their notes say): each one's version and lines, taken once for the frame."""
        notes = self.feeds.notes
        if notes is None:
            return {}
        return {race: table for race in races if (table := notes.known_lines(race)) is not None}

    async def _versions(self, races: list[str], known: dict[str, tuple[int, list[Line]]]) -> dict[str, int | None]:
        """Each heat's version: ``known``'s, else read (one round trip for the rest)."""
        versions: dict[str, int | None] = {race: table[0] for race, table in known.items()}
        unknown = [race for race in races if race not in versions]
        if unknown:
            versions.update(zip(unknown, await self.feeds.store.versions(unknown)))
        return versions

    async def _read(self, heats: list[tuple[int, str, list[str]]],
                    known: dict[str, tuple[int, list[Line]]]) -> None:
        """Read these heats' tables again (one round trip each, concurrent), but for those ``known``
        (the heats whose racers play here: no read at all)."""
        if not heats:
            return
        store = self.feeds.store
        unstarted = [race for _, race, _ in heats if race not in self._started]
        for race, race_meta in zip(unstarted, await store.metas(unstarted)):
            if race_meta is not None and race_meta.started:
                self._started[race] = race_meta
        metas = {race: self._started.get(race) for _, race, _ in heats}
        tables = dict(known)
        unknown = [race for _, race, _ in heats if race not in known]
        for at in range(0, len(unknown), FEED_READS_AT_ONCE):  # concurrent round trips, a bounded number at once
            batch = unknown[at:at + FEED_READS_AT_ONCE]
            tables.update(zip(batch, await asyncio.gather(*(store.lines(race) for race in batch))))
        for heat, race, accounts in heats:
            version, lines = tables[race]
            before = self._heat_rows.get(race)
            if before is None or before.version != version:
                self._heat_rows[race] = heat_rows(heat, race, accounts, metas[race], version, lines, before)

    def _live(self, heats: list[tuple[int, str, list[str]]],
              score: Callable[[list[scoring.RoundResult]], dict[str, int]]) -> list[p.EventLiveLine]:
        """Every entrant of the live heats as its heat's table shows it, scored (by the format's ``score``)
        as if the heats ended now.

        The field is scored in the order the last frame's score found it, best first: between two frames
        a fifth of the rows change at most (1,000 racers, a move each a second), so a score that sorts
        (``scoring.matchpoints``) meets long runs already in order (1,000 entrants: the field scored and its
        lines in 1.1 ms instead of 1.4 ms, ``bench/feed_frame.py``)."""
        field = [row for _, race, _ in heats for row in self._heat_rows[race].rows]
        accounts = [r.account for r, _ in field]
        if accounts != self._field:  # another field than the last frame's (a new round, a withdrawal)
            self._field, self._best_first = accounts, []
            places = {account: i for i, account in enumerate(accounts)}
            self._index = places if len(places) == len(accounts) else None
        index = self._index
        if index is None:  # an account in two rows: the field scored as it stands
            points = score([r for r, _ in field])
        else:
            points = score([field[i][0] for i in self._best_first or range(len(field))])
            best = [index[account] for account in points if account in index]
            self._best_first = best if len(best) == len(field) else []
        return [p.EventLiveLine(account=r.account, heat=r.heat or 0, race=r.race or "", status=shown_status,
                                home=r.home, matchpoints=points[r.account] / 2) for r, shown_status in field]


Row = tuple[scoring.RoundResult, p.LiveStatus]
"""An entrant's result so far in its heat, and the status its heat's table shows."""


class HeatRows:
    """A heat's entrants as its table showed them at a race version (:func:`heat_rows`)."""

    __slots__ = ("version", "accounts", "rows", "lines", "at")

    def __init__(self, version: int | None, accounts: list[str], rows: list[Row], lines: list[Line],
                 at: list[int]) -> None:
        self.version = version
        self.accounts = accounts
        """The heat's entrants, in the schedule's order."""
        self.rows = rows
        """Each entrant's row, in that order."""
        self.lines = lines
        """The table the rows were made of, once the heat has started (empty before)."""
        self.at = at
        """For each of those lines, the place of its entrant's row in :attr:`rows` (-1: no entrant's)."""


def heat_rows(heat: int, race: str, accounts: list[str], race_meta: RaceMeta | None, version: int | None,
              lines: list[Line], before: HeatRows | None) -> HeatRows:
    """A heat's entrants as its table (``lines``, at ``version``) shows them: each one's result so far,
    and its shown status.

    ``before``: the heat's rows at the feed's last look. Once the heat has started a row depends on its
    line alone and the table's seats no longer change, so only the lines that changed since (in more than
    their move count: :func:`~server.race.table.moves_only`) are made into rows again, in place; the rest
    of the rows are taken as they were. Why: a frame made every row of every heat that moved, each
    found by its account's folded name, five times a second, when between two frames most lines of a heat
    changed in their move count alone, or not at all."""
    starts = race_meta.starts_at if race_meta else 0
    started = bool(race_meta and race_meta.started)
    if started and before is not None and len(before.lines) == len(lines) and lines and before.accounts == accounts:
        rows = before.rows[:]
        for i, (line, old) in enumerate(zip(lines, before.lines)):
            if line is old:
                continue
            if line.seat != old.seat or line.name != old.name:
                break  # not the table the rows were made of: make them all
            k = before.at[i]
            if k >= 0 and not moves_only(old, line):
                rows[k] = _row(rows[k][0].account, race, heat, line, started, starts)
        else:
            return HeatRows(version, accounts, rows, lines, before.at)
    # A heat takes only its entrants, who join under their account's name: the name is the account.
    by_account = {line.name.casefold(): (i, line) for i, line in enumerate(lines)}
    at = [-1] * len(lines)
    rows = []
    for k, account in enumerate(accounts):
        found = by_account.get(account)
        if found is None:
            rows.append((scoring.RoundResult(account, race, heat, scoring.NO_SHOW, 0, None, None), "not_joined"))
            continue
        at[found[0]] = k
        rows.append(_row(account, race, heat, found[1], started, starts))
    return HeatRows(version, accounts, rows, lines if started else [], at)


def _row(account: str, race: str, heat: int, line: Line, started: bool, starts: int) -> Row:
    """An entrant's row: its result so far, and the status the heat's progress table shows (its rank is
    not needed: the matchpoints order the field)."""
    r = scoring.result_at(account, race, heat, line.status, line.home, line.finished_at, line.home_at, starts)
    return r, shown_status(line.status, started, line.online)
