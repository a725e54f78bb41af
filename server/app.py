"""The Starlette application: HTTP endpoints, the WebSocket route, the lifespan.

The lifespan owns the Redis pool and the :class:`~server.service.Service`
(Starlette's way to share state without globals); routes are thin: decode,
call the service or store, encode with the same msgspec types as the wire.
"""

from __future__ import annotations

import contextlib
from typing import Any, AsyncIterator

import msgspec
import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialWithJitterBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from shared import protocol as p
from shared.variants import get_variant

from .race import rules as races
from .config import Config
from .race.connection import Connection
from .ops.log import log
from .race.service import Service, now_ms

_json = msgspec.json.Encoder()
RETRY_POOL_SECONDS = 5
"""Retry-After of a ``pool_empty`` answer: the filler adds a deal every few seconds."""


def json_response(data: Any, status: int = 200) -> Response:
    return Response(_json.encode(data), status_code=status, media_type="application/json")


def error_response(code: p.ErrorCode, status: int, message: str | None = None) -> Response:
    return json_response({"code": code.value, "message": message or code.explanation}, status)


def _service(request: Request | WebSocket) -> Service:
    return request.app.state.service  # type: ignore[no-any-return]


async def health(request: Request) -> Response:
    """200 while Redis answers, 503 when it does not (for load balancers)."""
    service = _service(request)
    try:
        ok = await service.store.ping()
    except (RedisError, OSError):
        ok = False
    body = {"status": "ok" if ok else "unavailable", "redis": ok, "protocol": p.PROTOCOL_VERSION,
            "connections": service.connections, "max_connections": service.gate.limit,
            "races_here": len(service.hubs)}
    return json_response(body, 200 if ok else 503)


async def metrics(request: Request) -> Response:
    """This process's figures in the Prometheus text format (scrape every replica)."""
    service = _service(request)
    try:
        active, up = await service.store.active_count(), 1
        depths = await service.checked.depths()
    except (RedisError, OSError):
        active, up = -1, 0
        depths = {v: -1 for v in service.checked.targets}
    gauges = {
        "thieves_connections": ("open WebSocket connections on this process", service.connections),
        "thieves_races_here": ("races with at least one connection on this process", len(service.hubs)),
        "thieves_races_active": ("races in the lobby or running, over all processes (-1: Redis down)", active),
        "thieves_redis_up": ("1 while Redis answers", up),
        "thieves_connections_max": ("WebSockets this process admits (--max-connections or derived)",
                                    service.gate.limit),
    }
    labelled = {"thieves_checked_pool_depth": (
        "checked deals ready in the private pool, per variant kept filled (all processes; -1: Redis down)",
        "variant", depths)}
    return PlainTextResponse(service.metrics.render(gauges, labelled), media_type="text/plain; version=0.0.4")


async def create_race(request: Request) -> Response:
    try:
        req = msgspec.json.decode(await request.body() or b"{}", type=p.Create)
    except msgspec.ValidationError as exc:
        return error_response(p.ErrorCode.BAD_FIELD, 400, str(exc))
    except msgspec.DecodeError as exc:
        return error_response(p.ErrorCode.BAD_FRAME, 400, f"the body is not JSON: {exc}")
    service = _service(request)
    try:
        meta, token = await service.create_race(req, service.client_of(
            request.client.host if request.client else None, request.headers))
    except races.CreateError as exc:
        # The retryable refusals say when to come back.
        if isinstance(exc, races.CreateLimited):
            retry, status = exc.retry_after, 503 if exc.code is p.ErrorCode.LOBBIES_FULL else 429
        elif exc.code is p.ErrorCode.POOL_EMPTY:
            retry, status = RETRY_POOL_SECONDS, 503
        else:
            return error_response(exc.code, 400, str(exc))
        response = error_response(exc.code, status, str(exc))
        response.headers["Retry-After"] = str(retry)
        return response
    return json_response(p.Created(race=races.race_info(meta, now_ms()), creator_token=token), 201)


async def list_races(request: Request) -> Response:
    """Races in the lobby or running, oldest first."""
    metas = await _service(request).store.active_races()
    now = now_ms()
    return json_response({"races": [races.race_info(m, now) for m in metas]})


async def _meta_or_404(request: Request) -> Any:
    service = _service(request)
    race = await service.store.resolve(request.path_params["race"])
    meta = await service.store.meta(race) if race else None
    if meta is not None and meta.status == "started" and now_ms() >= meta.ends_at:
        if await service.end_race(meta.id):  # the time ran out with nobody connected: close it now
            meta = await service.store.meta(meta.id)
    return meta


async def get_race(request: Request) -> Response:
    meta = await _meta_or_404(request)
    if meta is None:
        return error_response(p.ErrorCode.RACE_NOT_FOUND, 404)
    version, lines = await _service(request).store.lines(meta.id)
    total = get_variant(meta.variant).total_cards
    return json_response({"race": races.race_info(meta, now_ms()),
                          "progress": races.progress_lines(lines, meta.started, total)})


