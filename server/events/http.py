"""HTTP endpoints of events: the organiser's (create, start, cancel) and the entrants' (enter, withdraw), and
what anyone may read (the list, one event, its standings).

An organiser's power comes only from the server's ``--organiser-token``, sent as
``Authorization: Bearer``; an entrant's only from its account key. Neither passes for the other.
"""

from __future__ import annotations

import secrets
from typing import AsyncIterator

import msgspec

from sse_starlette import EventSourceResponse

from starlette.requests import Request
from starlette.responses import Response

from shared import protocol as p
from shared import schedules
from shared.variants import UnknownVariant, get_variant

from ..ops.http import json_body, json_response
from ..deals.checked import solver_can_check
from ..fairplay.conditions import bad_conditions, entry_refusal
from ..players.organiser import require_organiser
from ..players.registration import bearer_account, own_account
from ..race.clock import now_ms
from ..store import StoreError
from ..store.events import EventMeta
from ..store.fairplay import FairPlayStore
from ..store.keys import occurrence_id
from .format import UnknownFormat
from .requests import tournaments_of


async def event_of_path(request: Request) -> EventMeta:
    """The event of the path; raises ``event_not_found`` (404), or ``unavailable`` (503) for one of a
    format this process does not know (docs/events.md, "Endpoints")."""
    tournaments = tournaments_of(request)
    meta = await tournaments.events.meta(request.path_params["event"])
    if meta is None:
        raise p.Refusal(p.ErrorCode.EVENT_NOT_FOUND)
    if (why := tournaments.formats.unplayable(meta)) is not None:
        raise p.Refusal(p.ErrorCode.UNAVAILABLE, why)
    return meta


async def create_event(request: Request) -> Response:
    """201 with the new event (registration open); 403 without the organiser token; 400 bad fields."""
    await require_organiser(request)
    req = await json_body(request, p.EventCreate)
    try:
        variant = get_variant(req.variant)
    except UnknownVariant as exc:
        raise p.Refusal(p.ErrorCode.BAD_VARIANT, str(exc)) from None
    try:
        fmt = tournaments_of(request).formats.of(req.format)
    except UnknownFormat as exc:
        raise p.Refusal(p.ErrorCode.BAD_FIELD, str(exc)) from None
    if (refused := fmt.refusal(req)) is not None:
        raise p.Refusal(refused[0], refused[1], status=400)
    if (upside_down := bad_conditions(req.conditions)) is not None:
        raise p.Refusal(p.ErrorCode.BAD_FIELD, upside_down)
    if req.deals is None and req.deal_source == "pool" and not solver_can_check(variant.key):
        raise p.Refusal(p.ErrorCode.NO_POOL)
    now = now_ms()
    try:
        schedules.check(req.starts_at, req.repeat, now)
    except schedules.BadSchedule as exc:
        raise p.Refusal(p.ErrorCode.BAD_SCHEDULE, str(exc)) from None
    req = msgspec.structs.replace(req, variant=variant.key)
    if req.repeat is not None:  # the first occurrence of a series
        series = secrets.token_hex(6)
        meta = EventMeta.create(req, occurrence_id(series, 1), now, series=series, occurrence=1)
    else:
        meta = EventMeta.create(req, secrets.token_hex(6), now)
    events = tournaments_of(request).events
    await events.create(meta, req)
    return json_response(await fmt.info(events, meta), 201)


async def list_events(request: Request) -> Response:
    events, formats = tournaments_of(request).events, tournaments_of(request).formats
    metas = [await events.meta(e) for e in await events.recent_ids()]
    return json_response({"events": [await formats.of(m.format).info(events, m) for m in metas
                                     if m is not None and formats.unplayable(m) is None]})


async def get_event(request: Request) -> Response:
    meta = await event_of_path(request)
    tournaments = tournaments_of(request)
    return json_response(await tournaments.formats.of(meta.format).info(tournaments.events, meta))


async def get_standings(request: Request) -> Response:
    meta = await event_of_path(request)
    tournaments = tournaments_of(request)
    return json_response(await tournaments.formats.of(meta.format).standings(tournaments.events, meta))


