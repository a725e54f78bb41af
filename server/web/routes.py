"""The web side of the server: the spectator pages' routes, a race's live event stream and its replays.

The pages are in pages.py (races) and people.py (accounts); this module
holds the two data endpoints the pages' JavaScript uses and the route list
server/app.py adds.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import AsyncIterator, Awaitable, Callable

from sse_starlette import EventSourceResponse
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from shared import params, protocol as p

from ..answers import error_response, service_of
from ..race.clock import now_ms
from ..race import rules as races
from ..race.hub import RaceHub
from ..race.service import Service
from ..race.tasks import report
from . import event_page, pages, people, play
from .pages import race_meta
from .render import not_found
from .replay import replay_body
from .sse import RaceGone, SseSpectator, open_stream

HERE = Path(__file__).parent
PING_SECONDS = 15
"""A comment line this often keeps proxies from closing an idle stream."""
_leaving: set[asyncio.Task[None]] = set()


# ------------------------------------------------------------------ data
def _last_version(request: Request) -> int | None:
    """The table version the browser holds: ``Last-Event-ID`` (a reconnect) wins over ``?last_version=``
    (the version the page was rendered at). Raises ValueError for one that is not a version."""
    text = request.headers.get("last-event-id") or request.query_params.get("last_version")
    if text is None or text == "":
        return None
    return params.count(text)


async def race_events(request: Request) -> Response:
    """``GET /races/{race}/events``: the race's live events for a spectator (text/event-stream)."""
    service = service_of(request)
    try:
        last_version = _last_version(request)
    except ValueError:
        raise p.Refusal(p.ErrorCode.BAD_FIELD, "Last-Event-ID / last_version: a race version (an "
                                               "integer >= 0)") from None
    race = await service.store.resolve(request.path_params["race"])
    if race is None:
        raise p.Refusal(p.ErrorCode.RACE_NOT_FOUND)
    # Admitted by the edge with its socket (server/transport/edge.py): a stream counts as long as it is open.
    try:
        hub, listener = await open_stream(service, race, last_version)
    except RaceGone:
        raise p.Refusal(p.ErrorCode.RACE_NOT_FOUND) from None
    return EventSourceResponse(_stream(service, hub, listener), ping=PING_SECONDS)


async def _stream(service: Service, hub: RaceHub, listener: SseSpectator) -> AsyncIterator[bytes]:
    try:
        async for chunk in listener.events():
            yield chunk
    finally:
        # Left in a task of its own: this generator may be closing because its task is cancelled
        # (the browser went away), and leaving unsubscribes the hub, which awaits Redis.
        task = asyncio.ensure_future(service.leave_hub(hub, listener))
        _leaving.add(task)
        task.add_done_callback(_left)


def _left(task: "asyncio.Task[None]") -> None:
    """A stream's leaving is over: forgotten, and what it raised logged."""
    _leaving.discard(task)
    report(task, "leave_hub_failed")


LINE = "line"
"""``GET /races/{race}/replay/line``: the proved winning line's boards (a checked race, once revealed)."""


