"""The spectator web pages, their live event stream and the replay boards (issue 15).

Pages are rendered whole on the server (readable without JavaScript: the
table as it stood, the standings once over); small JavaScript modules in
``static/`` then keep a race's page live from its SSE stream, which resumes
from the version the page was rendered at, so nothing is fetched twice.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, AsyncIterator

import jinja2
import markupsafe
import msgspec
from sse_starlette import EventSourceResponse
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from shared import protocol as p
from shared.variants import get_variant

from ..answers import error_response, service_of
from ..race import rules as races
from ..race.clock import now_ms
from ..race.hub import RaceHub
from ..race.service import Service
from ..store import RaceMeta
from .replay import replay_body
from .sse import RaceGone, SseSpectator, deal_text, open_stream

HERE = Path(__file__).parent
PING_SECONDS = 15
"""A comment line this often keeps proxies from closing an idle stream."""

_env = jinja2.Environment(loader=jinja2.FileSystemLoader(HERE / "templates"), autoescape=True,
                          trim_blocks=True, lstrip_blocks=True)
_leaving: set[asyncio.Task[None]] = set()


STATUS_WORDS = {
    "waiting": ("…", "waiting"), "ready": ("✓", "ready"), "racing": ("▶", "racing"), "blocked": ("■", "blocked"),
    "finished": ("★", "won"), "gave_up": ("✗", "gave up"), "disconnected": ("◌", "offline"),
}
"""A status as a sign and words (never colour alone); static/table.js has the same table."""
FINAL_RACING = ("⏱", "out of time")
"""A standing's ``racing``: still playing when the time ran out."""


def status_html(status: str, final: bool = False) -> markupsafe.Markup:
    """A status for people: its sign hidden from screen readers, which read the words."""
    sign, words = FINAL_RACING if final and status == "racing" else STATUS_WORDS.get(status, ("", status))
    return markupsafe.Markup('<span class="sign" aria-hidden="true">{}</span> {}').format(sign, words)


def _render(name: str, status: int = 200, **context: Any) -> HTMLResponse:
    return HTMLResponse(_env.get_template(name).render(status=status_html, **context), status_code=status)


def _not_found(code: p.ErrorCode, what: str) -> HTMLResponse:
    """The typed error as a page: the code is in the page (``data-code``) for scripts and tests."""
    return _render("error.html", 404, title="Not found", code=code.value, message=what)


async def _meta(service: Service, ref: str) -> RaceMeta | None:
    """The race of an id or join code, closed first if its time ran out with nobody connected."""
    race = await service.store.resolve(ref)
    meta = await service.store.meta(race) if race else None
    if meta is not None and meta.status == "started" and now_ms() >= meta.ends_at:
        if await service.end_race(meta.id):
            meta = await service.store.meta(meta.id)
    return meta


# ------------------------------------------------------------------ pages
async def index(request: Request) -> Response:
    """Races in the lobby or running, with links to watch them."""
    metas = await service_of(request).store.active_races()
    now = now_ms()
    rows = [races.race_info(m, now) for m in metas]
    live = [r for r in rows if r.status in ("countdown", "running")]
    lobby = [r for r in rows if r.status == "lobby"]
    return _render("index.html", title="Races", live=live, lobby=lobby, now=now,
                   variant_name=_variant_name)


async def watch(request: Request) -> Response:
    """One race: its live table (kept live by static/watch.js), or the standings and replays once over."""
    service = service_of(request)
    meta = await _meta(service, request.path_params["race"])
    if meta is None:
        return _not_found(p.ErrorCode.RACE_NOT_FOUND, f"No race has the id or join code "
                                                      f"{request.path_params['race']!r}.")
    version, lines = await service.store.lines(meta.id)
    now = now_ms()
    info = races.race_info(meta, now)
    table = races.progress_lines(lines, meta.started, get_variant(meta.variant).total_cards)
    results = None
    if meta.status == "finished":
        blob = await service.store.results(meta.id)
        results = races.shown_results(meta, blob, now) if blob is not None else None
    state = {"race": msgspec.to_builtins(info), "version": version, "server_time": now,
             "progress": msgspec.to_builtins(table),
             "results": msgspec.to_builtins(results) if results else None,
             "deal_text": deal_text(results) if results else None,
             "variant_name": _variant_name(meta.variant), "events": f"/races/{meta.id}/events", "replay": f"/races/{meta.id}/replay/"}
    by_seat = {e.seat: e for e in table}
    return _render("watch.html", title=f"Race {meta.code}", race=info, table=sorted(table, key=lambda e: e.rank),
                   results=results, by_seat=by_seat, state=state, variant_name=_variant_name(meta.variant))


