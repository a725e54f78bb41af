"""The event runner: moves every event along, from whichever server process gets there first.

Every process ticks every :data:`TICK_SECONDS` over the active events and tries the one step each
is due for (draw the next round's heats, start them, end them when their time is up, score the
round); each step is a compare-and-set on the event's state (``EventStore.step``), so of processes
trying the same step one wins, and a process killed mid-round leaves nothing the others cannot
finish: the heats are races like any other, and the round is scored when they have all ended.
Drawing the heats is claimed first (state ``opening`` with a deadline): a claimer that dies is
replaced once its claim runs out (the races it made are left to expire as empty lobbies).
"""

from __future__ import annotations

import logging
import secrets
from typing import TYPE_CHECKING

import msgspec

from shared import protocol as p

from ..deals.checked import CheckedDeal, PoolUnavailable
from ..ops.log import log
from ..race import rules as races
from ..race.clock import now_ms
from ..store import UNAVAILABLE, StoreError
from ..store import RaceMeta
from ..store.events import ArenaRace, ArenaState, EventMeta, EventStore
from shared.variants import get_variant
from shared import scoring
from . import arena
from .standings import event_totals

if TYPE_CHECKING:
    from ..race.service import Service

TICK_SECONDS = 0.5
CLAIM_MS = 60_000
"""How long a process may take to draw a round's heats before another may take over."""


