"""The Starlette application: HTTP endpoints, the WebSocket route, the lifespan.

The lifespan owns the Redis pool and the parts server/compose.py builds (the race
:class:`~server.race.service.Service`, the events' ``Tournaments`` and the accounts' ``Results``), kept on
``app.state`` (Starlette's way to share state without globals); routes are thin: decode,
call the service or store, encode with the same msgspec types as the wire.
"""

from __future__ import annotations

import contextlib
from typing import Any, AsyncIterator, Iterable

import msgspec

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from starlette.websockets import WebSocket

from shared import protocol as p
from shared.variants import get_variant

from .race import rules as races
from .config import Config
from .race.connection import Connection
from .transport.edge import AdmissionMiddleware, edge_of
from .ops.log import SummedLog, log
from .race.clock import now_ms
from .compose import compose
from .race.service import Service
from .matchmaking import challenges, rematches
from .matchmaking.requests import seeks_of
from .players import http as players_http
from .store import UNAVAILABLE, RaceMeta, RedisClient, RedisTarget, redis_client
from .answers import (SECURITY_HEADERS, client_of, error_response, json_body, json_response, refusal_answer,
                      service_of)
from .players.registration import check_key, register_player, rotate_key
from .events import daily, http as events
from .events.format import Format
from .events.formats import ALL
from .web import fairplay, people
from .web.routes import page_or_json, unknown_path, web_routes

async def health(request: Request) -> Response:
    """200 while Redis answers, 503 when it does not (for load balancers)."""
    service = service_of(request)
    try:
        ok = await service.store.ping()
    except UNAVAILABLE:
        ok = False
    edge = edge_of(request.scope)
    body = {"status": "ok" if ok else "unavailable", "redis": ok, "protocol": p.PROTOCOL_VERSION,
            "connections": edge.held if edge else None, "max_connections": edge.limits.max_connections if edge else None,
            "websockets": service.connections, "races_here": len(service.hubs)}
    return json_response(body, 200 if ok else 503)


async def metrics(request: Request) -> Response:
    """This process's figures in the Prometheus text format (scrape every replica)."""
    service = service_of(request)
    try:
        active, up = await service.store.active_count(), 1
        depths = await service.checked.depths()
        seeking = {line.pool: line.waiting for line in (await seeks_of(request).pools()).pools}
    except UNAVAILABLE:
        active, up = -1, 0
        depths = {v: -1 for v in service.checked.targets}
        seeking = {}
    edge = edge_of(request.scope)
    gauges = {
        "thieves_connections": ("open WebSocket connections on this process", service.connections),
        "thieves_connections_held": ("connections counted against --max-connections: WebSockets, event streams, "
                                     "HTTP keep-alive and requests being read", edge.held if edge else -1),
        "thieves_connections_reserved": ("connections beyond the caps held in the reserve (for /health and /metrics, "
                                         "or to be refused once their request head is read)",
                                         edge.reserved if edge else -1),
        "thieves_races_here": ("races with at least one connection on this process", len(service.hubs)),
        "thieves_races_active": ("races in the lobby or running, over all processes (-1: Redis down)", active),
        "thieves_redis_up": ("1 while Redis answers", up),
        "thieves_replica_acks": ("1 while acknowledged writes wait for a Redis replica (--replica-acks)",
                                 int(service.store.replicas.active)),
        "thieves_connections_max": ("connections this process holds at most (--max-connections or derived)",
                                    edge.limits.max_connections if edge else -1),
    }
    labelled = {"thieves_checked_pool_depth": (
        "checked deals ready in the private pool, per variant kept filled (all processes; -1: Redis down)",
        "variant", depths),
        "thieves_seeks_waiting": ("seeks waiting in each pool, over all processes", "pool", seeking)}
    counters = {"thieves_connections_refused_total": (
        "connections and requests refused at the edge, by kind: server_full, too_many_connections, "
        "header_timeout, body_timeout, body_too_large, bad_request", "kind", dict(edge.refused) if edge else {}),
        "thieves_replica_writes_total": (
            "acknowledged writes (a round trip of moves, a join, a give-up, an end, a resent move) that waited for "
            "a Redis replica, by outcome: confirmed, or unconfirmed (answered unavailable)", "outcome",
            {"confirmed": service.store.replicas.confirmed, "unconfirmed": service.store.replicas.unconfirmed})}
    return PlainTextResponse(service.metrics.render(gauges, labelled, counters),
                             media_type="text/plain; version=0.0.4")