def _variant_name(key: str) -> str:
    try:
        return get_variant(key).name
    except ValueError:
        return key


# ------------------------------------------------------------------ data
def _last_version(request: Request) -> int | None:
    """The table version the browser holds: ``Last-Event-ID`` (a reconnect) wins over ``?last_version=``
    (the version the page was rendered at). Raises ValueError for one that is not a version."""
    text = request.headers.get("last-event-id") or request.query_params.get("last_version")
    if text is None or text == "":
        return None
    value = int(text)
    if value < 0:
        raise ValueError(text)
    return value


async def race_events(request: Request) -> Response:
    """``GET /races/{race}/events``: the race's live events for a spectator (text/event-stream)."""
    service = service_of(request)
    try:
        last_version = _last_version(request)
    except ValueError:
        return error_response(p.ErrorCode.BAD_FIELD, 400, "Last-Event-ID / last_version: a race version (an "
                                                          "integer >= 0)")
    race = await service.store.resolve(request.path_params["race"])
    if race is None:
        return error_response(p.ErrorCode.RACE_NOT_FOUND, 404)
    if not service.gate.enter():
        response = error_response(p.ErrorCode.SERVER_FULL, 503)
        response.headers["Retry-After"] = "5"
        return response
    try:
        hub, listener = await open_stream(service, race, last_version)
    except RaceGone:
        service.gate.leave()
        return error_response(p.ErrorCode.RACE_NOT_FOUND, 404)
    except BaseException:
        service.gate.leave()
        raise
    return EventSourceResponse(_stream(service, hub, listener), ping=PING_SECONDS)


async def _stream(service: Service, hub: RaceHub, listener: SseSpectator) -> AsyncIterator[bytes]:
    try:
        async for chunk in listener.events():
            yield chunk
    finally:
        # Left in a task of its own: this generator may be closing because its task is cancelled
        # (the browser went away), and leaving unsubscribes the hub, which awaits Redis.
        service.gate.leave()
        task = asyncio.ensure_future(service.leave_hub(hub, listener))
        _leaving.add(task)
        task.add_done_callback(_leaving.discard)


async def race_replay(request: Request) -> Response:
    """``GET /races/{race}/replay/{seat}``: every board of one player's game, once the race is over."""
    service = service_of(request)
    try:
        seat = int(request.path_params["seat"])
    except ValueError:
        return error_response(p.ErrorCode.BAD_FIELD, 400, "the seat is a number (0 is the first seat)")
    meta = await _meta(service, request.path_params["race"])
    if meta is None:
        return error_response(p.ErrorCode.RACE_NOT_FOUND, 404)
    blob = await service.store.results(meta.id)
    if blob is None:
        return error_response(p.ErrorCode.RACE_NOT_OVER, 409, "the games are secret until the race is over")
    if now_ms() < meta.reveal_at:
        return error_response(p.ErrorCode.RACE_NOT_OVER, 409, "a daily deal's games stay secret until the day is over")
    bodies = await asyncio.to_thread(replay_body, blob, seat)
    if bodies is None:
        return error_response(p.ErrorCode.PLAYER_NOT_FOUND, 404, f"the race has no player in seat {seat}")
    plain, packed = bodies
    headers = {"Cache-Control": "public, max-age=3600", "Vary": "Accept-Encoding"}
    if "gzip" in request.headers.get("accept-encoding", ""):
        return Response(packed, media_type="application/json", headers={**headers, "Content-Encoding": "gzip"})
    return Response(plain, media_type="application/json", headers=headers)


def web_routes() -> list[BaseRoute]:
    """The routes server/app.py adds for the web pages."""
    return [
        Route("/", index),
        Route("/watch/{race}", watch),
        Route("/races/{race}/events", race_events),
        Route("/races/{race}/replay/{seat}", race_replay),
        Mount("/static", app=StaticFiles(directory=HERE / "static"), name="static"),
    ]


__all__ = ["web_routes"]
