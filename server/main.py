"""``thieves-server``: the race server on uvicorn, with an embedded Redis unless told otherwise."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import socket
import sys
from typing import Any, Callable, Sequence

import uvicorn

from shared import protocol as p


from .ops import collector, dependencies, limits
from .app import create_app
from .store import NOT_READY, UNAVAILABLE, RedisTarget, redis_client
from .config import Config, RedisSettings, parse_args
from .ops.embedded import EmbeddedRedis, EmbeddedRedisError
from .transport.edge import HEAD_BYTES, Edge, EdgeLimits
from .ops.log import log, setup_logging
from .transport.websocket import Protocol as WebSocketProtocol


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop where it exists: it doubles a WebSocket server's throughput (docs/design.md)."""
    try:
        import uvloop
    except ImportError:  # pragma: no cover - Windows
        return None
    return uvloop.new_event_loop


def uvicorn_config(app: Any, config: Config) -> uvicorn.Config:
    """The uvicorn settings that matter for this protocol (see docs/design.md), with a new :class:`Edge`
    counting this server's connections (``--max-connections`` read now: after ``raise_open_files``)."""
    edge = Edge(EdgeLimits.of(config.edge, limits.reserved_descriptors(config.deals)))
    return uvicorn.Config(
        app,
        host=config.host,
        port=config.port,
        loop="none",  # serve() runs in the caller's loop (uvloop from main(); the test's own loop)
        http=edge.protocol,  # counted, with read deadlines (server/transport/edge.py)
        h11_max_incomplete_event_size=HEAD_BYTES,
        timeout_keep_alive=config.header_timeout,  # type: ignore[arg-type]  # an idle keep-alive waits for its next head
        ws=WebSocketProtocol,  # websockets-sansio with a lingering close and a send backlog (server/transport/websocket.py)
        ws_max_size=p.MAX_FRAME_BYTES,
        ws_per_message_deflate=False,
        ws_ping_interval=20.0,
        ws_ping_timeout=20.0,
        timeout_graceful_shutdown=config.graceful_timeout,  # type: ignore[arg-type]
        lifespan="on",
        log_level="warning",
        access_log=False,
        # uvicorn would otherwise believe X-Forwarded-For from 127.0.0.1 and rewrite the client's
        # address: who a request comes from is --trusted-proxies' call alone (server/ops/limits.py).
        proxy_headers=False,
    )


class CannotListen(RuntimeError):
    """The listening address is taken (or not ours to take): the one line to say so."""


def listen_problem(host: str, port: int) -> str | None:
    """Why ``host:port`` cannot be listened on, or None.

    Tried before anything starts (the embedded Redis, the app), so that a busy port is one line and
    exit 1, not uvicorn's traceback after a whole start; uvicorn binds the same way (SO_REUSEADDR).
    """
    if not 0 <= port <= 65535:  # uvicorn would listen on the port modulo 65536
        return f"--port must be 0 to 65535 (0: any free port), not {port}"
    if port == 0:
        return None
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind((host, port))
    except OSError as exc:
        return f"cannot listen on {host}:{port}: {exc.strerror or exc}"
    return None


class RedisUnreachable(RuntimeError):
    """Redis did not answer within ``--redis-wait`` seconds of the start."""


def redis_target(settings: RedisSettings, resolved_url: str | None) -> RedisTarget:
    """Where this process's Redis is: the master the Sentinels name, else ``resolved_url`` (the given
    ``--redis-url``, or the embedded Redis's)."""
    if settings.redis_sentinel:
        return RedisTarget(sentinels=tuple(settings.sentinels()), master=settings.redis_master or "")
    assert resolved_url is not None
    return RedisTarget.of(resolved_url, settings.redis_cluster)