async def list_seeks(request: Request) -> Response:
    """``GET /seeks``: the seek pools and how many wait in each (docs/protocol.md "Seeks")."""
    return json_response(msgspec.to_builtins(await seeks_of(request).pools()))


async def create_race(request: Request) -> Response:
    req = await json_body(request, p.Create)
    service = service_of(request)
    meta, token = await service.create_race(req, client_of(request))
    return json_response(p.Created(race=races.race_info(meta, now_ms()), creator_token=token), 201)


FINISHED_LISTED = 20
"""The latest finished races ``GET /races?finished=yes`` adds (their pages and results stay until --retention)."""


async def list_races(request: Request) -> Response:
    """Races in the lobby or running, oldest first; with ``?finished=yes`` then the latest finished ones,
    newest first, as the front page lists them (a RaceInfo has no deal, only the public commitment)."""
    finished = request.query_params.get("finished", "no")
    if finished not in ("yes", "no"):
        raise p.Refusal(p.ErrorCode.BAD_FIELD, "finished: yes or no")
    store = service_of(request).store
    metas = await store.active_races()
    if finished == "yes":
        metas += await store.recent_races(FINISHED_LISTED)
    now = now_ms()
    return json_response({"races": [races.race_info(m, now) for m in metas]})


async def _meta_or_404(request: Request) -> RaceMeta:
    """The race of the path; raises ``race_not_found``."""
    service = service_of(request)
    race = await service.store.resolve(request.path_params["race"])
    meta = await service.store.meta(race) if race else None
    if meta is not None and meta.status == "started" and now_ms() >= meta.ends_at:
        if await service.end_race(meta.id):  # the time ran out with nobody connected: close it now
            meta = await service.store.meta(meta.id)
    if meta is None:
        raise p.Refusal(p.ErrorCode.RACE_NOT_FOUND)
    return meta


async def get_race(request: Request) -> Response:
    meta = await _meta_or_404(request)
    version, lines = await service_of(request).store.lines(meta.id)
    total = get_variant(meta.variant).total_cards
    return json_response({"race": races.race_info(meta, now_ms()),
                          "progress": races.progress_lines(lines, meta.started, total)})


async def get_results(request: Request) -> Response:
    meta = await _meta_or_404(request)
    blob = await service_of(request).store.results(meta.id)
    if blob is None:
        raise p.Refusal(p.ErrorCode.RACE_NOT_OVER)
    return json_response(races.shown_results(meta, blob, now_ms()))


async def websocket_endpoint(ws: WebSocket) -> None:
    """A race connection; admitted (or refused with ``server_full``) by the edge (server/transport/edge.py)."""
    await Connection(ws, service_of(ws), ws.app.state.lobby).run()


BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


class EdgeMiddleware:
    """What every request meets first: the security headers on every answer (HTTP, the event
    streams, the WebSocket handshake), and a body-carrying method without
    ``Content-Type: application/json`` refused with 415 ``unsupported_media_type`` before any
    handler runs. A browser sends a cross-site request without asking first (CORS) only as a
    "simple" one, whose content type is a form's or ``text/plain``: so no web page can make a
    visitor create races or accounts (spending the visitor's address's limits)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return

        async def send_secured(message: Message) -> None:
            if message["type"] in ("http.response.start", "websocket.accept", "websocket.http.response.start"):
                message = {**message, "headers": [*message.get("headers", ()), *SECURITY_HEADERS]}
            await send(message)

        if scope["type"] == "http" and scope["method"] in BODY_METHODS and not _says_json(scope):
            await error_response(p.ErrorCode.UNSUPPORTED_MEDIA_TYPE, 415)(scope, receive, send_secured)
            return
        await self.app(scope, receive, send_secured)


def _says_json(scope: Scope) -> bool:
    """Whether the request's ``Content-Type`` is ``application/json`` (parameters such as a charset allowed)."""
    for name, value in scope["headers"]:
        if name == b"content-type":
            return bool(value.split(b";", 1)[0].strip().lower() == b"application/json")
    return False