async def get_results(request: Request) -> Response:
    meta = await _meta_or_404(request)
    if meta is None:
        return error_response(p.ErrorCode.RACE_NOT_FOUND, 404)
    blob = await _service(request).store.results(meta.id)
    if blob is None:
        return error_response(p.ErrorCode.RACE_NOT_OVER, 409)
    return json_response(msgspec.msgpack.decode(blob, type=p.Results))


async def websocket_endpoint(ws: WebSocket) -> None:
    service = _service(ws)
    if not service.gate.enter():
        await refuse_full(ws, service)
        return
    try:
        await Connection(ws, service).run()
    finally:
        service.gate.leave()


async def refuse_full(ws: WebSocket, service: Service) -> None:
    """Beyond ``--max-connections``: accept, say ``server_full``, close with 4007.

    Accepted rather than refused at the handshake, so the client learns why
    (an HTTP 403 at the upgrade tells a WebSocket library little); the
    headroom of the open-file limit pays for these few moments.
    """
    service.metrics.connections_refused += 1
    message = f"this server process holds {service.gate.limit} connections, its most: reconnect later"
    try:
        await ws.accept()
        await ws.send_bytes(p.encode(p.error(p.ErrorCode.SERVER_FULL, message)))
        await ws.close(p.CloseCode.SERVER_FULL)
    except (OSError, RuntimeError, WebSocketDisconnect):
        pass  # the client left first


async def _unavailable(request: Request, exc: Exception) -> Response:
    log("redis_unavailable", path=request.url.path, error=exc)
    return error_response(p.ErrorCode.UNAVAILABLE, 503)


REDIS_RETRIES = 5
"""How many times a command that met a dead or broken connection is sent again (reconnecting first)."""
REDIS_BACKOFF = ExponentialWithJitterBackoff(base=0.025, cap=0.25)
"""Waits between those tries: random up to 0.05, 0.1, 0.2, 0.25, 0.25 s (under 0.9 s in all, about
half that on average). Long enough for a blip or a quick restart; short, because the frames of one
connection are handled in turn, so during a real outage each queued frame waits this long for its
``unavailable``."""


def redis_retry() -> Retry:
    """redis-py's own retry policy for every command, pooled connection and pub/sub read.

    Why: when Redis restarts, every pooled connection is dead, and without a
    retry the first command on each fails even though Redis already answers
    again (``/health`` fine, the next ``hello`` ``unavailable``). With it a
    command that meets a dead connection reconnects and is sent again, with
    jittered backoff that rides out a blip; only a
    longer outage reaches the player as ``unavailable``. Sending a script
    again is safe: each checks its preconditions before its first write
    (a move already applied answers ``dup``, a join by the same connection
    finds its own seat).
    """
    return Retry(REDIS_BACKOFF, REDIS_RETRIES, supported_errors=(RedisConnectionError, RedisTimeoutError))


def redis_client(config: Config, redis_url: str, retry: bool = True) -> "aioredis.Redis | aioredis.RedisCluster":
    """A bytes client for the race store: one Redis, or a Redis Cluster found from one node.

    ``retry=False`` answers at once (the start-up wait logs each of its own tries).
    """
    policy = redis_retry() if retry else Retry(REDIS_BACKOFF, 0)
    if config.redis_cluster:
        return aioredis.RedisCluster.from_url(redis_url, socket_timeout=5, socket_connect_timeout=5,
                                              max_connections=64, retry=policy)
    # A blocking pool: under load a request waits for a free connection instead of failing.
    # health_check_interval: a connection idle that long is PINGed (and replaced) before use.
    pool = aioredis.BlockingConnectionPool.from_url(
        redis_url, max_connections=64, timeout=5, socket_timeout=5, socket_connect_timeout=5,
        health_check_interval=10, retry=policy,
        retry_on_error=[RedisConnectionError, RedisTimeoutError],
    )
    return aioredis.Redis(connection_pool=pool)


def create_app(config: Config, redis_url: str) -> Starlette:
    """The app for one Redis; ``redis_url`` is the resolved URL (embedded or given)."""

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        client = redis_client(config, redis_url)
        probe = redis_client(config, redis_url, retry=False)
        service = Service(config, client, probe)
        await service.start()
        app.state.service = service
        log("ready", redis=redis_url.split("@")[-1], cluster=config.redis_cluster, protocol=p.PROTOCOL_VERSION,
            instance=service.instance)
        try:
            yield
        finally:
            await service.stop()
            await client.aclose()
            await probe.aclose()

    routes = [
        Route("/health", health),
        Route("/metrics", metrics),
        Route("/races", create_race, methods=["POST"]),
        Route("/races", list_races),
        Route("/races/{race}", get_race),
        Route("/races/{race}/results", get_results),
        WebSocketRoute("/ws", websocket_endpoint),
    ]
    return Starlette(routes=routes, lifespan=lifespan,
                     exception_handlers={RedisError: _unavailable, ConnectionError: _unavailable})