async def wait_for_redis(settings: RedisSettings, redis_url: str | RedisTarget) -> None:
    """Ping until Redis answers, backing off and logging each miss; raise after ``redis_wait`` s.

    Why wait at all: in a deployment the server often starts before Redis
    (or while it reloads its append-only file and answers -LOADING), and a
    cluster whose named node is down answers once it has failed over.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + settings.redis_wait
    delay, attempt = 0.1, 0
    target = RedisTarget.of(redis_url, settings.redis_cluster)
    where = target.where
    while True:
        attempt += 1
        client = redis_client(target, retry=False)
        try:
            await client.ping()
            return
        except NOT_READY as exc:
            error = exc
        finally:
            try:
                await client.aclose()
            except UNAVAILABLE:
                pass
        left = deadline - loop.time()
        if left <= 0:
            raise RedisUnreachable(f"Redis at {where} did not answer within {settings.redis_wait:g} s "
                                   f"({attempt} attempts; last error: {error})")
        delay = min(delay, left)
        log("redis_unreachable", logging.WARNING, redis=where, attempt=attempt, retry_in=round(delay, 2), error=error)
        await asyncio.sleep(delay)
        delay = min(delay * 2, 5.0)


async def _serve_or_say(server: uvicorn.Server, config: Config) -> None:
    """uvicorn's serve, its exit on a failed bind turned into :class:`CannotListen`.

    Caught here, in the coroutine that calls it: asyncio does not keep a task's SystemExit for whoever
    awaits the task, it stops the loop with it (a traceback and exit 3).
    """
    try:
        await server.serve()
    except SystemExit:  # the port was taken since listen_problem looked (uvicorn logged the bind error)
        raise CannotListen(f"cannot listen on {config.host}:{config.port}") from None


async def serve(config: Config, redis_url: str | RedisTarget) -> None:
    await wait_for_redis(config.redis, redis_url)
    server = uvicorn.Server(uvicorn_config(create_app(config, redis_url), config))
    task = asyncio.create_task(_serve_or_say(server, config))
    while not server.started and not task.done():
        await asyncio.sleep(0.02)
    if not server.started:
        await task  # CannotListen, or a return
        return
    host, port = server.servers[0].sockets[0].getsockname()[:2]
    log("listening", url=f"http://{host}:{port}", websocket=f"ws://{host}:{port}/ws")
    await task


def print_config(config: Config) -> None:
    print("thieves-server configuration:", file=sys.stderr)
    for key, value in config.summary().items():
        print(f"  {key:16} {value}", file=sys.stderr)
    sys.stderr.flush()


class _Terminated(Exception):
    """SIGTERM, turned into an exception so that the embedded Redis is stopped on the way out."""


def _on_sigterm(signum: int, frame: object) -> None:
    raise _Terminated()


def _on_sighup(signum: int, frame: object) -> None:
    """The terminal closed: take the same graceful path as SIGTERM (uvicorn handles that one)."""
    os.kill(os.getpid(), signal.SIGTERM)


def main(argv: Sequence[str] | None = None) -> int:
    mismatched = dependencies.installed_problems()
    if mismatched:  # before anything starts: a transport on an untested uvicorn misbehaves only under load
        for line in mismatched:
            print(f"thieves-server: {line}", file=sys.stderr)
        return 2
    try:
        config = parse_args(argv)
        config.deals.checked_targets()
        limits.trusted_networks(config.edge)
    except ValueError as exc:  # a THIEVES_* variable of the wrong type, an unknown --checked-variants or proxy
        print(f"thieves-server: {exc}", file=sys.stderr)
        return 2
    problem = listen_problem(config.host, config.port)
    if problem is not None:  # a port out of range is a usage error (2); a taken one, 1
        print(f"thieves-server: {problem}", file=sys.stderr)
        return 1 if 0 <= config.port <= 65535 else 2
    # uvicorn shuts down gracefully on SIGTERM, then re-raises the signal to the handler found
    # before it started: this one, so that the ``finally`` below still runs.
    signal.signal(signal.SIGTERM, _on_sigterm)
    signal.signal(signal.SIGHUP, _on_sighup)
    setup_logging(config.log_level)
    embedded: EmbeddedRedis | None = None
    try:  # Ctrl-C or SIGTERM at any time from here: one line, no traceback
        print_config(config)
        # Before anything opens descriptors (the embedded Redis, the pool): as Redis does for maxclients.
        limits.log_open_files(config.edge, limits.reserved_descriptors(config.deals), limits.raise_open_files())
        redis_url = config.redis_url
        if redis_url is None and not config.redis_sentinel:
            try:
                embedded = EmbeddedRedis(config.data_dir, die_with_parent=True).start()
            except EmbeddedRedisError as exc:
                print(f"thieves-server: {exc}", file=sys.stderr)
                return 2
            redis_url = embedded.url
            log("embedded_redis", data_dir=embedded.data_dir, socket=embedded.socket_path, appendonly="yes")
        collector.tune()
        with asyncio.Runner(loop_factory=loop_factory()) as runner:
            runner.run(serve(config, redis_target(config.redis, redis_url)))
    except (KeyboardInterrupt, _Terminated) as exc:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut the embedded Redis's stop short
        log("stopped", reason="interrupt" if isinstance(exc, KeyboardInterrupt) else "terminated")
    except (RedisUnreachable, CannotListen) as exc:
        print(f"thieves-server: {exc}", file=sys.stderr)
        return 1
    finally:
        if embedded is not None:
            embedded.stop()
            log("embedded_redis_stopped", data_dir=embedded.data_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