async def stream_event(request: Request) -> Response:
    """``GET /events/{id}/stream``: Server-Sent Events, one ``event`` frame (EventLive JSON) whenever
    the event or a heat of its round moved, at most five in any one second; the latest at once on connecting."""
    meta = await event_of_path(request)
    feed, queue = tournaments_of(request).feeds.watch(meta.id)

    async def frames() -> AsyncIterator[bytes]:
        try:
            while True:
                frame = await queue.next()
                if frame is None:
                    return
                yield feed.as_event(frame)
        finally:
            feed.unwatch(queue)

    return EventSourceResponse(frames(), ping=15)


async def start_event(request: Request) -> Response:
    """The organiser closes registration and the first round is drawn at once."""
    await require_organiser(request)
    meta = await event_of_path(request)
    tournaments = tournaments_of(request)
    started = await tournaments.runner.start(meta)
    if started is None:
        raise p.Refusal(p.ErrorCode.EVENT_CLOSED, "the event has started already")
    return json_response(await tournaments.formats.of(started.format).info(tournaments.events, started))


async def cancel_event(request: Request) -> Response:
    """The organiser calls off an event that has not started (``series``: and its series, no further
    occurrences). 200 with the event as it is now."""
    await require_organiser(request)
    # No body: the event alone.
    req = await json_body(request, p.EventCancel) if (await request.body()).strip() else p.EventCancel()
    meta = await event_of_path(request)
    tournaments = tournaments_of(request)
    events = tournaments.events
    try:
        await events.cancel(meta, now_ms(), series=req.series)
    except StoreError as exc:
        if exc.code == p.ErrorCode.BAD_FIELD.value:
            raise p.Refusal(p.ErrorCode.BAD_FIELD, "series: this event is not one of a series") from None
        code = p.ErrorCode(exc.code)
        raise p.Refusal(code, "only an event taking entries can be cancelled: this one has started or ended"
                        if code is p.ErrorCode.EVENT_CLOSED else None,
                        status=404 if code is p.ErrorCode.EVENT_NOT_FOUND else 409) from None
    meta = await events.meta(meta.id) or meta
    return json_response(await tournaments.formats.of(meta.format).info(events, meta))


async def enter_event(request: Request) -> Response:
    """The account of the bearer key enters (late entry: from the next round)."""
    return await _entry(request)


async def withdraw_from_event(request: Request) -> Response:
    """The account of the bearer key withdraws: no further rounds; its scores so far stay."""
    return await _entry(request, "withdraw")


async def check_in(request: Request) -> Response:
    """The account of the bearer key, an entrant, checks in (events that ask for it, before the start)."""
    return await _entry(request, "check_in")


async def _check_conditions(request: Request, account: str) -> None:
    """Raises the 403 that says what the account lacks for the event's entry conditions (docs/events.md,
    "Fair play"); an unknown event is left to the entry's own 404."""
    t = tournaments_of(request)
    meta = await t.events.meta(request.path_params["event"])
    if meta is None or (why := await entry_refusal(FairPlayStore(t.events.redis), meta.conditions, account,
                                                   meta.variant, now_ms())) is None:
        return
    raise p.Refusal(p.ErrorCode.ENTRY_CONDITIONS_UNMET, why)


async def _entry(request: Request, action: str = "enter") -> Response:
    account = await bearer_account(request)
    named = request.path_params.get("name")
    if named is not None:
        own_account(account, named)
    if action == "enter":
        await _check_conditions(request, account.account)
    # A refusal (event_not_found, event_closed, event_over, not_entered) is answered as the store gives it.
    entry, outcome = await tournaments_of(request).events.entry(request.path_params["event"], account.account,
                                                                account.name, now_ms(), action)
    return json_response(p.EventEntry(event=request.path_params["event"], account=entry.account, name=entry.name,
                                      from_round=entry.from_round, withdrawn=entry.withdrawn,
                                      checked_in=entry.checked_in, outcome=outcome))
