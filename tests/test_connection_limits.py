"""Connection limits (issue #10): the real ``thieves-server`` under a low open-file limit.

With 1,024 descriptors a server once took about a thousand spectators and
then reset every new connection, ``/health`` included, without a word. Here
the process gets a hard limit it cannot raise (256), more spectators than
it may hold come, and every one of them must either be welcomed or told
``server_full`` and closed with 4007, while ``/health`` answers throughout
and ``/metrics`` counts the refusals. The derivation of the limit is
unit-tested below.
"""

from __future__ import annotations

import asyncio
import ipaddress
import sys
import urllib.request
from dataclasses import replace
from pathlib import Path

import websockets

from process_util import ServerProcess
from redis_util import PROCESS_ARGS, TEST_CONFIG, Client, create_race, eventually
from server.ops import limits
from shared import protocol as p

OPEN_FILES = 256
_WITH_LIMIT = ("import os, resource, sys; n = int(sys.argv[1]); "
               "resource.setrlimit(resource.RLIMIT_NOFILE, (n, n)); os.execv(sys.argv[2], sys.argv[2:])")


class LimitedServer(ServerProcess):
    """``thieves-server`` exec'd with soft = hard = ``open_files`` (as ``prlimit --nofile=N:N`` would)."""

    def __init__(self, *args: object, open_files: int, **kw: object) -> None:
        super().__init__(*args, **kw)  # type: ignore[arg-type]
        self.open_files = open_files

    @property
    def command(self) -> list[str]:
        return [sys.executable, "-c", _WITH_LIMIT, str(self.open_files), *super().command]


async def spectate(server: ServerProcess, race: str) -> tuple[str, websockets.ClientConnection | None]:
    """One spectator: ``("welcome", ws)``, or ``("refused <code> <close>", None)``; anything else
    (a reset, a handshake failure, a timeout) raises and fails the test."""
    ws = await websockets.connect(server.ws_url, compression=None, open_timeout=30)
    try:
        await ws.send(p.encode(p.Hello(protocol=p.PROTOCOL_VERSION, race=race, role="spectator")))
    except websockets.ConnectionClosed:
        pass  # refused at once: the error frame is already in (read below)
    msg = p.decode_server(await asyncio.wait_for(ws.recv(), 30))
    if isinstance(msg, p.Welcome):
        return "welcome", ws
    assert isinstance(msg, p.Error), msg
    try:
        await asyncio.wait_for(ws.recv(), 30)
    except websockets.ConnectionClosed:
        pass
    return f"refused {msg.code} {ws.close_code}", None


def metrics(server: ServerProcess) -> dict[str, float]:
    with urllib.request.urlopen(server.url + "/metrics", timeout=10) as resp:
        text = resp.read().decode()
    return {name: float(value) for name, _, value in
            (line.rpartition(" ") for line in text.splitlines() if not line.startswith("#"))}


async def healthy(server: ServerProcess) -> None:
    answer = await asyncio.to_thread(server.health, 10.0)
    assert answer is not None and answer[0] == 200, answer


async def test_beyond_max_connections_clients_are_refused_typed_and_health_answers(redis_url: str,
                                                                                  tmp_path: Path) -> None:
    server = LimitedServer(redis_url, args=PROCESS_ARGS, open_files=OPEN_FILES, log_path=tmp_path / "server.ops.log")
    await asyncio.to_thread(server.start)
    welcomed: list[websockets.ClientConnection] = []
    try:
        status, body = await asyncio.to_thread(server.health)  # type: ignore[misc]
        allowed = body["max_connections"]
        assert 0 < allowed < OPEN_FILES - 64, body  # room left for Redis, HTTP and the refusals
        assert server.events("open_files") and f"soft={OPEN_FILES}" in server.events("open_files")[0]
        assert server.events("open_files_low"), "a limit this low is worth a warning"
        race = (await create_race(server, seats=2)).race.id

        outcomes: list[str] = []
        for batch in range(0, OPEN_FILES, 32):  # more spectators than descriptors, 32 at a time
            for kind, ws in await asyncio.gather(*(spectate(server, race) for _ in range(batch, batch + 32))):
                outcomes.append(kind)
                if ws is not None:
                    welcomed.append(ws)
            await healthy(server)
        refused = OPEN_FILES - allowed
        assert outcomes.count("welcome") == allowed
        assert outcomes.count(f"refused server_full {int(p.CloseCode.SERVER_FULL)}") == refused, set(outcomes)
        figures = await asyncio.to_thread(metrics, server)
        assert figures["thieves_connections_refused_total"] == refused
        assert figures["thieves_connections"] == allowed
        assert figures["thieves_connections_max"] == allowed
        assert len(server.events("connections_full")) == 1, "one warning per full spell, not one per refusal"

        await welcomed.pop().close()  # a place frees up: the next spectator gets in

        async def let_in() -> bool:
            return (await spectate(server, race))[0] == "welcome"

        await eventually(let_in, "the next spectator to be welcomed", timeout=30)
        await healthy(server)
    finally:
        await asyncio.gather(*(ws.close() for ws in welcomed), return_exceptions=True)
        await asyncio.to_thread(server.close)


