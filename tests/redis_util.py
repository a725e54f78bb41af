"""Test helpers: a live race server on a real port, and a typed client for it.

The server is the real thing (uvicorn, Starlette, the Redis scripts) on an
ephemeral port; the client speaks the wire protocol through the
``websockets`` library, so every test crosses real sockets.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import time
import json
import urllib.request
from dataclasses import replace
from typing import Any, AsyncIterator, Awaitable, Callable, TypeVar

import msgspec
import uvicorn
import websockets

from server.app import create_app
from server.config import Config
from server.events.formats import ALL
from server.main import uvicorn_config
from shared import protocol as p

TEST_SECRET = "test-secret-0123456789abcdef"
CREATION_LIMITS = dict(create_burst=100_000, lobbies_per_address=100_000, lobbies_max=1_000_000,
                       register_burst=0, seek_pools_per_address=1_000)
"""Every test creates its races from 127.0.0.1: limits no test reaches, yet checked on every
creation (tests/test_creation_limits.py sets low ones)."""
CREATION_ARGS = [arg for name, value in CREATION_LIMITS.items()
                 for arg in ("--" + name.replace("_", "-"), str(value))]
PROCESS_ARGS = ["--countdown", "0", "--progress-hz", "50", "--racer-hz", "50", "--token-secret", TEST_SECRET, "--rate", "2000",
                "--burst", "2000", "--log-level", "info", "--hint-workers", "0", "--hint-interval", "0",
                "--checked-pool-size", "0", *CREATION_ARGS]
"""``thieves-server`` flags matching TEST_CONFIG, for tests that run the server as a process."""
TEST_CONFIG = Config(port=0, countdown=0.0, progress_hz=50.0, racer_hz=50.0, token_secret=TEST_SECRET,
                     hello_timeout=5.0, graceful_timeout=1.0, log_level="warning", rate=2000.0, burst=2000,
                     hint_workers=0, hint_budget=0.3, hint_interval=0.0,
                     checked_pool_size=0, checked_budget=0.1, checked_wait=60.0, **CREATION_LIMITS)
"""Hints run in a thread (no worker process to start per test) and without a wait between them.
No checked-deal filler (it would keep a core busy in every test): the ``server`` fixture seeds the
private pools instead (:func:`seed_checked`), and a pool race beyond those solves its deal on demand
with a short budget per deal (Forty Thieves: about one random deal in nine is won within 0.1 s)."""

M = TypeVar("M")


class LiveServer:
    """A running app: ``url`` for HTTP, ``ws_url`` for the socket, ``service`` inside."""

    def __init__(self, server: uvicorn.Server, app: Any) -> None:
        self.server = server
        self.app = app
        host, port = server.servers[0].sockets[0].getsockname()[:2]
        self.url = f"http://{host}:{port}"
        self.ws_url = f"ws://{host}:{port}/ws"

    @property
    def service(self) -> Any:
        return self.app.state.service

    @property
    def results(self) -> Any:
        """The accounts' results (server/accounts/results.py): finished races applied to their accounts."""
        return self.app.state.results

    @property
    def seeks(self) -> Any:
        """The seek pools (server/matchmaking/seeks.py)."""
        return self.app.state.seeks

    @property
    def tournaments(self) -> Any:
        """The events side (server/compose.py): event store, runner, feeds, daily deal."""
        return self.app.state.tournaments

    async def http(self, method: str, path: str, body: Any = None,
                   headers: dict[str, str] | None = None) -> tuple[int, Any]:
        """A plain HTTP request in a thread (urllib: no extra client library in the way)."""
        data = json.dumps(body).encode() if body is not None else None
        self.last_headers: dict[str, str] = {}

        def call() -> tuple[int, Any]:
            req = urllib.request.Request(self.url + path, data=data, method=method,
                                         headers={"content-type": "application/json", **(headers or {})})
            try:
                with urllib.request.urlopen(req, timeout=10) as resp:
                    self.last_headers = dict(resp.headers)
                    return resp.status, json.loads(resp.read())
            except urllib.error.HTTPError as err:
                self.last_headers = dict(err.headers)
                return err.code, json.loads(err.read())

        return await asyncio.to_thread(call)


SEEDED_VARIANTS = ("forty-thieves", "sixty-thieves")


async def seed_checked(server: "LiveServer", count: int = 4, variants: tuple[str, ...] = SEEDED_VARIANTS) -> list[Any]:
    """Put ``count`` checked deals of each variant in the server's private pool, so that pool
    races start at once: the shipped pools' first deals with their lines (public, which only
    a test may use). Returns the :class:`server.deals.checked.CheckedDeal` entries, oldest first."""
    from server.deals.checked import CheckedDeal
    from shared.pool import load_pool

    out = []
    for variant in variants:
        pool = load_pool(variant)
        for number in pool.deals[:count]:
            deal = CheckedDeal(variant, number, pool.lines[number])
            await server.service.store.checked_push(variant, deal.dumps(), 1000)
            out.append(deal)
    return out


