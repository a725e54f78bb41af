"""Tournament events in Redis (the layout: keys.EventKeys): every read and script call of the runner
and the event endpoints. Each script touches one event's keys only (one hash tag, one cluster slot);
the heats' races live in their own slots and are read through the race :class:`~.races.Store`.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from typing import Any, ClassVar

import msgspec

from shared import protocol as p
from shared.event_states import Transition
from shared.scoring import ArenaTally, ScoredRound

from .keys import EVENTS_ACTIVE, EVENTS_ALL, EventKeys, Keys, occurrence_id, series_key
from .records import StoreError, hash_fields, hash_kwargs, reply, text
from .scripts import register

_schedule = msgspec.json.Decoder(list[p.EventRound])
_encoder = msgspec.json.Encoder()


@dataclass(kw_only=True)
class EventSettings:
    """An event's settings, as the organiser gave them, typed once: taken from the request body
    (``p.EventCreate``, by :meth:`of`), kept in the record (an :class:`EventMeta` is these and the event's
    state, one Redis hash), and shown in the description (``p.EventInfo``: server/events/format.py shows
    them by these fields). Why one definition: the request, the record and the description were each
    written out field by field, and a setting added to one was easily missed in another."""

    name: str
    format: p.EventFormat
    variant: str
    rounds: int
    heat_size: int
    time_limit: int
    join_seconds: int
    break_seconds: int
    deal_source: str
    deals: str
    """The organiser's deals, one per round, separated by commas ("": drawn by ``deal_source``)."""
    rated: bool
    late_entry: bool
    duration: int = 0
    """Arenas: seconds of pairing from the start."""
    group_size: int = 2
    check_in: bool = False
    scheduled_at: int = 0
    """When the event starts by itself (EventCreate.starts_at; 0: when the organiser starts it)."""
    repeat: str = ""
    """The series' cron schedule ("" for a one-off, or once the series is cancelled)."""
    conditions: str = ""
    """Who may enter (EventCreate.conditions as JSON; "": any account)."""

    RESHAPED: ClassVar[tuple[str, ...]] = ("deals", "scheduled_at", "repeat", "conditions")
    """The settings kept in another shape than the request's (a list as text; ``starts_at``; null as "");
    every other one has the request's name and value."""

    @classmethod
    def kept(cls, req: p.EventCreate) -> dict[str, Any]:
        """The request's settings as the record keeps them (its ``variant`` already the variant's key), by
        field: the same names and values, and the :attr:`RESHAPED` ones reshaped."""
        kept: dict[str, Any] = {f.name: getattr(req, f.name) for f in fields(cls) if f.name not in cls.RESHAPED}
        return {**kept, "deals": ",".join(str(d) for d in req.deals or []), "scheduled_at": req.starts_at or 0,
                "repeat": req.repeat or "",
                "conditions": _encoder.encode(req.conditions).decode() if req.conditions is not None else ""}


@dataclass(kw_only=True)
class EventMeta(EventSettings):
    """An event's hash, typed: its settings (:class:`EventSettings`) and its state. ``deal`` and ``line``:
    the current round's secret deal (its winning line for a checked deal), kept so that any process
    drawing the heats uses the same one."""

    id: str
    status: p.EventStatus
    round: int
    round_state: p.RoundState
    created_at: int
    version: int = 0
    entrants: int = 0
    next_at: int = 0
    claim_until: int = 0
    starts_at: int = 0
    """When the current round's heats start (state open)."""
    deal: int = 0
    line: str = ""
    schedule: list[p.EventRound] = field(default_factory=list)
    ends_at: int = 0
    """Arenas: when pairing stops (set at the start)."""
    pairings: int = 0
    """Arenas: how many times waiting entrants were paired (each time one race or more); a step of a
    pairing compares it, as a round's steps compare ``round``."""
    series: str = ""
    """A recurring event's series id ("": a one-off); its id is ``<series>-<occurrence>``."""
    occurrence: int = 0
    next_event: str = ""
    """The series' next occurrence, once made (as this one left registration)."""

    @classmethod
    def create(cls, req: p.EventCreate, event: str, now: int, series: str = "", occurrence: int = 0) -> "EventMeta":
        """A new event of ``req``'s settings (its ``variant`` already the variant's key), taking entries."""
        return cls(**EventSettings.kept(req), id=event, status="registration", round=0, round_state="waiting",
                   created_at=now, series=series, occurrence=occurrence)

    def hash_fields(self) -> list[Any]:
        return hash_fields(self, encode_field)

    @classmethod
    def from_hash(cls, raw: dict[bytes, bytes]) -> "EventMeta":
        return cls(**hash_kwargs(cls, raw, {"schedule": _schedule.decode}))

    @property
    def deal_list(self) -> list[int]:
        return [int(d) for d in self.deals.split(",") if d]

    def organiser_deal(self, round_no: int) -> int | None:
        """The organiser's deal for ``round_no`` (1-based), if it named its deals."""
        deals = self.deal_list
        return deals[round_no - 1] if 1 <= round_no <= len(deals) else None