def test_max_connections_leaves_the_reserve_spare() -> None:
    config = replace(TEST_CONFIG, hint_workers=2, checked_pool_size=4)
    reserved = limits.reserved_descriptors(config)
    assert reserved == limits.BASE_DESCRIPTORS + limits.REDIS_POOL + limits.HTTP_SPARE + 3 * limits.PER_WORKER
    assert limits.derive_max_connections(1024, reserved) == 1024 - reserved
    assert limits.derive_max_connections(20_000, reserved) == 20_000 - reserved
    # Below twice the reserve a quarter of the descriptors still serves clients; never none.
    assert limits.derive_max_connections(2 * reserved - 1, reserved) == max(reserved - 1, (2 * reserved - 1) // 4)
    assert limits.derive_max_connections(100, reserved) == 25
    assert limits.derive_max_connections(2, reserved) == 1
    assert limits.max_connections(config, open_files=1024) == 1024 - reserved
    assert limits.max_connections(replace(config, max_connections=10), open_files=1024) == 10


def test_raising_the_soft_limit_to_the_hard_one() -> None:
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(soft, 512), hard))
        files = limits.raise_open_files()
        assert files.before == min(soft, 512) and files.error is None
        assert files.soft == (limits.RAISE_CAP if hard == resource.RLIM_INFINITY else hard)
        assert resource.getrlimit(resource.RLIMIT_NOFILE)[0] == files.soft
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_the_gate_admits_up_to_its_limit() -> None:
    gate = limits.ConnectionGate(2)
    assert [gate.enter(), gate.enter(), gate.enter()] == [True, True, False]
    gate.leave()
    assert gate.enter() and not gate.enter()


def test_the_client_address_behind_trusted_proxies() -> None:
    trusted = [ipaddress.ip_network("10.0.0.0/8")]
    assert limits.client_address("192.0.2.7", {"x-forwarded-for": "198.51.100.1"}, trusted) == "192.0.2.7"
    assert limits.client_address("10.0.0.1", {"x-forwarded-for": "198.51.100.1"}, trusted) == "198.51.100.1"
    chain = {"x-forwarded-for": "203.0.113.9, 198.51.100.1, 10.0.0.2"}  # client-written, client, inner proxy
    assert limits.client_address("10.0.0.1", chain, trusted) == "198.51.100.1"
    assert limits.client_address("10.0.0.1", {"x-forwarded-for": "junk, 10.0.0.3"}, trusted) == "10.0.0.3"
    assert limits.client_address("10.0.0.1", {}, trusted) == "10.0.0.1"
    assert limits.client_address("2001:db8::1", {}, []) == "2001:db8::/64"
    assert limits.client_address("::ffff:192.0.2.1", {}, []) == "192.0.2.1"
    assert limits.client_address(None, {}, []) == "unknown"


async def test_an_in_process_server_refuses_past_an_explicit_limit(redis_url: str) -> None:
    """The same gate in the app the other tests use, with ``--max-connections`` set."""
    from redis_util import live_server

    async with live_server(redis_url, max_connections=1) as server:
        first = await Client.connect(server)
        second = await Client.connect(server)
        error = await second.error()
        assert error.code == "server_full"
        assert await second.closed() == p.CloseCode.SERVER_FULL
        status, body = await server.http("GET", "/health")
        assert status == 200 and body["max_connections"] == 1 and body["connections"] == 1
        await first.close()