class PromptServer(uvicorn.Server):
    """uvicorn's server, stopping within milliseconds instead of about 0.2 s: uvicorn looks at
    ``should_exit`` every 0.1 s and waits a fixed 0.1 s in its shutdown, which over the hundreds of
    servers the tests start was about two minutes of the suite. Its shutdown's steps are kept, in order
    (stop accepting, ask every connection to shut down, wait for the connections and the tasks to end,
    the lifespan's shutdown); the main loop wakes on ``should_exit`` itself, and the shutdown waits for
    its connections and tasks to end (polled, within the graceful timeout). (The product's own
    ``thieves-server`` keeps uvicorn's: its tests run it as a process.)"""

    @property
    def should_exit(self) -> bool:
        return self._exit.is_set()

    @should_exit.setter
    def should_exit(self, value: bool) -> None:
        """Set (as uvicorn and :func:`live_server` do) wakes :meth:`main_loop` at once."""
        if not hasattr(self, "_exit"):
            self._exit = asyncio.Event()
        if value:
            self._exit.set()
        else:
            self._exit.clear()

    async def main_loop(self) -> None:
        counter = 0
        while not await self.on_tick(counter):
            counter = (counter + 1) % 864_000
            try:  # until told to exit, or uvicorn's next tick (its date header, its limits) is due
                await asyncio.wait_for(self._exit.wait(), 0.1)
            except TimeoutError:
                pass

    async def shutdown(self, sockets: Any = None) -> None:
        for server in self.servers:
            server.close()
        for connection in list(self.server_state.connections):
            connection.shutdown()
        try:
            async with asyncio.timeout(self.config.timeout_graceful_shutdown):
                while self.server_state.connections or self.server_state.tasks:
                    await asyncio.sleep(0.005)
        except TimeoutError:
            for task in self.server_state.tasks:
                task.cancel(msg="Task cancelled, timeout graceful shutdown exceeded")
        for server in self.servers:
            await server.wait_closed()
        await self.lifespan.shutdown()


@contextlib.asynccontextmanager
async def live_server(redis_url: str, formats: Any = ALL, **overrides: Any) -> AsyncIterator[LiveServer]:
    """A server of the test settings with ``overrides``, playing ``formats`` (the shipped list by default)."""
    config = replace(TEST_CONFIG, **overrides)
    app = create_app(config, redis_url, formats)
    server = PromptServer(uvicorn_config(app, config))
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            task.result()
        await asyncio.sleep(0.005)
    try:
        yield LiveServer(server, app)
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 10)


class Client:
    """One WebSocket connection speaking the race protocol."""

    def __init__(self, ws: websockets.ClientConnection, table: "Table | None" = None) -> None:
        self.ws = ws
        self.seq = 0
        self.table = table or Table()
        """Every welcome and progress frame received is folded in here, whichever helper read it."""

    @classmethod
    async def connect(cls, server: LiveServer, table: "Table | None" = None) -> "Client":
        """A new connection; pass the table of a previous one to resume from it."""
        return cls(await websockets.connect(server.ws_url, compression=None, max_size=2**20), table)

    async def send(self, msg: msgspec.Struct) -> None:
        await self.ws.send(p.encode(msg))

    async def send_raw(self, data: bytes | str) -> None:
        await self.ws.send(data)

    async def recv(self, timeout: float = 5.0) -> p.ServerMessage:
        data = await asyncio.wait_for(self.ws.recv(), timeout)
        assert isinstance(data, bytes), f"text frame from the server: {data!r}"
        msg = p.decode_server(data)
        self.table.apply(msg)
        return msg

    async def expect(self, kind: type[M], timeout: float = 5.0) -> M:
        """The next frame that is not progress must be ``kind``."""
        while True:
            msg = await self.recv(timeout)
            if isinstance(msg, kind):
                return msg
            if not isinstance(msg, p.Progress):
                raise AssertionError(f"expected {kind.__name__}, got {msg!r}")

    async def hello(self, race: str, name: str | None = None, role: str = "player", **kw: Any) -> p.Welcome:
        await self.send(p.Hello(protocol=p.PROTOCOL_VERSION, race=race, role=role, name=name, **kw))  # type: ignore[arg-type]
        return await self.expect(p.Welcome)

    async def move(self, text: str, seq: int | None = None) -> p.Ack | p.Reject:
        if seq is None:
            self.seq += 1
            seq = self.seq
        await self.send(p.Move(seq=seq, move=text))
        while True:
            msg = await self.recv()
            if isinstance(msg, (p.Ack, p.Reject)) and msg.seq == seq:
                return msg
            if not isinstance(msg, (p.Progress, p.Countdown)):
                raise AssertionError(f"expected the answer to move {seq}, got {msg!r}")

    async def give_up(self) -> p.GaveUp:
        """Give up and wait for the server's answer."""
        await self.send(p.GiveUp())
        return await self.expect(p.GaveUp)

    async def error(self) -> p.Error:
        return await self.expect(p.Error)

    async def closed(self, timeout: float = 5.0) -> int:
        """Wait for the server to close; its close code."""
        with contextlib.suppress(websockets.ConnectionClosed):
            while True:
                await asyncio.wait_for(self.ws.recv(), timeout)
        assert self.ws.close_code is not None
        return self.ws.close_code

    async def close(self) -> None:
        await self.ws.close()


