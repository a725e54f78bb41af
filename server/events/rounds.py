"""Formats played in rounds (duplicate, and any other that draws every round's field into heats on
one deal): the round machine they share, so such a format says only how a round's heats are drawn and
how a round's results are scored.

Each round: claimed for drawing (state ``opening`` with a deadline: a claimer that dies is replaced
once its claim runs out, the races it made left to expire as empty lobbies), drawn (its deal, its
heats, its start time: ``open``), started at once (``running``), and scored when every heat has
ended (``done``, or the event ``finished`` after the last round). Each step is a transition of the
state table (shared/event_states.py), a compare-and-set in Redis, so of processes trying the same
step one wins, and a process killed mid-round leaves nothing the others cannot finish.
"""

from __future__ import annotations

import asyncio
from abc import abstractmethod
from dataclasses import dataclass, field

from shared import protocol as p
from shared import scoring
from shared.event_states import Transition
from shared.event_words import race_word

from ..ops.log import log
from ..race.clock import now_ms
from ..store.events import EventMeta, EventStore
from .context import EventContext
from .due import round_due_now
from .format import Format
from .standings import event_totals, standings

CLAIM_MS = 60_000
"""How long a process may take to draw a round's heats before another may take over."""


@dataclass(frozen=True)
class Drawn:
    """A round's draw: its heats (one race each), and its byes (entrants of the round in no race, whom
    the format's :meth:`RoundsFormat.score` scores from a ``shared.scoring.bye_result``)."""

    heats: list[list[str]]
    byes: list[str] = field(default_factory=list)


class RoundsFormat(Format):
    """An event of ``meta.rounds`` rounds; subclasses draw a round's heats and score a round."""

    start = Transition.START_ROUNDS

    @abstractmethod
    def draw(self, meta: EventMeta, field: list[str], results: scoring.Scores) -> Drawn:
        """The round's heats and byes: ``field`` (the round's entrants, best of the standings first) split
        into races, knowing every scored round so far (``results``: who met whom, who scored what)."""

    @abstractmethod
    def score(self, field: list[scoring.RoundResult]) -> dict[str, int]:
        """Each entrant's doubled points for the round, from every heat's results and the byes'."""

    def refusal(self, req: p.EventCreate) -> tuple[p.ErrorCode, str] | None:
        if req.deals is not None and len(req.deals) != req.rounds:
            return p.ErrorCode.BAD_DEAL, f"deals: one per round ({req.rounds}), not {len(req.deals)}"
        return None

    def start_changes(self, meta: EventMeta, now: int) -> dict[str, object]:
        return {"next_at": now}  # the first round is drawn at once

    def live_heats(self, meta: EventMeta) -> list[p.EventHeat]:
        running = meta.status == "running" and meta.round_state == "running" and meta.schedule
        return list(meta.schedule[-1].heats) if running else []

    def live_points(self, field: list[scoring.RoundResult]) -> dict[str, int]:
        return self.score(field)

    async def schedule(self, events: EventStore, meta: EventMeta) -> list[p.EventRound]:
        if meta.status == "finished":
            return meta.schedule
        return [p.EventRound(round=r.round, starts_at=r.starts_at, heats=r.heats, byes=r.byes) for r in meta.schedule]

    standing_lines: staticmethod[..., list[p.EventStandingLine]] = staticmethod(scoring.standing_lines)
    """The format's standings rule (``shared.scoring.standing_lines``: matchpoints, cards home, time)."""

    async def standings(self, events: EventStore, meta: EventMeta) -> p.EventStandings:
        return standings(meta, await events.entrants(meta.id), await events.results(meta.id), self.standing_lines)

    # ------------------------------------------------------------ the round machine
    async def advance(self, ctx: EventContext, meta: EventMeta, now: int) -> None:
        """The step :func:`~.due.round_due_now` says is due, taken (the decision is pure; this is its I/O)."""
        step = round_due_now(meta, now)
        if step in (Transition.CLAIM_ROUND, Transition.TAKE_OVER_CLAIM):
            if await ctx.step(meta, step, now, claim_until=now + CLAIM_MS):
                await self._open_round(ctx, await ctx.reread(meta))
        elif step is Transition.START_HEATS:
            await ctx.races.start_races([heat.race for heat in meta.schedule[-1].heats], now)
            if await ctx.step(meta, step, now):
                log("event_round_started", tournament=meta.id, round=meta.round)
        elif step in (Transition.SCORE_ROUND, Transition.SCORE_LAST_ROUND):
            await self._finish_round(ctx, meta, step, now)

    async def _open_round(self, ctx: EventContext, meta: EventMeta) -> None:
        """Draw round ``meta.round + 1``: its deal, its heats (one race each), its start time."""
        number = meta.round + 1
        deal = await ctx.deal(meta, number)
        results = await ctx.events.results(meta.id)
        field = await self._field(ctx.events, meta, number, results)
        # In a thread: a large Swiss field's matching takes a second or more, and races run on this loop.
        drawn = await asyncio.to_thread(self.draw, meta, field, results)
        heats: list[p.EventHeat] = []
        starts = now_ms() + meta.join_seconds * 1000
        for i, accounts in enumerate(drawn.heats, start=1):
            what = f"round {number} of {meta.rounds} · {race_word(meta.format)} {i} of {len(drawn.heats)}"
            race = await ctx.new_race(meta, accounts, deal, what, starts)
            heats.append(p.EventHeat(heat=i, race=race.id, code=race.code, entrants=accounts))
        now = now_ms()
        schedule = [*meta.schedule, p.EventRound(round=number, starts_at=starts, heats=heats, deal=deal.deal,
                                                 byes=drawn.byes)]
        if await ctx.step(meta, Transition.OPEN_ROUND, now, round=number, starts_at=starts, schedule=schedule,
                          deal=deal.deal, line=" ".join(deal.line)):
            log("event_round_open", tournament=meta.id, round=number, heats=len(heats), entrants=len(field),
                starts_at=starts)

    async def _field(self, events: EventStore, meta: EventMeta, number: int, results: scoring.Scores) -> list[str]:
        """The accounts that play round ``number``, in the order of the standings so far."""
        entrants = await events.entrants(meta.id)
        playing = {e.account for e in entrants if not e.withdrawn and e.from_round <= number}
        order = [t.account for _, t in scoring.ranked(event_totals(meta, entrants, results))]
        return [a for a in order if a in playing]

    async def _finish_round(self, ctx: EventContext, meta: EventMeta, step: Transition, now: int) -> None:
        """Once every heat has ended, score the round over all heats and move on by ``step`` (the event
        ends after the last round: ``score_last_round``)."""
        heats = meta.schedule[-1].heats
        field = [scoring.bye_result(account) for account in meta.schedule[-1].byes]
        for heat in heats:
            outcome = await ctx.outcome(heat.race)
            if outcome is None:
                return  # not over yet: the next tick looks again
            field += [outcome.result(account, heat.heat, meta.variant) for account in heat.entrants]
        results = scoring.with_points(field, self.score(field))
        last = step is Transition.SCORE_LAST_ROUND
        next_at = now + meta.break_seconds * 1000
        if await (self.finish(ctx, meta, step, now, results) if last
                  else ctx.events.score(meta, step, now, results, next_at=next_at)):
            log("event_round_scored", tournament=meta.id, round=meta.round, entrants=len(field), last=last)