def _pairs(changes: dict[str, Any]) -> list[Any]:
    """A hash's field, value, ... as a script takes them."""
    return [x for name, value in changes.items() for x in (name, encode_field(value))]


def _plain(event: str) -> bool:
    """Whether ``event`` can name an event: braces would make another key's hash tag."""
    return "{" not in event and "}" not in event


def encode_field(value: Any) -> Any:
    """A hash field's value: booleans as 1/0, the schedule as JSON, the rest as they are."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, list):
        return _encoder.encode(value)
    return value


@dataclass(frozen=True)
class Entrant:
    account: str
    name: str
    joined_at: int
    from_round: int
    withdrawn: bool
    checked_in: bool = False
    no_check_in: bool = False
    """Withdrawn by the start for not having checked in."""

    @classmethod
    def loads(cls, account: str, raw: str | bytes) -> "Entrant":
        d = json.loads(raw)
        return cls(account, d["name"], int(d["joined_at"]), int(d["from_round"]), bool(d["withdrawn"]),
                   bool(d.get("checked_in")), bool(d.get("no_check_in")))


@dataclass
class ArenaState(ArenaTally):
    """An entrant's arena so far (stored as JSON in the event's arena hash): its tally (points, streak,
    wins, races, cards home: ``shared.scoring.ArenaTally``) and where it is."""

    status: p.ArenaStatus = "waiting"
    """waiting (to be paired), playing (in ``race``), paused (missed a race; entering again resumes)."""
    race: str = ""
    last: list[str] = field(default_factory=list)
    """The entrants of its last race (not paired with exactly them again at once)."""

    def dumps(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def loads(cls, raw: str | bytes) -> "ArenaState":
        d = json.loads(raw)
        d["last"] = list(d.get("last") or [])  # (Lua's cjson writes an empty list as {})
        return cls(**d)


@dataclass(frozen=True)
class ArenaRace:
    """One race an arena paired: its entrants, when it starts, and how far it got."""

    race: str
    code: str
    entrants: list[str]
    starts_at: int
    started: bool
    scored: bool


class EventStore:
    """Events, shared by every server process."""

    def __init__(self, redis: Any) -> None:
        self.redis = redis
        self._create = register(redis, "event_create")
        self._enter = register(redis, "event_enter")
        self._step = register(redis, "event_step")
        self._score = register(redis, "event_score")
        self._arena_assign = register(redis, "arena_assign")
        self._arena_update = register(redis, "arena_update")
        self._drop_unchecked = register(redis, "event_drop_unchecked")
        self._series_next = register(redis, "series_next")
        self._cancel = register(redis, "event_cancel")
        self._call_off = register(redis, "event_race_call_off")

    async def create(self, meta: EventMeta, settings: p.EventCreate | None = None) -> None:
        """Store a new event; the first occurrence of a series (``meta.series``) with its series, whose
        ``settings`` each later occurrence is made from."""
        k = EventKeys(meta.id)
        if meta.series:
            assert settings is not None
            head = ["repeat", meta.repeat, "settings", _encoder.encode(settings), "last", meta.occurrence,
                    "latest", meta.id, "cancelled", 0]
            await self._create(keys=[k.meta, series_key(meta.series)], args=[len(head) // 2, *head, *meta.hash_fields()])
        else:
            await self._create(keys=[k.meta], args=[0, *meta.hash_fields()])
        await self._list(meta)

    async def _list(self, meta: EventMeta) -> None:
        """On ``GET /events`` and the runner's list."""
        await self.redis.zadd(EVENTS_ALL, {meta.id: meta.created_at})
        await self.redis.zadd(EVENTS_ACTIVE, {meta.id: meta.created_at})

    async def series_settings(self, series: str) -> p.EventCreate | None:
        """The settings every occurrence of ``series`` is made with (None: no such series)."""
        raw = await self.redis.hget(series_key(series), "settings")
        return msgspec.json.decode(raw, type=p.EventCreate) if raw else None

    async def series_next(self, current: EventMeta, nxt: EventMeta) -> bool:
        """Make ``nxt``, the occurrence after ``current`` (which has left registration), unless the series
        was cancelled: one script on the series' slot, so of processes racing to make it one does, and
        a series cancelled meanwhile gets none. Then ``current`` names it (``next_event``), which ends
        the work: a process that dies before that leaves it to the next tick, which finds ``nxt`` made
        and only lists and names it. False: the series was cancelled (``current`` says so: no repeat)."""
        k = EventKeys(nxt.id)
        kind, _ = reply(await self._series_next(keys=[series_key(current.series), EventKeys(current.id).meta, k.meta],
                                                args=[nxt.id, nxt.occurrence, *nxt.hash_fields()]))
        if kind == "cancelled":
            return False
        await self._list(nxt)
        await self.redis.hset(EventKeys(current.id).meta, "next_event", nxt.id)
        await self.redis.hincrby(EventKeys(current.id).meta, "version", 1)
        return True

    async def cancel(self, meta: EventMeta, now: int, series: bool = False) -> None:
        """The organiser calls the event off (only while it takes entries), or with ``series`` ends its
        series: no further occurrence, the next one, if it has not started, is called off too, and no
        occurrence says it repeats any more (each one's key is passed: one slot, the series' tag).
        Raises :class:`StoreError`: event_closed (started already), bad_field (not one of a series)."""
        k = EventKeys(meta.id)
        skey = series_key(meta.series or meta.id)
        while True:
            latest, last = (text(v or b"") for v in await self.redis.hmget(skey, "latest", "last")) if series \
                else ("", "")
            every = [EventKeys(occurrence_id(meta.series, n)).meta for n in range(1, int(last or 0) + 1)]
            kind, rest = reply(await self._cancel(keys=[k.meta, skey, EventKeys(latest or meta.id).meta, *every],
                                                  args=[int(series), latest, now]))
            if kind == "err":
                raise StoreError(rest[0])
            if kind == "ok":
                return
            # "moved": the series made an occurrence between our read and the script: read it again.

    async def call_off_race(self, race: str, now: int) -> bool:
        """Give up a race of an event that did not start at its time, as the event scores it: it takes no
        player from then on (a late entrant would wait in its lobby for a start that never comes). One
        script on the race's own slot; False when the race is not in the lobby (it started, or is gone)."""
        return bool(await self._call_off(keys=[Keys(race).meta], args=[now]))

    async def meta(self, event: str) -> EventMeta | None:
        if not _plain(event):
            return None
        raw = await self.redis.hgetall(EventKeys(event).meta)
        return EventMeta.from_hash(raw) if raw else None

    async def version(self, event: str) -> int | None:
        """The event's version alone (None: no such event): every change a reader keeps up with bumps it,
        and it is read without the rest (the schedule's JSON of every heat and entrant)."""
        if not _plain(event):
            return None
        raw = await self.redis.hget(EventKeys(event).meta, "version")
        return int(raw) if raw is not None else None

    async def active_ids(self) -> list[str]:
        return [text(e) for e in await self.redis.zrange(EVENTS_ACTIVE, 0, -1)]

    async def recent_ids(self, limit: int = 100) -> list[str]:
        return [text(e) for e in await self.redis.zrevrange(EVENTS_ALL, 0, limit - 1)]

    async def finish(self, event: str) -> None:
        """Off the runner's list (the event is over)."""
        await self.redis.zrem(EVENTS_ACTIVE, event)

    async def entry(self, event: str, account: str, name: str, now: int,
                    action: str = "enter") -> tuple[Entrant, p.EntryOutcome]:
        """Enter, ``withdraw`` or ``check_in`` ``account``: the entry and what happened (entered,
        already_entered, resumed, checked_in, withdrawn); raises :class:`StoreError` (event_not_found,
        event_closed, event_over, not_entered)."""
        k = EventKeys(event)
        kind, rest = reply(await self._enter(keys=[k.meta, k.entrants, k.arena],
                                             args=[account, name, now, action]))
        if kind != "ok":
            raise StoreError(rest[0])
        return Entrant.loads(account, rest[0]), msgspec.convert(rest[1], p.EntryOutcome)

    async def drop_unchecked(self, event: str) -> int:
        """Withdraw every entrant who has not checked in (the start of an event that asks for it)."""
        k = EventKeys(event)
        return int(await self._drop_unchecked(keys=[k.meta, k.entrants]))

    async def entrants(self, event: str) -> list[Entrant]:
        raw = await self.redis.hgetall(EventKeys(event).entrants)
        return sorted((Entrant.loads(text(a), v) for a, v in raw.items()), key=lambda e: (e.joined_at, e.account))

    async def step(self, meta: EventMeta, transition: Transition, now: int, **changes: Any) -> bool:
        """Move the event by ``transition`` (shared/event_states.py) from the state ``meta`` shows, setting
        ``changes`` too; False when another process moved it first. Raises :class:`StoreError`
        (illegal_transition) for a move the state table does not allow: Redis refuses it, nothing changes."""
        args = [*self._position(meta, transition, now), *_pairs(changes)]
        kind, rest = reply(await self._step(keys=[EventKeys(meta.id).meta], args=args))
        if kind == "err":
            raise StoreError(rest[0])
        return kind == "ok"

    async def score(self, meta: EventMeta, transition: Transition, now: int, results: list[ScoredRound],
                    **changes: Any) -> bool:
        """Write a round's scored results and move the event by ``transition``, in one step: once
        (False when another process scored it first)."""
        k = EventKeys(meta.id)
        pairs = _pairs(changes)
        args: list[Any] = [*self._position(meta, transition, now), len(pairs) // 2, *pairs]
        for r in results:
            args += [r.account, r.encode()]
        kind, rest = reply(await self._score(keys=[k.meta, k.results], args=args))
        if kind == "err":
            raise StoreError(rest[0])
        return kind == "ok"

    @staticmethod
    def _position(meta: EventMeta, transition: Transition, now: int) -> list[Any]:
        """What a step compares: the transition and the state the caller read."""
        return [transition, meta.status, meta.round_state, meta.round, meta.pairings, now]

    async def results(self, event: str) -> dict[tuple[int, str], ScoredRound]:
        """Every scored round result: (round, account) -> its record."""
        raw = await self.redis.hgetall(EventKeys(event).results)
        out = {}
        for key, value in raw.items():
            round_no, _, account = text(key).partition("|")
            out[(int(round_no), account)] = ScoredRound.decode(value)
        return out

    # ------------------------------------------------------------ arenas
    async def arena_states(self, event: str) -> dict[str, ArenaState]:
        raw = await self.redis.hgetall(EventKeys(event).arena)
        return {text(a): ArenaState.loads(v) for a, v in raw.items()}

    async def arena_races(self, event: str) -> list[ArenaRace]:
        raw = await self.redis.hgetall(EventKeys(event).races)
        out = []
        for race, value in raw.items():
            d = json.loads(value)
            out.append(ArenaRace(text(race), d["code"], list(d["entrants"] or []), int(d["starts_at"]),
                                 bool(d["started"]), bool(d["scored"])))
        return sorted(out, key=lambda r: (r.starts_at, r.race))

    async def arena_assign(self, event: str, race: str, code: str, group: list[str], starts_at: int) -> bool:
        """Put a group in its new race if every member still waits; False when one does not any more."""
        k = EventKeys(event)
        kind, _ = reply(await self._arena_assign(keys=[k.meta, k.arena, k.races, k.entrants],
                                                 args=[race, starts_at, code, *group]))
        return kind == "ok"

    async def arena_update(self, event: str, race: str, what: str, states: dict[str, ArenaState]) -> bool:
        """Mark a race ``started``, or ``scored`` with its entrants' new states; once (False after)."""
        k = EventKeys(event)
        args: list[Any] = [race, what]
        for account, state in states.items():
            args += [account, state.dumps()]
        kind, rest = reply(await self._arena_update(keys=[k.meta, k.arena, k.races], args=args))
        if kind == "err":
            raise StoreError(rest[0])
        return kind == "ok"
