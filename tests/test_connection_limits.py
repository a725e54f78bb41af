"""Connection limits (issues #10 and #22): the real ``thieves-server`` under a low open-file limit.

With 1,024 descriptors a server once took about a thousand spectators and
then reset every new connection, ``/health`` included, without a word; later
an outside tester did the same with event streams, keep-alive connections and
half-sent requests, which were not counted at all. Here the process gets a
hard limit it cannot raise (256) and holds 40 connections (``--max-connections``:
the rest of its descriptors are what the default derivation keeps for Redis,
the reserve and refusals in flight, unit-tested below), and for each kind of
connection more come than it has descriptors: every one is either held or refused typed
(``server_full``: HTTP 503 JSON, or an ``error`` frame and close 4007), a
newcomer of any kind is refused typed while it is full, ``/health`` answers
throughout and ``/metrics`` counts the refusals.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import sys
import urllib.request
from dataclasses import replace
from pathlib import Path
from typing import Any, Iterator

import pytest

from edge_util import RawClient, head, spectate
from process_util import ServerProcess
from redis_util import PROCESS_ARGS, TEST_CONFIG, eventually
from server.answers import SECURITY_HEADERS
from server.ops import limits
from server.transport import edge
from server.ops.embedded import EmbeddedRedis

OPEN_FILES = 256
HELD = 40
TOTAL = OPEN_FILES + 16
"""Connections of one kind opened per test: more than the process has descriptors."""
ORGANISER = "organiser-secret-for-edge-tests"
KINDS = ("websocket", "race_stream", "event_stream", "keep_alive", "half_read")
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


@pytest.fixture(scope="module")
def limited(redis_server: EmbeddedRedis, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LimitedServer]:
    """One server for the kinds (each test gives back every place it took). The head deadline is long:
    the half-read and keep-alive holders must outlast a test on a busy machine."""
    server = LimitedServer(redis_server.url, open_files=OPEN_FILES,
                           args=[*PROCESS_ARGS, "--organiser-token", ORGANISER, "--header-timeout", "120",
                                 "--max-connections", str(HELD)],
                           log_path=tmp_path_factory.mktemp("limited") / "server.ops.log")
    server.start()
    try:
        yield server
    finally:
        server.close()


def metrics(server: ServerProcess) -> dict[str, float]:
    with urllib.request.urlopen(server.url + "/metrics", timeout=10) as resp:
        text = resp.read().decode()
    return {name: float(value) for name, _, value in
            (line.rpartition(" ") for line in text.splitlines() if not line.startswith("#"))}


async def health(server: ServerProcess) -> dict[str, Any]:
    answer = await asyncio.to_thread(server.health, 10.0)
    assert answer is not None and answer[0] == 200, answer
    return answer[1]  # type: ignore[no-any-return]


async def _target(server: ServerProcess, kind: str) -> str:
    """What the kind connects to: a race (also what a WebSocket newcomer spectates), or an event."""
    client = await RawClient.open(server.url)
    try:
        if kind == "event_stream":
            body = json.dumps({"name": "Cup", "join_seconds": 600, "break_seconds": 0, "time_limit": 120}).encode()
            answer = await client.request("POST", "/events", {"authorization": f"Bearer {ORGANISER}",
                                                              "content-type": "application/json"}, body)
        else:
            answer = await client.request("POST", "/races", {"content-type": "application/json"}, b"{}")
        assert answer.status == 201, answer
        return str(answer.json["id"] if kind == "event_stream" else answer.json["race"]["id"])
    finally:
        client.close()


async def hold(server: ServerProcess, kind: str, target: str) -> tuple[str, Any]:
    """Open one connection of ``kind``: ``("held", connection)`` or ``("refused <code>", None)``.

    A half-read request is held while the server says nothing (it waits for the rest of the head);
    an HTTP refusal must be 503 with ``Retry-After``."""
    if kind == "websocket":
        outcome, ws = await spectate(server.ws_url, target)
        return ("held", ws) if outcome == "welcome" else (outcome, None)
    client = await RawClient.open(server.url)
    try:
        if kind == "half_read":
            await client.send(b"GET /races HTTP/1.1\r\nhost: test\r\n")
            try:
                answer = await client.answer(timeout=0.5)
            except TimeoutError:
                return "held", client
        else:
            path = {"race_stream": f"/races/{target}/events", "event_stream": f"/events/{target}/stream",
                    "keep_alive": "/races"}[kind]
            await client.send(head("GET", path, {"accept": "text/event-stream"}))
            answer = await client.answer(body=kind == "keep_alive")
            if answer.status == 200:
                return "held", client
    except BaseException:
        client.close()
        raise
    client.close()
    assert answer.status == 503 and answer.headers["retry-after"] == str(edge.RETRY_AFTER), answer
    return f"refused {answer.code}", None


async def silent(client: RawClient) -> str:
    """A held half-read request now: still waiting (``held``), or answered since (a refusal)."""
    try:
        answer = await client.answer(timeout=0.5)
    except TimeoutError:
        return "held"
    assert answer.status == 503, answer
    return f"refused {answer.code}"


async def close_all(held: list[Any]) -> None:
    for conn in held:
        if isinstance(conn, RawClient):
            conn.close()
    await asyncio.gather(*(c.close() for c in held if not isinstance(c, RawClient)), return_exceptions=True)


@pytest.mark.parametrize("kind", KINDS)
async def test_every_kind_of_connection_counts_against_one_cap(limited: LimitedServer, kind: str) -> None:
    server = limited
    body = await health(server)
    allowed = body["max_connections"]
    assert allowed == HELD and server.events("open_files") and f"soft={OPEN_FILES}" in server.events("open_files")[0]
    reserved = limits.reserved_descriptors(replace(TEST_CONFIG, hint_workers=0, checked_pool_size=0).deals)
    assert allowed + reserved <= OPEN_FILES  # what the derivation keeps spare is spare
    race = await _target(server, "race")
    target = await _target(server, kind) if kind == "event_stream" else race
    before = await asyncio.to_thread(metrics, server)
    held: list[Any] = []
    outcomes: list[str] = []
    try:
        for start in range(0, TOTAL, 32):
            for outcome, conn in await asyncio.gather(*(hold(server, kind, target)
                                                        for _ in range(start, min(TOTAL, start + 32)))):
                outcomes.append(outcome)
                if conn is not None:
                    held.append(conn)
            await health(server)  # answers throughout (the reserve)
        if kind == "half_read":  # a reserve place waits for its head too, until a newcomer needs it
            late = await asyncio.gather(*(silent(c) for c in held))
            outcomes += [o for o in late if o != "held"]
            assert allowed <= late.count("held") <= allowed + edge.RESERVE, late
        else:
            assert len(held) == allowed
        assert set(o for o in outcomes if o != "held") == {"refused server_full"}, set(outcomes)
        refused = [o for o in outcomes if o != "held"]

        # Full: a newcomer of any kind is refused typed; /health and /metrics answer.
        assert (await health(server))["connections"] == allowed
        assert (await spectate(server.ws_url, race))[0] == "refused server_full"
        client = await RawClient.open(server.url)
        answer = await client.request("POST", "/races", {"content-type": "application/json"}, b"{}")
        client.close()
        assert (answer.status, answer.code) == (503, "server_full") and answer.headers["retry-after"] == "5"
        assert all(answer.headers[name.decode()] == value.decode() for name, value in SECURITY_HEADERS)
        figures = await asyncio.to_thread(metrics, server)
        assert figures["thieves_connections_held"] == figures["thieves_connections_max"] == allowed
        key = 'thieves_connections_refused_total{kind="server_full"}'
        assert figures[key] - before.get(key, 0) >= len(refused) + 2
        assert server.events("connections_full"), "a full spell is logged"
    finally:
        await close_all(held)

    async def given_back() -> bool:
        return (await health(server))["connections"] == 1  # the /health request itself

    await eventually(given_back, "every place to be given back", timeout=30)

    async def reserve_free() -> bool:  # (a refusal answered at once must not give back a place it never took)
        return (await asyncio.to_thread(metrics, server))["thieves_connections_reserved"] == 0

    await eventually(reserve_free, "every reserve place to be given back", timeout=30)
    outcome, ws = await spectate(server.ws_url, race)
    assert outcome == "welcome" and ws is not None
    await ws.close()


def test_max_connections_leaves_the_reserve_spare() -> None:
    config = replace(TEST_CONFIG, hint_workers=2, checked_pool_size=4)
    reserved = limits.reserved_descriptors(config.deals)
    assert reserved == limits.BASE_DESCRIPTORS + limits.REDIS_POOL + limits.HTTP_SPARE + 3 * limits.PER_WORKER
    # The edge's reserve and its softly closing connections are what HTTP_SPARE keeps descriptors for.
    assert edge.RESERVE + edge.LINGERING <= limits.HTTP_SPARE
    assert limits.derive_max_connections(1024, reserved) == 1024 - reserved
    assert limits.derive_max_connections(20_000, reserved) == 20_000 - reserved
    # Below twice the reserve a quarter of the descriptors still serves clients; never none.
    assert limits.derive_max_connections(2 * reserved - 1, reserved) == max(reserved - 1, (2 * reserved - 1) // 4)
    assert limits.derive_max_connections(100, reserved) == 25
    assert limits.derive_max_connections(2, reserved) == 1
    assert limits.max_connections(config.edge, reserved, open_files=1024) == 1024 - reserved
    assert limits.max_connections(replace(config, max_connections=10).edge, reserved, open_files=1024) == 10


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


