"""The seam between the runner and the ways an event is played: a :class:`Format` says how a round or
a pairing is drawn, how a finished race is scored, what step it takes next (decided by the pure
functions of server/events/due.py), and how the standings and the public description are built;
:class:`Formats` finds a format by its name. The runner, the feeds, the endpoints and the pages only
ever call a format through this interface, found in the :class:`Formats` the composition root hands
them (built from the explicit list in server/events/formats/__init__.py), so a new way to play is one
new module behind this interface plus one line in that list, and a test may play a format of its own
by handing its own list. Schedules (an event that starts itself, a series that repeats) are the
runner's and work for every format alike.

A format works through an :class:`~.context.EventContext` (the event store, the race layer's small
API, the deals). Its state moves only by the transitions of shared/event_states.py, which Redis enforces.
"""

from __future__ import annotations

import dataclasses

import msgspec
from abc import ABC, abstractmethod
from typing import ClassVar, Iterable, Literal

from shared import protocol as p
from shared import scoring
from shared.event_states import Transition
from shared.scoring import ScoredRound

from ..store.events import EventMeta, EventSettings, EventStore
from .context import EventContext
from .secrecy import unseal


class Format(ABC):
    """One way to play an event. Subclasses set the class attributes and implement the methods."""

    name: ClassVar[str]
    """The name organisers give (``EventCreate.format``)."""
    start: ClassVar[Transition]
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

    async def finish(self, ctx: EventContext, meta: EventMeta, transition: Transition, now: int,
                     results: list[ScoredRound] | None = None, **changes: object) -> bool:
        """The event's last step (a transition to finished, writing a last round's ``results`` with it):
        every format ends through here, so what must happen as an event ends is written once. Off the
        runner's list at once (the runner also takes a finished event off, should this process die first)."""
        # No race left to play: revealed before the event says it is over.
        await unseal(ctx.races.store, await self.schedule(ctx.events, meta))
        if results is not None:
            done = await ctx.events.score(meta, transition, now, results, **changes)
        else:
            done = await ctx.events.step(meta, transition, now, **changes)
        if done:
            await ctx.events.finish(meta.id)
        return done

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
        """What anyone may know of the event (``GET /events/{id}``): its settings (:func:`public_settings`),
        its state, and the format's words."""
        fields: dict[str, object] = dict(
            public_settings(meta), id=meta.id, status=meta.status, round=meta.round, round_state=meta.round_state,
            created_at=meta.created_at, entrants=meta.entrants, version=meta.version,
            schedule=await self.schedule(events, meta),
            next_at=meta.next_at if meta.status == "running" and meta.round_state == "done" else None,
            ends_at=meta.ends_at or None, summary=self.summary(meta), pairing=self.pairing,
            score_field=self.score_field, score_rule=self.score_rule, tiebreaks=list(self.tiebreaks),
            series=meta.series or None, occurrence=meta.occurrence, next_event=meta.next_event or None)
        fields.update(self.shown_settings(meta))
        return p.EventInfo(**fields)  # type: ignore[arg-type]


SHOWN_OTHERWISE = ("deal_source", "deals", "scheduled_at", "repeat", "conditions", "duration", "group_size")
"""The settings an event's description shows in another shape than the record's: the organiser's deals
(secret until the event is over; meanwhile their source reads ``deals``), its own start (``starts_at``),
no repeat or conditions (null), and the arena's own (its format shows them: :meth:`Format.shown_settings`)."""


def public_settings(meta: EventMeta) -> dict[str, object]:
    """The event's settings (server/store/events.py ``EventSettings``) as ``EventInfo`` shows them: each by
    its own name and value, but for the :data:`SHOWN_OTHERWISE`."""
    same = {f.name: getattr(meta, f.name) for f in dataclasses.fields(EventSettings) if f.name not in SHOWN_OTHERWISE}
    return {**same, "deal_source": "deals" if meta.deals else meta.deal_source,
            "deals": meta.deal_list if meta.deals and meta.status == "finished" else None,
            "starts_at": meta.scheduled_at or None, "repeat": meta.repeat or None,
            "conditions": msgspec.json.decode(meta.conditions, type=p.EntryConditions) if meta.conditions else None}


class UnknownFormat(ValueError):
    pass


class Formats:
    """The formats a process plays, by name: built once, from a list, by the composition root.

    Why a list handed in rather than modules registering themselves on import (python-chess's
    ``VARIANTS``, lila's ``System.all``): what is played is read in one place, nothing depends on what
    happened to be imported, and a test passes a list of its own."""

    def __init__(self, formats: Iterable[Format]) -> None:
        self._by_name = {fmt.name: fmt for fmt in formats}

    @property
    def names(self) -> list[str]:
        return sorted(self._by_name)

    def of(self, name: str) -> Format:
        """The format of that name; raises :class:`UnknownFormat` (naming the known ones)."""
        try:
            return self._by_name[name]
        except KeyError:
            raise UnknownFormat(f"format: {name!r} is not one of {', '.join(self.names)}") from None

    def unplayable(self, meta: EventMeta) -> str | None:
        """Why this process cannot show or run the event, in the reader's words: a format it does not know
        (the event was made by a process of another version sharing the Redis); None when it can."""
        if meta.format in self._by_name:
            return None
        return (f"this server process does not know the format {meta.format!r} of event {meta.id} (a process of "
                "another version made it): try again shortly")
