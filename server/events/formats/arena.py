"""Arenas (docs/events.md, "Arenas"): for ``duration`` seconds from the start, every entrant who waits
is paired at once with waiting entrants of close score, race after race; points by place, doubled on
fire. The rules are in server/events/arena.py; this module runs them: pairing, starting, scoring each
race as it ends, and closing the arena once its time is up and its last races are scored."""

from __future__ import annotations

from shared import protocol as p
from shared import scoring
from shared.event_states import Transition

from ...ops.log import log
from ...store.events import ArenaRace, ArenaState, EventMeta, EventStore
from .. import arena as rules
from ..context import EventContext
from ..due import arena_closes, arena_pairs, arena_race_steps
from ..format import Format
from ..standings import arena_standings

ARENA_RACES_SHOWN = 6
"""An arena's latest pairings the front page lists to watch."""


class Arena(Format):
    name = "arena"
    start = Transition.START_PAIRING
    pairing = True
    score_field = "points"
    score_rule = "Points (a win 2, the top half 1, doubled on fire)"

    def start_changes(self, meta: EventMeta, now: int) -> dict[str, object]:
        return {"ends_at": now + meta.duration * 1000}

    def summary(self, meta: EventMeta) -> str:
        length = f"{meta.duration // 60} min" if meta.duration % 60 == 0 else f"{meta.duration} s"
        return f"an arena of {length}, races of {meta.group_size}"

    def shown_settings(self, meta: EventMeta) -> dict[str, object]:
        return {"rounds": 0, "heat_size": meta.group_size, "duration": meta.duration,
                "group_size": meta.group_size, "pairings": meta.pairings}

    def watch_now(self, info: p.EventInfo) -> list[p.EventHeat]:
        return [heat for r in info.schedule[-ARENA_RACES_SHOWN:] for heat in r.heats]

    async def schedule(self, events: EventStore, meta: EventMeta) -> list[p.EventRound]:
        """Every race paired so far, one "round" of one heat each, in the order they were paired."""
        return [p.EventRound(round=i, starts_at=r.starts_at,
                             heats=[p.EventHeat(heat=1, race=r.race, code=r.code, entrants=r.entrants)])
                for i, r in enumerate(await events.arena_races(meta.id), start=1)]

    async def standings(self, events: EventStore, meta: EventMeta) -> p.EventStandings:
        return arena_standings(meta, await events.entrants(meta.id), await events.arena_states(meta.id))

    async def advance(self, ctx: EventContext, meta: EventMeta, now: int) -> None:
        """Pair the waiting (until the end), start what is due, score what has ended, and close the
        arena once its time is up and its last races are scored (what is due: server/events/due.py)."""
        if arena_pairs(meta, now):
            await self._pair(ctx, meta, now)
        races = await ctx.events.arena_races(meta.id)
        for race, step in arena_race_steps(races, now):
            if step == "start":
                await ctx.races.start_races([race.race], now)
                await ctx.events.arena_update(meta.id, race.race, "started", {})
            else:
                await self._score(ctx, meta, race)
        if not arena_pairs(meta, now):  # (its time is up: read the races again only then)
            if arena_closes(meta, await ctx.events.arena_races(meta.id), now) and \
                    await self.finish(ctx, meta, Transition.CLOSE, now):
                log("event_finished", tournament=meta.id, races=len(races))

    async def _pair(self, ctx: EventContext, meta: EventMeta, now: int) -> None:
        """Groups of the waiting entrants, each in a new race; a pairing is counted (``pairings``), and
        of processes pairing at once one does."""
        entrants = {e.account for e in await ctx.events.entrants(meta.id) if not e.withdrawn}
        states = await ctx.events.arena_states(meta.id)
        waiting = [(a, states.get(a, ArenaState())) for a in entrants if states.get(a, ArenaState()).status == "waiting"]
        groups = rules.pair(waiting, meta.group_size)
        if not groups or not await ctx.step(meta, Transition.PAIR, now, pairings=meta.pairings + 1):
            return  # nobody to pair, or another process pairs this very moment
        starts = now + meta.join_seconds * 1000
        # A fresh deal each pairing (or the organiser's own, in turn).
        deal = meta.pairings % max(1, len(meta.deal_list)) + 1
        for group in groups:
            race = await ctx.new_race(meta, group, await ctx.deal(meta, deal), "arena race", starts)
            if await ctx.events.arena_assign(meta.id, race.id, race.code, group, starts):
                log("arena_paired", tournament=meta.id, race=race.id, entrants=",".join(group))

    async def _score(self, ctx: EventContext, meta: EventMeta, race: ArenaRace) -> None:
        """A race that has ended: its entrants' points and new states, once."""
        outcome = await ctx.outcome(race.race)
        if outcome is None:
            return
        field = [outcome.result(a, 0, meta.variant) for a in race.entrants]
        states = await ctx.events.arena_states(meta.id)
        before = {a: states.get(a, ArenaState()) for a in race.entrants}
        after = {o.account: rules.after_race(before[o.account], o, [x for x in race.entrants if x != o.account])
                 for o in scoring.race_points(field, before)}
        if await ctx.events.arena_update(meta.id, race.race, "scored", after):
            log("arena_scored", tournament=meta.id, race=race.race,
                points=",".join(f"{a}:{after[a].points - before[a].points}" for a in race.entrants))


ARENA = Arena()
