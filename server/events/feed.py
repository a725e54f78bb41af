"""Live event frames for spectators: one feed per event per process, however many watch.

A feed looks every :data:`FEED_SECONDS` at the event's version and at the versions of the current
round's heats (one read for all); when any moved it builds one :class:`~shared.protocol.EventLive`
frame (the event, its standings, each entrant of the round as its heat's table shows it, with the
matchpoints the round would give if the heats ended now) and hands the same encoded frame to every
watcher. So frames are coalesced like a race's progress: at most five a second, only on change,
and a watcher that reads slowly is dropped rather than slowing the others. Spectators learn nothing
a race's spectator does not (no board, no deal before the end).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Callable

import msgspec

from shared import protocol as p
from shared import scoring
from shared.standings import final_status
from shared.variants import get_variant

from ..ops.log import log
from ..race import rules as races
from ..race.clock import now_ms
from ..store import UNAVAILABLE, Line, RaceMeta, Store
from ..store.events import EventStore
from .format import format_of

FEED_SECONDS = 0.2
"""How often a feed looks for changes: a watcher sees a change within this (plus a read) at most,
and a feed sends at most five frames a second."""
WATCHER_QUEUE = 8
"""Frames a watcher may have unread before it is dropped (each frame is complete: it loses nothing)."""

_json = msgspec.json.Encoder()


class Feeds:
    """This process's live event feeds: one per event watched here, gone when its last watcher is."""

    def __init__(self, events: EventStore, store: Store) -> None:
        self.events = events
        self.store = store
        self.live: dict[str, EventFeed] = {}

    def watch(self, event: str) -> tuple["EventFeed", asyncio.Queue[bytes | None]]:
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
        self.watchers: set[asyncio.Queue[bytes | None]] = set()
        self.last: bytes | None = None
        self._seen: tuple[int, ...] | None = None
        self._task: asyncio.Task[None] | None = None
        self._standings: tuple[int, p.EventInfo, p.EventStandings] | None = None
        """The event's description and standings at an event version: they change only when the event
        does (an entry, a step, a scored round), not with every move of a heat."""
        self._heat_rows: dict[str, tuple[int, list[tuple[scoring.RoundResult, p.LiveStatus]]]] = {}
        """Each heat's entrants as its table showed them at a race version (a heat that did not move
        since the last frame is not read again)."""

    def watch(self) -> asyncio.Queue[bytes | None]:
        """A new watcher's queue: the latest frame at once, then every new one (None: the feed ended)."""
        queue: asyncio.Queue[bytes | None] = asyncio.Queue(WATCHER_QUEUE)
        if self.last is not None:
            queue.put_nowait(self.last)
        self.watchers.add(queue)
        if self._task is None:
            self._task = asyncio.ensure_future(self._run())
        return queue

    def unwatch(self, queue: asyncio.Queue[bytes | None]) -> None:
        self.watchers.discard(queue)

    async def _run(self) -> None:
        try:
            while self.watchers:
                try:
                    frame = await self.frame()
                except UNAVAILABLE as exc:
                    log("event_feed_failed", logging.WARNING, tournament=self.event, error=exc)
                    frame = None
                if frame is not None:
                    self._send(frame)
                await asyncio.sleep(FEED_SECONDS)
        finally:
            self._task = None
            for queue in list(self.watchers):
                if queue.empty():
                    queue.put_nowait(None)
            if self.feeds.live.get(self.event) is self:
                del self.feeds.live[self.event]

    def _send(self, frame: bytes) -> None:
        self.last = frame
        for queue in list(self.watchers):
            try:
                queue.put_nowait(frame)
            except asyncio.QueueFull:  # a watcher this far behind is cut loose
                self.watchers.discard(queue)
                log("event_watcher_dropped", tournament=self.event)

    async def frame(self) -> bytes | None:
        """The next frame's JSON, or None when nothing moved since the last."""
        events, store = self.feeds.events, self.feeds.store
        meta = await events.meta(self.event)
        if meta is None:
            return None
        fmt = format_of(meta.format)
        heats = [(h.heat, h.race, h.entrants) for h in fmt.live_heats(meta)]
        versions = await store.versions([race for _, race, _ in heats])
        seen = (meta.version, *(v or 0 for v in versions))
        if seen == self._seen:
            return None
        self._seen = seen
        if self._standings is None or self._standings[0] != meta.version:
            self._standings = (meta.version, await fmt.info(events, meta), await fmt.standings(events, meta))
        _, info, table = self._standings
        live = await self._live(meta.variant, heats, dict(zip((race for _, race, _ in heats), versions)),
                                fmt.live_points) if heats else []
        return _json.encode(p.EventLive(event=info, standings=table, live=live, server_time=now_ms()))

    async def _live(self, variant: str, heats: list[tuple[int, str, list[str]]], versions: dict[str, int | None],
                    score: Callable[[list[scoring.RoundResult]], dict[str, int]]) -> list[p.EventLiveLine]:
        """Every entrant of the live heats as its heat's table shows it, scored (by the format's ``score``)
        as if the heats ended now."""
        store = self.feeds.store
        moved = [(heat, race, accounts) for heat, race, accounts in heats
                 if self._heat_rows.get(race, (None,))[0] != versions.get(race)]
        metas = await store.metas([race for _, race, _ in moved])
        tables = await asyncio.gather(*(store.lines(race) for _, race, _ in moved))  # concurrent round trips
        total = get_variant(variant).total_cards
        for (heat, race, accounts), race_meta, (version, lines) in zip(moved, metas, tables):
            self._heat_rows[race] = (version, _heat_rows(heat, race, accounts, race_meta, lines, total))
        field = [row for _, race, _ in heats for row in self._heat_rows[race][1]]
        points = score([r for r, _ in field])
        return [p.EventLiveLine(account=r.account, heat=r.heat or 0, race=r.race or "", status=shown_status,
                                home=r.home, matchpoints=points[r.account] / 2) for r, shown_status in field]


def _heat_rows(heat: int, race: str, accounts: list[str], race_meta: RaceMeta | None, lines: list[Line],
               total: int) -> list[tuple[scoring.RoundResult, p.LiveStatus]]:
    """A heat's entrants as its table shows them: each one's result so far, and its shown status."""
    starts = race_meta.starts_at if race_meta else 0
    # A heat takes only its entrants, who join under their account's name: the name is the account.
    by_account = {line.name.casefold(): line for line in lines}
    shown = {e.seat: e for e in races.progress_lines(lines, bool(race_meta and race_meta.started), total)}
    rows: list[tuple[scoring.RoundResult, p.LiveStatus]] = []
    for account in accounts:
        line = by_account.get(account)
        if line is None:
            rows.append((scoring.RoundResult(account, race, heat, scoring.NO_SHOW, 0, None, None), "not_joined"))
            continue
        r = scoring.result_at(account, race, heat, line.status, line.home, line.finished_at, line.home_at, starts)
        rows.append((r, shown[line.seat].status if line.seat in shown else final_status(line.status)))
    return rows
