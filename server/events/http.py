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

from ..answers import error_response, json_body, json_response, tournaments_of
from ..deals.checked import solver_can_check
from ..players.organiser import organiser_refusal
from ..players.registration import bearer_account
from ..race.clock import now_ms
from ..store import StoreError
from ..store.events import EventMeta
from ..store.keys import occurrence_id
from .format import UnknownFormat, format_of, unplayable


async def _event_or_404(request: Request) -> EventMeta | Response:
    """The event of the path, or the typed answer why not: 404 for no such event, 503 for one of a
    format this process does not know (docs/events.md, "Endpoints")."""
    meta = await tournaments_of(request).events.meta(request.path_params["event"])
    if meta is None:
        return error_response(p.ErrorCode.EVENT_NOT_FOUND, 404)
    if (why := unplayable(meta)) is not None:
        return error_response(p.ErrorCode.UNAVAILABLE, 503, why)
    return meta


async def create_event(request: Request) -> Response:
    """201 with the new event (registration open); 403 without the organiser token; 400 bad fields."""
    if (refusal := await organiser_refusal(request)) is not None:
        return refusal
    req = await json_body(request, p.EventCreate)
    if isinstance(req, Response):
        return req
    try:
        variant = get_variant(req.variant)
    except UnknownVariant as exc:
        return error_response(p.ErrorCode.BAD_VARIANT, 400, str(exc))
    try:
        fmt = format_of(req.format)
    except UnknownFormat as exc:
        return error_response(p.ErrorCode.BAD_FIELD, 400, str(exc))
    if (refused := fmt.refusal(req)) is not None:
        return error_response(refused[0], 400, refused[1])
    if req.deals is None and req.deal_source == "pool" and not solver_can_check(variant.key):
        return error_response(p.ErrorCode.NO_POOL, 400)
    now = now_ms()
    try:
        schedules.check(req.starts_at, req.repeat, now)
    except schedules.BadSchedule as exc:
        return error_response(p.ErrorCode.BAD_SCHEDULE, 400, str(exc))
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
    events = tournaments_of(request).events
    metas = [await events.meta(e) for e in await events.recent_ids()]
    return json_response({"events": [await format_of(m.format).info(events, m) for m in metas
                                     if m is not None and unplayable(m) is None]})


async def get_event(request: Request) -> Response:
    meta = await _event_or_404(request)
    if isinstance(meta, Response):
        return meta
    return json_response(await format_of(meta.format).info(tournaments_of(request).events, meta))


async def get_standings(request: Request) -> Response:
    meta = await _event_or_404(request)
    if isinstance(meta, Response):
        return meta
    return json_response(await format_of(meta.format).standings(tournaments_of(request).events, meta))


async def stream_event(request: Request) -> Response:
    """``GET /events/{id}/stream``: Server-Sent Events, one ``event`` frame (EventLive JSON) whenever
    the event or a heat of its round moved, at most five in any one second; the latest at once on connecting."""
    meta = await _event_or_404(request)
    if isinstance(meta, Response):
        return meta
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
    if (refusal := await organiser_refusal(request)) is not None:
        return refusal
    meta = await _event_or_404(request)
    if isinstance(meta, Response):
        return meta
    tournaments = tournaments_of(request)
    started = await tournaments.runner.start(meta)
    if started is None:
        return error_response(p.ErrorCode.EVENT_CLOSED, 409, "the event has started already")
    return json_response(await format_of(started.format).info(tournaments.events, started))


async def cancel_event(request: Request) -> Response:
    """The organiser calls off an event that has not started (``series``: and its series, no further
    occurrences). 200 with the event as it is now."""
    if (refusal := await organiser_refusal(request)) is not None:
        return refusal
    # No body: the event alone.
    req = await json_body(request, p.EventCancel) if (await request.body()).strip() else p.EventCancel()
    if isinstance(req, Response):
        return req
    meta = await _event_or_404(request)
    if isinstance(meta, Response):
        return meta
    events = tournaments_of(request).events
    try:
        await events.cancel(meta, now_ms(), series=req.series)
    except StoreError as exc:
        if exc.code == p.ErrorCode.BAD_FIELD.value:
            return error_response(p.ErrorCode.BAD_FIELD, 400, "series: this event is not one of a series")
        code = p.ErrorCode(exc.code)
        return error_response(code, 404 if code is p.ErrorCode.EVENT_NOT_FOUND else 409,
                              "only an event taking entries can be cancelled: this one has started or ended"
                              if code is p.ErrorCode.EVENT_CLOSED else None)
    meta = await events.meta(meta.id) or meta
    return json_response(await format_of(meta.format).info(events, meta))


async def enter_event(request: Request) -> Response:
    """The account of the bearer key enters (late entry: from the next round)."""
    return await _entry(request)


async def withdraw_from_event(request: Request) -> Response:
    """The account of the bearer key withdraws: no further rounds; its scores so far stay."""
    return await _entry(request, "withdraw")


async def check_in(request: Request) -> Response:
    """The account of the bearer key, an entrant, checks in (events that ask for it, before the start)."""
    return await _entry(request, "check_in")


async def _entry(request: Request, action: str = "enter") -> Response:
    account = await bearer_account(request)
    if isinstance(account, Response):
        return account
    named = request.path_params.get("name")
    if named is not None and named.casefold() != account.account:
        return error_response(p.ErrorCode.BAD_KEY, 401, "that key belongs to another account")
    try:
        entry, outcome = await tournaments_of(request).events.entry(request.path_params["event"], account.account,
                                                                    account.name, now_ms(), action)
    except StoreError as exc:
        code = p.ErrorCode(exc.code)
        return error_response(code, 404 if code is p.ErrorCode.EVENT_NOT_FOUND else 409)
    return json_response(p.EventEntry(event=request.path_params["event"], account=entry.account, name=entry.name,
                                      from_round=entry.from_round, withdrawn=entry.withdrawn,
                                      checked_in=entry.checked_in, outcome=outcome))