class Table:
    """A client's progress table and version, folded from frames as docs/protocol.md says."""

    def __init__(self) -> None:
        self.version = 0
        self.lines: dict[int, p.PlayerProgress] = {}

    def apply(self, msg: p.ServerMessage) -> None:
        if isinstance(msg, p.Welcome):
            self.version = msg.version
            if not msg.resumed:
                self.lines = {e.seat: e for e in msg.progress}
        elif isinstance(msg, p.Progress):
            if msg.full:
                self.lines = {}
            self.lines.update({e.seat: e for e in msg.players})
            self.version = max(self.version, msg.version)


DEADLINE = 20.0
"""Seconds a test waits for a condition before it fails: long, because CI may run on a busy machine;
a passing test never waits it out."""


async def eventually(check: Callable[[], Awaitable[bool] | bool], what: str, timeout: float = DEADLINE) -> None:
    """Wait until ``check()`` holds (it may be a coroutine function), polling, or fail after ``timeout``.

    Why: a fixed sleep followed by an assertion passes on an idle machine
    and fails on a busy one; a condition with a deadline passes on both.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        result = check()
        if await result if inspect.isawaitable(result) else result:
            return
        if loop.time() >= deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        await asyncio.sleep(0.02)


def until(check: Callable[[], Any], what: str, timeout: float = DEADLINE, last: Callable[[], str] = lambda: "") -> Any:
    """:func:`eventually` for code that cannot await (subprocesses, tmux screens): poll ``check`` until
    it returns something true, which is returned, or fail after ``timeout`` saying what was awaited
    and ``last()``, what was seen instead."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() >= deadline:
            seen = last()
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}" + (f"; last seen: {seen}" if seen else ""))
        time.sleep(0.02)


async def read_until_version(client: "Client", version: int, timeout: float = DEADLINE) -> None:
    """Read frames until the client's table is at ``version``: every change up to it has reached it.

    Progress frames carry the version their lines were read at, so this is
    exact where "no frame for a while" is only a guess.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while client.table.version < version:
        left = deadline - loop.time()
        if left <= 0:
            raise AssertionError(f"the client's table stayed at version {client.table.version}, not {version}")
        try:
            await client.recv(timeout=left)
        except asyncio.TimeoutError:
            pass


async def listen_as_another_process(redis: Any, race: str, lease_ms: int = 60_000) -> None:
    """An entry of another process in the race's listening set (as its Subscriber makes): the moves script
    announces the race's moves to it. A negative ``lease_ms``: an entry that ran out (a dead process's)."""
    from server.store.keys import Keys

    await redis.zadd(Keys(race).listening, {"another-process": int(time.time() * 1000) + lease_ms})


def record_calls(monkeypatch: Any, owner: Any, method: str) -> list[Any]:
    """The first argument of every call of ``owner``'s async ``method`` from now on (it still runs): what a
    test counts reads by."""
    real = getattr(owner, method)
    calls: list[Any] = []

    async def recorded(first: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(first)
        return await real(first, *args, **kwargs)

    monkeypatch.setattr(owner, method, recorded)
    return calls


async def caught_up(client: "Client", server: "LiveServer", race: str) -> None:
    """Read frames until the client has every change the race has stored so far."""
    meta = await server.service.store.meta(race)
    assert meta is not None
    await read_until_version(client, meta.version)


async def create_race(server: Any, **fields: Any) -> p.Created:
    """``POST /races`` on a :class:`LiveServer` or a ``process_util.ServerProcess`` (whose http is plain)."""
    answer = server.http("POST", "/races", fields)
    status, body = await answer if inspect.isawaitable(answer) else answer
    assert status == 201, body
    return msgspec.convert(body, p.Created)


async def create_short_race(server: LiveServer, **fields: Any) -> p.Created:
    """A race shorter than any client may ask for (``p.MIN_TIME_LIMIT``), made by the in-process server's
    own service as ``POST /races`` makes one once the request is read: for tests of what happens when a
    race's time runs out, which would otherwise wait half a minute for it."""
    from server.race import rules
    from server.race.clock import now_ms

    meta, token = await server.service.create_race(p.Create(**fields), "127.0.0.1")
    return p.Created(race=rules.race_info(meta, now_ms()), creator_token=token)


async def register(server: Any, name: str) -> str:
    """``POST /players``: a new account's key."""
    status, body = await server.http("POST", "/players", {"name": name})
    assert status == 201, body
    return str(body["key"])


async def start_race(server: Any, creator_token: str, players: list[Client]) -> list[p.Countdown]:
    """Start with the creator token and collect each player's countdown."""
    starter = await Client.connect(server)
    await starter.send(p.Start(creator_token=creator_token))
    out = [await c.expect(p.Countdown) for c in players]
    await starter.close()
    return out
