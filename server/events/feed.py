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
from typing import TYPE_CHECKING

import msgspec

from shared import protocol as p
from shared import scoring
from shared.standings import final_status
from shared.variants import get_variant

from ..ops.log import log
from ..race import rules as races
from ..race.clock import now_ms
from ..store import UNAVAILABLE, Line, RaceMeta
from ..store.events import EventMeta
from .standings import arena_standings, event_info, standings

if TYPE_CHECKING:
    from ..race.service import Service

FEED_SECONDS = 0.2
"""How often a feed looks for changes: a watcher sees a change within this (plus a read) at most,
and a feed sends at most five frames a second."""
WATCHER_QUEUE = 8
"""Frames a watcher may have unread before it is dropped (each frame is complete: it loses nothing)."""

_json = msgspec.json.Encoder()


class EventFeed:
    """The frames of one event, for this process's watchers."""

    def __init__(self, service: "Service", event: str) -> None:
        self.service = service
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
            self.service.event_feeds.pop(self.event, None)

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
        events, store = self.service.events, self.service.store
        meta = await events.meta(self.event)
        if meta is None:
            return None
        heats = self._heats(meta)
        versions = await store.versions([race for _, race, _ in heats])
        seen = (meta.version, *(v or 0 for v in versions))
        if seen == self._seen:
            return None
        self._seen = seen
        if self._standings is None or self._standings[0] != meta.version:
            entrants = await events.entrants(meta.id)
            if meta.format == "arena":
                info = event_info(meta, await events.arena_races(meta.id))
                table = arena_standings(meta, entrants, await events.arena_states(meta.id))
            else:
                info = event_info(meta)
                table = standings(meta, entrants, await events.results(meta.id))
            self._standings = (meta.version, info, table)
        _, info, table = self._standings
        live = []
        if meta.format == "duplicate" and meta.round_state == "running":
            live = await self._live(meta, heats, dict(zip((race for _, race, _ in heats), versions)))
        return _json.encode(p.EventLive(event=info, standings=table, live=live, server_time=now_ms()))

    def _heats(self, meta: EventMeta) -> list[tuple[int, str, list[str]]]:
        """The races whose changes show: the current round's heats (an arena's races under way)."""
        if meta.format == "duplicate":
            current = meta.schedule[-1].heats if meta.schedule and meta.status == "running" else []
            return [(h.heat, h.race, h.entrants) for h in current]
        return []

    async def _live(self, meta: EventMeta, heats: list[tuple[int, str, list[str]]],
                    versions: dict[str, int | None]) -> list[p.EventLiveLine]:
        """Every entrant of the round as its heat's table shows it, scored as if the heats ended now."""
        store = self.service.store
        moved = [(heat, race, accounts) for heat, race, accounts in heats
                 if self._heat_rows.get(race, (None,))[0] != versions.get(race)]
        metas = await store.metas([race for _, race, _ in moved])
        tables = await asyncio.gather(*(store.lines(race) for _, race, _ in moved))  # concurrent round trips
        total = get_variant(meta.variant).total_cards
        for (heat, race, accounts), race_meta, (version, lines) in zip(moved, metas, tables):
            self._heat_rows[race] = (version, _heat_rows(heat, race, accounts, race_meta, lines, total))
        field = [row for _, race, _ in heats for row in self._heat_rows[race][1]]
        points = scoring.matchpoints([r for r, _ in field])
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