class EventRunner:
    """One process's share of running the events (all processes run one)."""

    def __init__(self, service: "Service", events: EventStore) -> None:
        self.service = service
        self.events = events

    async def tick(self) -> None:
        for event in await self.events.active_ids():
            meta = await self.events.meta(event)
            if meta is None:
                await self.events.finish(event)
                continue
            try:
                await self.advance(meta)
            except (StoreError, PoolUnavailable) as exc:
                log("event_step_failed", logging.WARNING, tournament=event, round=meta.round, state=meta.round_state,
                    error=exc)

    async def advance(self, meta: EventMeta) -> None:
        """The step ``meta`` is due for, if any."""
        now = now_ms()
        if meta.status == "finished":
            await self.events.finish(meta.id)
        elif meta.status != "running":
            return
        elif meta.format == "arena":
            await self._arena(meta, now)
        elif meta.round_state == "done" and meta.round < meta.rounds and now >= meta.next_at:
            if await self.events.step(meta, now, round_state="opening", claim_until=now + CLAIM_MS):
                await self._open_round(await self._reread(meta))
        elif meta.round_state == "opening" and now >= meta.claim_until:
            if await self.events.step(meta, now, takeover=True, claim_until=now + CLAIM_MS):
                await self._open_round(await self._reread(meta))
        elif meta.round_state == "open" and now >= meta.starts_at:
            await self._start_heats(meta, now)
        elif meta.round_state == "running":
            await self._finish_round(meta, now)

    async def _reread(self, meta: EventMeta) -> EventMeta:
        fresh = await self.events.meta(meta.id)
        assert fresh is not None
        return fresh

    # ------------------------------------------------------------ arenas
    async def _arena(self, meta: EventMeta, now: int) -> None:
        """Pair the waiting (until the end), start what is due, score what has ended, and close the
        arena once its time is up and its last races are scored."""
        if now < meta.ends_at:
            await self._pair(meta, now)
        races_ = await self.events.arena_races(meta.id)
        for race in races_:
            if not race.started and now >= race.starts_at:
                await self._start([race.race], now)
                await self.events.arena_update(meta.id, race.race, "started", {})
            elif race.started and not race.scored:
                await self._score_arena_race(meta, race)
        if now >= meta.ends_at and all(r.scored for r in await self.events.arena_races(meta.id)):
            if await self.events.step(meta, now, status="finished", round_state="done"):
                log("event_finished", tournament=meta.id, races=len(races_))
                await self.events.finish(meta.id)

    async def _pair(self, meta: EventMeta, now: int) -> None:
        entrants = {e.account: e for e in await self.events.entrants(meta.id) if not e.withdrawn}
        states = await self.events.arena_states(meta.id)
        waiting = [(a, states.get(a, ArenaState())) for a in entrants if states.get(a, ArenaState()).status == "waiting"]
        groups = arena.pair(waiting, meta.group_size)
        if not groups or not await self.events.step(meta, now, round=meta.round + 1, round_state="running"):
            return  # nobody to pair, or another process pairs this very moment
        starts = now + meta.join_seconds * 1000
        for group in groups:
            # A fresh deal each race (or the organiser's own, in turn).
            race = await self.service.create_heat(meta, group, await self._deal(meta, meta.round % max(1, len(meta.deal_list)) + 1))
            if await self.events.arena_assign(meta.id, race.id, race.code, group, starts):
                log("arena_paired", tournament=meta.id, race=race.id, entrants=",".join(group))

    async def _score_arena_race(self, meta: EventMeta, race: ArenaRace) -> None:
        stored = await self.service.store.meta(race.race)
        if stored is not None and stored.status == "started":
            await self.service.end_race(race.race)  # (only once its time is up or all are done)
            return
        blob = await self.service.store.results(race.race) if stored is not None else None
        results = msgspec.msgpack.decode(blob, type=p.Results) if blob else None
        came = await self._came(stored) if stored is not None and stored.status == "lobby" else set()
        home0 = races.home_at_start(get_variant(meta.variant))
        field = [scoring.heat_result(a, race.race, 0, results, came=a in came, home0=home0) for a in race.entrants]
        states = await self.events.arena_states(meta.id)
        before = {a: states.get(a, ArenaState()) for a in race.entrants}
        after = {o.account: arena.after_race(before[o.account], o, [x for x in race.entrants if x != o.account])
                 for o in scoring.race_points(field, before)}
        if await self.events.arena_update(meta.id, race.race, "scored", after):
            log("arena_scored", tournament=meta.id, race=race.race,
                points=",".join(f"{a}:{after[a].points - before[a].points}" for a in race.entrants))

    async def _came(self, race: RaceMeta) -> set[str]:
        """The accounts that joined a race that never started."""
        players = [await self.service.store.player(race.id, s) for s in range(race.players)]
        return {pl.account for pl in players if pl and pl.account and not pl.left}

    async def _start(self, ids: list[str], now: int) -> None:
        """Start these races at once; one nobody joined stays an empty lobby (all no-shows)."""
        countdown = int(self.service.config.countdown * 1000)
        for race in ids:
            try:
                await self.service.store.start(race, now, countdown)
            except StoreError as exc:
                # started already / nobody came / a rated race only one entrant came to
                if exc.code not in ("race_closed", "forbidden", "not_enough_players"):
                    raise

    # ------------------------------------------------------------ rounds
    async def _open_round(self, meta: EventMeta) -> None:
        """Draw round ``meta.round + 1``: its deal, its heats (one race each), its start time."""
        number = meta.round + 1
        deal = await self._deal(meta, number)
        field = await self._field(meta, number)
        heats: list[p.EventHeat] = []
        for i, accounts in enumerate(scoring.draw_heats(field, meta.heat_size), start=1):
            race = await self.service.create_heat(meta, accounts, deal)
            heats.append(p.EventHeat(heat=i, race=race.id, code=race.code, entrants=accounts))
        now = now_ms()
        starts = now + meta.join_seconds * 1000
        schedule = [*meta.schedule, p.EventRound(round=number, starts_at=starts, heats=heats, deal=deal.deal)]
        if await self.events.step(meta, now, round=number, round_state="open", starts_at=starts, schedule=schedule,
                                  deal=deal.deal, line=" ".join(deal.line)):
            log("event_round_open", tournament=meta.id, round=number, heats=len(heats), entrants=len(field),
                starts_at=starts)

    async def _deal(self, meta: EventMeta, number: int) -> CheckedDeal:
        """The round's secret deal: the organiser's, or one from the private pool, or a random one."""
        named = meta.organiser_deal(number)
        if named is not None:
            return CheckedDeal(meta.variant, named, ())
        if meta.deal_source == "pool":
            return await self.service.checked.take(meta.variant)
        return CheckedDeal(meta.variant, secrets.randbelow(p.MAX_WIRE_DEAL) + 1, ())

    async def _field(self, meta: EventMeta, number: int) -> list[str]:
        """The accounts that play round ``number``, in the order of the standings so far."""
        entrants = await self.events.entrants(meta.id)
        playing = {e.account for e in entrants if not e.withdrawn and e.from_round <= number}
        order = [t.account for _, t in scoring.ranked(event_totals(meta, entrants, await self.events.results(meta.id)))]
        return [a for a in order if a in playing]

    async def _start_heats(self, meta: EventMeta, now: int) -> None:
        """Start every heat of the round at once; a heat nobody joined stays an empty lobby (all no-shows)."""
        await self._start([heat.race for heat in meta.schedule[-1].heats], now)
        if await self.events.step(meta, now, round_state="running"):
            log("event_round_started", tournament=meta.id, round=meta.round)

    async def _finish_round(self, meta: EventMeta, now: int) -> None:
        """Once every heat has ended, score the round (matchpoints over all heats) and move on."""
        heats = meta.schedule[-1].heats
        results: dict[str, p.Results | None] = {}
        came: dict[str, set[str]] = {}
        for heat in heats:
            race = await self.service.store.meta(heat.race)
            if race is not None and race.status == "started":
                await self.service.end_race(heat.race)  # (ends it only once its time is up or all are done)
                return  # not over yet: the next tick looks again
            blob = await self.service.store.results(heat.race) if race is not None else None
            results[heat.race] = msgspec.msgpack.decode(blob, type=p.Results) if blob else None
            if race is not None and race.status == "lobby":  # never started: who came to it did not race
                came[heat.race] = await self._came(race)
        home0 = races.home_at_start(get_variant(meta.variant))
        field = [scoring.heat_result(account, heat.race, heat.heat, results[heat.race],
                                     came=account in came.get(heat.race, ()), home0=home0)
                 for heat in heats for account in heat.entrants]
        entries = scoring.scored(field)
        last = meta.round >= meta.rounds
        changes = {"round_state": "done", "next_at": now + meta.break_seconds * 1000}
        if last:
            changes["status"] = "finished"
        if await self.events.score(meta, entries, **changes):
            log("event_round_scored", tournament=meta.id, round=meta.round, entrants=len(field), last=last)
            if last:
                await self.events.finish(meta.id)
