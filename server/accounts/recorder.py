"""Applying a finished race to the accounts in it, exactly once, from any process.

The race goes on the outbox (``results:pending``) before it ends, so a
crash between the end and this work loses nothing: any process's sweep
finds it. Every step can run again, or run in two processes at once, with
the same end state: a rated race's plan is stored once (the first writer
wins, and everyone applies the stored one, not one computed again from
ratings that have meanwhile moved); each account's part is applied by a
script that does nothing for a race it has applied; the leaderboard score
is set, not added; the outbox entry goes last.
"""

from __future__ import annotations

import enum

import msgspec

from shared import protocol as p

from shared.standings import places, win_ms
from ..store import RaceMeta, Store
from ..store.history import History
from ..store.history_records import AccountPart, RatingChange, RatingPlan
from . import ratings


class Outcome(str, enum.Enum):
    APPLIED = "applied"
    """Every account's part is in (now or before); the race left the outbox."""
    RUNNING = "running"
    """The race has not ended: it stays on the outbox."""
    GONE = "gone"
    """The race or its results no longer exist (past ``--retention``): dropped from the outbox."""


def parts(meta: RaceMeta, results: p.Results, plan: RatingPlan | None) -> list[AccountPart]:
    """Each account's part of a race: its history entry, win (a finished game, whatever the place:
    ``shared.standings.win_ms``), winning time and rating change."""
    shared = places(results.standings)
    out = []
    for standing, place in zip(results.standings, shared):
        if not standing.account:
            continue
        change: RatingChange | None = plan.change_of(standing.account) if plan else None
        finish_ms = win_ms(standing.status, standing.finished_at, results.starts_at) if results.starts_at else None
        entry = p.HistoryEntry(
            race=results.race, code=meta.code, variant=results.variant, ended_at=results.ended_at,
            place=place, players=len(results.standings), status=standing.status, home=standing.home,
            total=standing.total, time_ms=finish_ms, rated=change is not None,
            rating_before=ratings.shown(change.mu_before, change.sigma_before) if change else None,
            rating_after=ratings.shown(change.mu_after, change.sigma_after) if change else None,
        )
        out.append(AccountPart(account=standing.account, variant=results.variant, entry=entry, won=finish_ms is not None,
                               finish_ms=finish_ms, change=change))
    return out


class Recorder:
    """Applies finished races to accounts (history, totals, ratings, leaderboards)."""

    def __init__(self, store: Store, history: History, history_max: int, retention: int) -> None:
        self.store = store
        self.history = history
        self.history_max = history_max
        self.retention = retention

    async def plan_of(self, meta: RaceMeta, results: p.Results) -> RatingPlan:
        """The race's stored plan, or a new one from the ratings now, stored (first writer wins)."""
        stored = await self.history.plan(meta.id)
        if stored is not None:
            return stored
        accounts = [s.account for s in results.standings if s.account]
        current = await self.history.ratings(accounts, results.variant)
        new = ratings.plan(meta.id, results.variant, results.standings, current)
        return await self.history.store_plan(new, self.retention)

    async def apply(self, race: str) -> Outcome:
        """Apply one race if it has ended; safe to repeat and to run in several processes at once."""
        meta = await self.store.meta(race)
        if meta is not None and meta.status != "finished":
            return Outcome.RUNNING
        blob = await self.store.results(race) if meta is not None else None
        if meta is None or blob is None:
            await self.history.done(race)
            return Outcome.GONE
        results = msgspec.msgpack.decode(blob, type=p.Results)
        plan = None
        if meta.rated and sum(1 for s in results.standings if s.account) >= 2:
            plan = await self.plan_of(meta, results)
        for part in parts(meta, results, plan):
            applied = await self.history.apply_account(part, self.history_max)
            if applied.mu is not None and applied.sigma is not None:
                await self.history.rank(part.variant, part.account, ratings.shown(applied.mu, applied.sigma))
        await self.history.done(race)
        return Outcome.APPLIED
