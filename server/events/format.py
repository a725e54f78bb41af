"""The seam between the runner and the ways an event is played: a :class:`Format` says how a round or
a pairing is drawn, how a finished race is scored, what step is due next, and how the standings and
the public description are built; :func:`register` maps a format's name to it. The runner, the feeds
and the endpoints only ever call a format through this interface, so a new way to play (Swiss rounds,
a Swiss system) is one new module that registers itself, plus its tests. Schedules (an event that
starts itself, a series that repeats) are the runner's and work for every format alike.

A format works through an :class:`EventContext`: the event store, and the race layer's small API for
races the server makes (create, start, end, read their outcome), and where deals come from. Its state
moves only by the transitions of shared/event_states.py, which Redis enforces.
"""

from __future__ import annotations

import secrets
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import ClassVar, Literal, Protocol

import msgspec

from shared import protocol as p
from shared import scoring
from shared.scoring import ScoredRound
from shared.variants import get_variant

from ..deals.checked import CheckedDeal
from ..race.clock import now_ms
from ..store import SEALED, RaceMeta, Store
from ..store.events import EventMeta, EventStore
from .secrecy import unseal


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

    async def step(self, meta: EventMeta, transition: str, now: int, **changes: object) -> bool:
        """Move the event by a transition of the state table (False: another process did first)."""
        return await self.events.step(meta, transition, now, **changes)

    async def finish(self, meta: EventMeta, transition: str, now: int, results: list[ScoredRound] | None = None,
                     **changes: object) -> bool:
        """The event's last step (a transition to finished, writing a last round's ``results`` with it):
        every format ends through here, so what must happen as an event ends is written once. Off the
        runner's list at once (the runner also takes a finished event off, should this process die first)."""
        await unseal(self, meta)  # no race left to play: revealed before the event says it is over
        if results is not None:
            done = await self.events.score(meta, transition, now, results, **changes)
        else:
            done = await self.events.step(meta, transition, now, **changes)
        if done:
            await self.events.finish(meta.id)
        return done


class Format(ABC):
    """One way to play an event. Subclasses set the class attributes and implement the methods."""

    name: ClassVar[str]
    """The name organisers give (``EventCreate.format``)."""
    start: ClassVar[str]
    """The transition of the organiser's start (shared/event_states.py)."""
    pairing: ClassVar[bool] = False
    """Entrants are paired again as their races end (no rounds to wait for): EventInfo.pairing."""
    score_field: ClassVar[Literal["matchpoints", "points", "score"]] = "matchpoints"
    """The standings line field that ranks (EventInfo.score_field)."""
    tiebreaks: ClassVar[tuple[Literal["buchholz", "sonneborn_berger"], ...]] = ()
    """Further standings line fields that break its ties, in order (EventInfo.tiebreaks)."""
    score_rule: ClassVar[str] = ""
    """The scoring in a few words, for the standings' caption (EventInfo.score_rule)."""

    def refusal(self, req: p.EventCreate) -> tuple[p.ErrorCode, str] | None:
        """Why a request for an event of this format is bad, if it is (checked before anything is stored)."""
        return None

    def start_changes(self, meta: EventMeta, now: int) -> dict[str, object]:
        """Fields set by the organiser's start besides the state (an end time, the first round's due time)."""
        return {}

    @abstractmethod
    async def advance(self, ctx: EventContext, meta: EventMeta, now: int) -> None:
        """Take the step a running event is due for, if any (every process ticks; one wins each step)."""

    @abstractmethod
    async def schedule(self, events: EventStore, meta: EventMeta) -> list[p.EventRound]:
        """The races made so far, as EventInfo.schedule lists them (deals only once it is over)."""

    @abstractmethod
    async def standings(self, events: EventStore, meta: EventMeta) -> p.EventStandings:
        """``GET /events/{id}/standings``."""

    @abstractmethod
    def summary(self, meta: EventMeta) -> str:
        """The event's shape in a few words (EventInfo.summary)."""

    def shown_settings(self, meta: EventMeta) -> dict[str, object]:
        """EventInfo fields that mean something for this format only (the others show 0)."""
        return {}

    def live_heats(self, meta: EventMeta) -> list[p.EventHeat]:
        """The races whose live tables a spectator's feed shows entrant by entrant (none by default)."""
        return []

    def live_points(self, field: list[scoring.RoundResult]) -> dict[str, int]:
        """Doubled points each entrant of the live heats would get if they ended now."""
        return {r.account: 0 for r in field}

    def watch_now(self, info: p.EventInfo) -> list[p.EventHeat]:
        """The races to watch now, for the front page: the current round's heats by default."""
        return [heat for r in info.schedule if r.round == info.round for heat in r.heats]

    async def info(self, events: EventStore, meta: EventMeta) -> p.EventInfo:
        """What anyone may know of the event (``GET /events/{id}``)."""
        fields: dict[str, object] = dict(
            id=meta.id, name=meta.name, format=meta.format, variant=meta.variant, rounds=meta.rounds,
            heat_size=meta.heat_size, time_limit=meta.time_limit, join_seconds=meta.join_seconds,
            break_seconds=meta.break_seconds, rated=meta.rated, late_entry=meta.late_entry,
            status=meta.status, round=meta.round, round_state=meta.round_state, created_at=meta.created_at,
            entrants=meta.entrants, check_in=meta.check_in, version=meta.version,
            schedule=await self.schedule(events, meta),
            next_at=meta.next_at if meta.status == "running" and meta.round_state == "done" else None,
            ends_at=meta.ends_at or None, summary=self.summary(meta), pairing=self.pairing,
            score_field=self.score_field, score_rule=self.score_rule, tiebreaks=list(self.tiebreaks),
            # The organiser's deals are as secret as any other deal until the event is over.
            deal_source="deals" if meta.deals else meta.deal_source,
            deals=meta.deal_list if meta.deals and meta.status == "finished" else None,
            starts_at=meta.scheduled_at or None, series=meta.series or None, occurrence=meta.occurrence,
            repeat=meta.repeat or None, next_event=meta.next_event or None,
            conditions=msgspec.json.decode(meta.conditions, type=p.EntryConditions) if meta.conditions else None)
        fields.update(self.shown_settings(meta))
        return p.EventInfo(**fields)  # type: ignore[arg-type]


class UnknownFormat(ValueError):
    pass


_FORMATS: dict[str, Format] = {}


def register(fmt: Format) -> Format:
    """Make ``fmt`` playable under its name (a module of a format registers itself on import)."""
    _FORMATS[fmt.name] = fmt
    return fmt


def unplayable(meta: EventMeta) -> str | None:
    """Why this process cannot show or run the event, in the reader's words: a format it does not know
    (the event was made by a process of another version sharing the Redis); None when it can."""
    if meta.format in _FORMATS:
        return None
    return (f"this server process does not know the format {meta.format!r} of event {meta.id} (a process of "
            "another version made it): try again shortly")


def format_of(name: str) -> Format:
    """The format of that name; raises :class:`UnknownFormat` (naming the known ones)."""
    try:
        return _FORMATS[name]
    except KeyError:
        raise UnknownFormat(f"format: {name!r} is not one of {', '.join(sorted(_FORMATS))}") from None