async def _internal(request: Request, exc: Exception) -> Response:
    """A handler that failed: a typed 500 with the security headers (Starlette answers it outside
    every middleware, then hands the exception on to be logged with its traceback)."""
    response = error_response(p.ErrorCode.INTERNAL, 500)
    response.headers.update({name.decode(): value.decode() for name, value in SECURITY_HEADERS})
    return response


async def _unavailable(request: Request, exc: Exception) -> Response:
    log("redis_unavailable", path=request.url.path, error=exc)
    return error_response(p.ErrorCode.UNAVAILABLE, 503)


def create_app(config: Config, redis_url: str | RedisTarget, formats: Iterable[Format] = ALL) -> Starlette:
    """The app for one Redis; ``redis_url`` is the resolved URL (embedded or given) or the whole target
    (a cluster's nodes, Sentinels); its events play ``formats`` (server/compose.py)."""
    target = RedisTarget.of(redis_url, config.redis_cluster)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        client = redis_client(target)
        probe = redis_client(target, retry=False)
        process = compose(config, client, probe, formats)
        service = process.races
        await service.start()
        app.state.service = service
        app.state.tournaments = process.tournaments
        app.state.results = process.results
        app.state.lobby = process.lobby
        app.state.seeks = process.seeks
        log("ready", redis=target.where, cluster=config.redis_cluster, protocol=p.PROTOCOL_VERSION,
            instance=service.instance)
        try:
            yield
        finally:
            await service.stop()
            await client.aclose()
            await probe.aclose()
            SummedLog.flush_open()

    routes = [
        Route("/health", health),
        Route("/metrics", metrics),
        Route("/races", create_race, methods=["POST"]),
        Route("/races", list_races),
        Route("/seeks", list_seeks),
        Route("/races/{race}", get_race),
        Route("/races/{race}/results", get_results),
        Route("/races/{race}/rematch", rematches.get_rematch),
        Route("/races/{race}/rematch", rematches.answer_rematch, methods=["POST"]),
        Route("/players", register_player, methods=["POST"]),
        Route("/players/{name}/key", rotate_key, methods=["POST"]),
        Route("/players/{name}/key", check_key),
        Route("/players/{name}", players_http.get_profile),
        Route("/players/{name}/races", players_http.get_history),
        Route("/players/{name}/challenges", challenges.set_accepting, methods=["POST"]),
        Route("/challenges", challenges.create_challenge, methods=["POST"]),
        Route("/challenges", challenges.list_challenges),
        Route("/challenges/{challenge}", challenges.get_challenge),
        Route("/challenges/{challenge}/accept", challenges.accept_challenge, methods=["POST"]),
        Route("/challenges/{challenge}/decline", challenges.decline_challenge, methods=["POST"]),
        Route("/challenges/{challenge}/cancel", challenges.cancel_challenge, methods=["POST"]),
        Route("/leaderboard", page_or_json(people.leaderboard, players_http.get_leaderboard)),  # (server/web/)
        Route("/events", events.create_event, methods=["POST"]),
        Route("/events", events.list_events),
        Route("/events/{event}", events.get_event),
        Route("/events/{event}/standings", events.get_standings),
        Route("/events/{event}/stream", events.stream_event),
        Route("/events/{event}/start", events.start_event, methods=["POST"]),
        Route("/events/{event}/cancel", events.cancel_event, methods=["POST"]),
        Route("/events/{event}/entrants", events.enter_event, methods=["POST"]),
        Route("/events/{event}/entrants/{name}", events.withdraw_from_event, methods=["DELETE"]),
        Route("/events/{event}/check-in", events.check_in, methods=["POST"]),
        Route("/daily/{variant}", daily.play_daily, methods=["POST"]),
        Route("/daily/{variant}", daily.daily_board),
        Route("/events/{event}/fairplay", fairplay.event_fairplay),  # organiser only (server/web/fairplay.py)
        Route("/daily/{variant}/fairplay", fairplay.daily_fairplay),
        WebSocketRoute("/ws", websocket_endpoint),
        *web_routes(),  # the spectator pages, their event streams and replays (server/web/)
    ]
    # The security headers' middleware first, so they are on the admission's refusals too.
    return Starlette(routes=routes, lifespan=lifespan,
                     middleware=[Middleware(EdgeMiddleware), Middleware(AdmissionMiddleware)],
                     exception_handlers={Exception: _internal, 404: unknown_path, p.Refusal: refusal_answer,
                                         **{error: _unavailable for error in UNAVAILABLE}})
