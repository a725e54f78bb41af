"""What a format works with: the event store, the race layer's small API for races the server makes
(create, start, end, read their outcome), and where deals come from. Built once by the composition
root (server/compose.py) and handed to every format's step; a format reaches no service object.

Why a module of its own: this is the events' I/O towards the races, while server/events/format.py is
the interface a way to play implements; the two change for different reasons.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import Protocol

import msgspec

from shared import protocol as p
from shared import scoring
from shared.event_states import Transition
from shared.variants import get_variant

from ..deals.checked import CheckedDeal
from ..race.clock import now_ms
from ..store import SEALED, RaceMeta, Store
from ..store.events import EventMeta, EventStore


OUTCOMES_KEPT = 4096
"""Finished races' outcomes an :class:`EventContext` keeps (the heats of a 32,000-entrant round in 8s)."""


class RaceMaker(Protocol):
    """What the race layer offers the events: races the server makes for given accounts."""

    store: Store

    async def create_for(self, entrants: list[str], deal: CheckedDeal, time_limit: int, start_mode: p.StartMode,
                         event: str, *, rated: bool = False, reveal_at: int = 0, title: str = "",
                         scheduled_at: int = 0) -> RaceMeta: ...

    async def start_races(self, ids: list[str], now: int) -> None: ...

    async def end_race(self, race: str) -> bool: ...


class DealSource(Protocol):
    async def take(self, variant: str) -> CheckedDeal: ...


@dataclass(frozen=True)
class RaceOutcome:
    """A race an event made, once over: its results (None: it never started, nobody raced; a finished
    race's without its games, ``records``, which no outcome reads) and the accounts that came to it
    (joined a race that never started: they did not race, but came)."""

    race: str
    results: p.Results | None
    came: frozenset[str]

    def result(self, account: str, heat: int, variant: str) -> scoring.RoundResult:
        """The account's result in this race, as the scoring rules take it."""
        return scoring.heat_result(account, self.race, heat, self.results, came=account in self.came,
                                   home0=get_variant(variant).home_at_start)


@dataclass
class EventContext:
    """What a format works with (built once by the composition root, server/compose.py)."""

    events: EventStore
    races: RaceMaker
    pool: DealSource
    _over: dict[str, RaceOutcome] = field(default_factory=dict, init=False, repr=False)
    """The outcomes of races found finished, which no longer change (:meth:`outcome`)."""

    async def new_race(self, meta: EventMeta, entrants: list[str], deal: CheckedDeal, what: str,
                       scheduled_at: int) -> RaceMeta:
        """A race of the event for ``entrants`` (the only accounts that may join) on a secret deal, started
        by the runner at ``scheduled_at``: every heat and every arena race is made here. Its lobby shows
        the event's name and ``what`` it is (``round 2 of 3 · heat 1 of 4``) as the race's title."""
        return await self.races.create_for(entrants, deal, meta.time_limit, "creator", meta.id,
                                           rated=meta.rated and len(entrants) >= 2, reveal_at=SEALED,
                                           title=f"{meta.name} · {what}", scheduled_at=scheduled_at)

    async def outcome(self, race: str) -> RaceOutcome | None:
        """The race's outcome once it is over; None while it runs (it is ended here once its time is up
        or all are done, so the next look finds it over).

        A finished race's outcome is kept (up to :data:`OUTCOMES_KEPT`): a round is scored once its last
        heat is over, and until then every tick of every process looked at the heats in turn up to the
        first still running, reading each finished one again (1,000 entrants in heats of 8: about 10,000
        reads of a meta and a results blob over a round, counted in bench/event_round.py)."""
        kept = self._over.get(race)
        if kept is not None:
            return kept
        store = self.races.store
        meta = await store.meta(race)
        if meta is not None and meta.status == "started":
            if meta.due_to_end(now_ms()):  # (else the race's end reads it again only to find it so)
                await self.races.end_race(race)
            return None
        blob = await store.results(race) if meta is not None else None
        came: set[str] = set()
        if meta is not None and meta.status == "lobby":
            # It did not start at its time, and is scored now: called off first, so that whoever joins
            # later is refused rather than counted or left waiting (those in it now came).
            if not meta.called_off_at and await self.events.call_off_race(race, now_ms()):
                meta = await store.meta(race) or meta  # (as it was called off: with whoever joined till then)
            players = [await store.player(race, s) for s in range(meta.players)]
            came = {pl.account for pl in players if pl and pl.account and not pl.left}
        results = msgspec.msgpack.decode(blob, type=p.Results) if blob else None
        if results is not None and meta is not None and meta.status == "finished":  # final: written once
            # Kept without its games (every move of every racer): an outcome is read for its standings.
            outcome = RaceOutcome(race, msgspec.structs.replace(results, records=[], winning_line=None),
                                  frozenset(came))
            if len(self._over) >= OUTCOMES_KEPT:
                del self._over[next(iter(self._over))]  # the oldest
            self._over[race] = outcome
            return outcome
        return RaceOutcome(race, results, frozenset(came))

    async def deal(self, meta: EventMeta, number: int) -> CheckedDeal:
        """The secret deal of round or pairing ``number``: the organiser's (in turn), or one from the
        private pool, or a random one."""
        named = meta.organiser_deal(number)
        if named is not None:
            return CheckedDeal(meta.variant, named, (), chosen=True)
        if meta.deal_source == "pool":
            return await self.pool.take(meta.variant)
        return CheckedDeal(meta.variant, secrets.randbelow(p.MAX_WIRE_DEAL) + 1, ())

    async def reread(self, meta: EventMeta) -> EventMeta:
        """The event as it is now (after a step of this process's own)."""
        fresh = await self.events.meta(meta.id)
        assert fresh is not None
        return fresh

    async def step(self, meta: EventMeta, transition: Transition, now: int, **changes: object) -> bool:
        """Move the event by a transition of the state table (False: another process did first)."""
        return await self.events.step(meta, transition, now, **changes)
