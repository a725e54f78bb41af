"""The event runner: moves every event along, from whichever server process gets there first.

Every process ticks every :data:`TICK_SECONDS` over the active events: it starts a scheduled event
whose time has come (the organiser's start, by the same transition), makes a recurring event's next
occurrence once the current one has left registration, and hands each running event to its format
(server/events/format.py, found in the ``Formats`` it is given), which takes the one step it is due
for; the runner knows no format. Each step is a transition of the state table
(shared/event_states.py), a compare-and-set in Redis, so of processes trying the same step one wins,
and a process killed mid-step leaves nothing the others cannot finish: an event's races are races
like any other.
"""

from __future__ import annotations

import logging

import msgspec

from shared.schedules import BadSchedule, next_start

from ..deals.checked import PoolUnavailable
from ..ops.log import log
from ..race.clock import now_ms
from ..store import StoreError
from ..store.events import EventMeta
from ..store.keys import occurrence_id
from .context import EventContext
from .format import Formats, UnknownFormat
from .secrecy import unseal

TICK_SECONDS = 0.5


class EventRunner:
    """One process's share of running the events (all processes run one)."""

    def __init__(self, ctx: EventContext, formats: Formats) -> None:
        self.ctx = ctx
        self.formats = formats
        self.events = ctx.events
        self._read: dict[str, EventMeta] = {}
        """Each active event as this runner last read it (:meth:`_meta`)."""

    async def tick(self) -> None:
        active = await self.events.active_ids()
        self._read = {event: meta for event, meta in self._read.items() if event in active}
        for event in active:
            meta = await self._meta(event)
            if meta is None:
                await self.events.finish(event)
                continue
            try:
                await self.advance(meta)
            except (StoreError, PoolUnavailable, UnknownFormat, BadSchedule) as exc:  # (the others still move on)
                log("event_step_failed", logging.WARNING, tournament=event, round=meta.round, state=meta.round_state,
                    error=exc)

    async def _meta(self, event: str) -> EventMeta | None:
        """The event as it is now: read whole only when its version moved since this runner's last read.

        Why: a tick comes twice a second, and the whole event holds its schedule (every heat and entrant,
        JSON) while nearly every tick of a round finds it as it was (the version moves with every step,
        entry and score: store/events.py), which is then one HGET instead of every field and a decode."""
        kept = self._read.get(event)
        if kept is not None and await self.events.version(event) == kept.version:
            return kept
        meta = await self.events.meta(event)
        if meta is None:
            self._read.pop(event, None)
        else:
            self._read[event] = meta
        return meta

    async def advance(self, meta: EventMeta) -> None:
        """The step ``meta`` is due for, if any: its own start once its time has come, its format's while
        it runs; and, for an occurrence of a series that has left registration, the next occurrence."""
        now = now_ms()
        if meta.status == "registration":
            if meta.scheduled_at and now >= meta.scheduled_at and await self.start(meta) is not None:
                log("event_started_on_schedule", tournament=meta.id, late_ms=now - meta.scheduled_at)
            return
        if meta.repeat and not meta.next_event:
            await self._next_occurrence(meta, now)
        if meta.status == "finished":
            await self._finished(meta)
        elif meta.status == "cancelled":
            await self.events.finish(meta.id)  # (no race was made: nothing to unseal)
        elif meta.status == "running":
            await self.formats.of(meta.format).advance(self.ctx, meta, now)

    async def _next_occurrence(self, meta: EventMeta, now: int) -> None:
        """Make the occurrence after ``meta`` (started or cancelled), with the series' settings, at the
        next time its cron names after this one's start (or after now, when that is later: a series that
        fell behind skips what it missed rather than start a burst)."""
        settings = await self.events.series_settings(meta.series)
        if settings is None:
            return
        number = meta.occurrence + 1
        starts = next_start(meta.repeat, max(meta.scheduled_at, now))
        nxt = EventMeta.create(msgspec.structs.replace(settings, starts_at=starts), occurrence_id(meta.series, number),
                               now, series=meta.series, occurrence=number)
        if await self.events.series_next(meta, nxt):
            log("event_series_next", tournament=meta.id, series=meta.series, next=nxt.id, starts_at=starts)

    async def start(self, meta: EventMeta) -> EventMeta | None:
        """The organiser's start: registration closes (entrants who did not check in are withdrawn first,
        when the event asks for check-in) and the format's first step is due at once. None when the event
        had started already."""
        fmt = self.formats.of(meta.format)
        if meta.check_in and meta.status == "registration":
            # Before the start's step: a check-in racing the start is either in (and plays) or refused.
            dropped = await self.events.drop_unchecked(meta.id)
            log("event_check_in_closed", tournament=meta.id, dropped=dropped)
            meta = await self.events.meta(meta.id) or meta
        if meta.status != "registration":
            return None
        now = now_ms()
        if not await self.ctx.step(meta, fmt.start, now, **fmt.start_changes(meta, now)):
            return None
        return await self.ctx.reread(meta)

    async def _finished(self, meta: EventMeta) -> None:
        """An event that is over: off the runner's list."""
        schedule = await self.formats.of(meta.format).schedule(self.events, meta)
        await unseal(self.ctx.races.store, schedule)  # (again: a process may have died between the two)
        await self.events.finish(meta.id)
