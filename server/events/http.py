"""HTTP endpoints of events: the organiser's (create, start) and the entrants' (enter, withdraw), and
what anyone may read (the list, one event, its standings).

An organiser's power comes only from the server's ``--organiser-token``, sent as
``Authorization: Bearer``; an entrant's only from its account key. Neither passes for the other.
"""

from __future__ import annotations

import secrets
from typing import AsyncIterator

from sse_starlette import EventSourceResponse, ServerSentEvent

from starlette.requests import Request
from starlette.responses import Response

from shared import protocol as p
from shared.variants import UnknownVariant, get_variant

from ..answers import error_response, json_body, json_response, tournaments_of
from ..deals.checked import solver_can_check
from ..players.organiser import organiser_refusal
from ..players.registration import bearer_account
from ..race.clock import now_ms
from ..store import StoreError
from ..store.events import EventMeta
from .format import UnknownFormat, format_of


async def _event_or_404(request: Request) -> EventMeta | Response:
    meta = await tournaments_of(request).events.meta(request.path_params["event"])
    return meta if meta is not None else error_response(p.ErrorCode.EVENT_NOT_FOUND, 404)


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
    meta = EventMeta(
        id=secrets.token_hex(6), name=req.name, format=req.format, variant=variant.key, rounds=req.rounds,
        heat_size=req.heat_size, time_limit=req.time_limit, join_seconds=req.join_seconds,
        break_seconds=req.break_seconds, deal_source=req.deal_source,
        deals=",".join(str(d) for d in req.deals or []), rated=req.rated, late_entry=req.late_entry,
        status="registration", round=0, round_state="waiting", created_at=now_ms(), duration=req.duration,
        group_size=req.group_size, check_in=req.check_in)
    events = tournaments_of(request).events
    await events.create(meta)
    return json_response(await fmt.info(events, meta), 201)


async def list_events(request: Request) -> Response:
    events = tournaments_of(request).events
    metas = [await events.meta(e) for e in await events.recent_ids()]
    return json_response({"events": [await format_of(m.format).info(events, m) for m in metas if m is not None]})


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
    the event or a heat of its round moved, at most five a second; the latest at once on connecting."""
    meta = await _event_or_404(request)
    if isinstance(meta, Response):
        return meta
    feed, queue = tournaments_of(request).feeds.watch(meta.id)

    async def frames() -> AsyncIterator[ServerSentEvent]:
        try:
            while True:
                frame = await queue.get()
                if frame is None:
                    return
                yield ServerSentEvent(data=frame.decode(), event="event", retry=2000)
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
        entry = await tournaments_of(request).events.entry(request.path_params["event"], account.account, account.name,
                                                       now_ms(), action)
    except StoreError as exc:
        code = p.ErrorCode(exc.code)
        return error_response(code, 404 if code is p.ErrorCode.EVENT_NOT_FOUND else 409)
    return json_response(p.EventEntry(event=request.path_params["event"], account=entry.account, name=entry.name,
                                      from_round=entry.from_round, withdrawn=entry.withdrawn,
                                      checked_in=entry.checked_in))