async def race_replay(request: Request) -> Response:
    """``GET /races/{race}/replay/{seat}``: every board of one player's game, once the race is over (its
    deal revealed); ``/replay/line``: the boards of the winning line proved before the race, as well."""
    service = service_of(request)
    which = request.path_params["seat"]
    try:
        seat = None if which == LINE else params.count(which)
    except ValueError:
        raise p.Refusal(p.ErrorCode.BAD_FIELD, f"the seat is a number (0 is the first seat), or {LINE!r} "
                                               "for the proved winning line") from None
    meta = await race_meta(service, request.path_params["race"])
    if meta is None:
        raise p.Refusal(p.ErrorCode.RACE_NOT_FOUND)
    blob = await service.store.results(meta.id)
    if blob is None:
        raise p.Refusal(p.ErrorCode.RACE_NOT_OVER, "the games are secret until the race is over")
    secret = races.shown_results(meta, blob, now_ms()).secret_words()
    if secret is not None:
        raise p.Refusal(p.ErrorCode.DEAL_SECRET, secret)
    bodies = await asyncio.to_thread(replay_body, blob, seat)
    if bodies is None and seat is None:
        raise p.Refusal(p.ErrorCode.BAD_FIELD, "the race has no proved winning line (not a checked deal)", status=404)
    if bodies is None:
        raise p.Refusal(p.ErrorCode.PLAYER_NOT_FOUND, f"the race has no player in seat {seat}")
    plain, packed = bodies
    headers = {"Cache-Control": "public, max-age=3600", "Vary": "Accept-Encoding"}
    if "gzip" in request.headers.get("accept-encoding", ""):
        return Response(packed, media_type="application/json", headers={**headers, "Content-Encoding": "gzip"})
    return Response(plain, media_type="application/json", headers=headers)


Endpoint = Callable[[Request], Awaitable[Response]]


def page_or_json(page: Endpoint, data: Endpoint) -> Endpoint:
    """One path for a browser and a program: the page when the request's ``Accept`` asks for HTML
    (a browser's does), the JSON answer otherwise (``*/*``, no header, ``application/json``).

    Why: ``/leaderboard`` is both the page of issue 15 and the JSON endpoint clients already use.
    """

    async def endpoint(request: Request) -> Response:
        accept = request.headers.get("accept", "")
        return await (page if "text/html" in accept else data)(request)

    endpoint.__doc__ = f"{page.__doc__} (Accept: text/html) / {data.__doc__}"
    return endpoint


def web_routes() -> list[BaseRoute]:
    """The routes server/app.py adds for the web pages (``/leaderboard`` is shared with the JSON
    endpoint: server/app.py routes it through :func:`page_or_json`)."""
    return [
        Route("/", pages.index),
        Route("/watch/{race}", pages.watch),
        Route("/player/{name}", people.player),
        Route("/event/{event}", event_page.event),
        Route("/play", play.play),
        Route("/races/{race}/events", race_events),
        Route("/races/{race}/replay/{seat}", race_replay),
        Mount("/static", app=StaticFiles(directory=HERE / "static"), name="static"),
    ]


_UNKNOWN_PATHS: tuple[tuple[str, p.ErrorCode, bool], ...] = (
    ("/watch/", p.ErrorCode.RACE_NOT_FOUND, True),
    ("/player/", p.ErrorCode.PLAYER_NOT_FOUND, True),
    ("/event/", p.ErrorCode.EVENT_NOT_FOUND, True),
    ("/races/", p.ErrorCode.RACE_NOT_FOUND, False),
    ("/players/", p.ErrorCode.PLAYER_NOT_FOUND, False),
    ("/events/", p.ErrorCode.EVENT_NOT_FOUND, False),
    ("/challenges/", p.ErrorCode.CHALLENGE_NOT_FOUND, False),
    ("/daily/", p.ErrorCode.BAD_VARIANT, False),
)
"""Path prefix -> what a path under it that no route takes is not (and whether it is a page)."""


async def unknown_path(request: Request, exc: Exception) -> Response:
    """The answer to a path no route takes (server/app.py's 404 handler).

    A name or id holding ``/`` (sent as ``%2F``, which Starlette decodes
    before routing) lands here rather than in its route: under the page
    and API prefixes it gets the documented typed 404 (the error page with
    its ``data-code``, or the JSON error), as any unknown name does.
    """
    path = request.url.path
    for prefix, code, page in _UNKNOWN_PATHS:
        if path.startswith(prefix):
            ref = path[len(prefix):]
            if page:
                return not_found(code, f"Nothing here is named {ref!r}.")
            return error_response(code, 404, f"nothing is named {ref!r} (a name or id holds no '/')")
    return PlainTextResponse("Not Found", status_code=404)


__all__ = ["unknown_path", "web_routes"]
