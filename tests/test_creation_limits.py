"""Creation floods (issue #10): a token bucket per client address and lobby caps, kept in Redis.

Real Redis, real uvicorn over sockets. Each test sets its own low limits
(the shared TEST_CONFIG sets limits no other test reaches). A refused
creation must leave Redis exactly as it was, so the tests compare every key
before and after.
"""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from email.message import Message
from typing import Any

import pytest
import redis

from redis_util import Client, LiveServer, eventually, live_server, start_race
from server.store import OPEN_LOBBIES, creator_keys
from shared import protocol as p

NO_LIMITS = dict(create_burst=0, lobbies_per_address=0, lobbies_max=0)


def post(server: LiveServer, body: Any = None, forwarded: str | None = None) -> tuple[int, Any, Message]:
    """``POST /races`` (blocking: call it in a thread): status, JSON body and headers."""
    headers = {"content-type": "application/json"}
    if forwarded is not None:
        headers["x-forwarded-for"] = forwarded
    req = urllib.request.Request(server.url + "/races", data=json.dumps(body or {}).encode(), method="POST",
                                 headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, json.loads(resp.read()), resp.headers
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read()), err.headers


async def create(server: LiveServer, forwarded: str | None = None, **body: Any) -> tuple[int, Any, Message]:
    return await asyncio.to_thread(post, server, body, forwarded)


def redis_state(url: str) -> dict[bytes, Any]:
    """Every key and its whole value: two of these are equal only if nothing was written."""
    client = redis.Redis.from_url(url)
    try:
        out: dict[bytes, Any] = {}
        for key in client.scan_iter(count=1000):
            kind = client.type(key)
            value: Any
            if kind == b"string":
                value = client.get(key)
            elif kind == b"hash":
                value = client.hgetall(key)
            elif kind == b"zset":
                value = client.zrange(key, 0, -1, withscores=True)
            elif kind == b"list":
                value = client.lrange(key, 0, -1)
            elif kind == b"set":
                value = client.smembers(key)
            else:
                value = client.xrange(key)
            out[key] = (kind, value)
        return out
    finally:
        client.close()


async def metric(server: LiveServer, sample: str) -> float:
    """One sample of ``/metrics`` (0 when the labelled sample is not there yet)."""
    def read() -> str:
        with urllib.request.urlopen(server.url + "/metrics", timeout=10) as resp:
            return resp.read().decode()

    for line in (await asyncio.to_thread(read)).splitlines():
        name, _, value = line.rpartition(" ")
        if name == sample:
            return float(value)
    return 0.0


async def refused_unchanged(server: LiveServer, redis_url: str, status: int, code: str,
                            forwarded: str | None = None) -> int:
    """Ask for one more race, expect the typed refusal, prove Redis unchanged; the Retry-After."""
    before = redis_state(redis_url)
    got, body, headers = await create(server, forwarded)
    assert (got, body["code"]) == (status, code), body
    assert redis_state(redis_url) == before, "a refused creation wrote to Redis"
    return int(headers["Retry-After"])


async def begin(server: LiveServer, created: dict[str, Any]) -> None:
    """A player joins and the creator starts the race: it leaves the lobby."""
    ann = await Client.connect(server)
    await ann.hello(created["race"]["code"], "ann")
    await start_race(server, created["creator_token"], [ann])
    await ann.close()


async def test_http_creation_beyond_the_burst_gets_429_with_retry_after(
        redis_url: str, server_log: pytest.LogCaptureFixture) -> None:
    async with live_server(redis_url, **{**NO_LIMITS, "create_burst": 3, "create_interval": 60.0}) as server:
        for _ in range(3):
            assert (await create(server))[0] == 201
        wait = await refused_unchanged(server, redis_url, 429, "create_rate_limited")
        assert 1 <= wait <= 60
        _, body, _ = await create(server)
        assert "the next in" in body["message"]
        assert len([k for k in redis_state(redis_url) if k.startswith(b"race:")]) == 3
        assert await metric(server, 'thieves_creations_refused_total{code="create_rate_limited"}') == 2
        # A client refused in a loop writes one line a minute, not one each (the first at once).
        refused = {id(r): r.getMessage() for r in server_log.records if "create_refused" in r.getMessage()}
        assert [line.split(" last_client=")[0] for line in refused.values()] == ["event=create_refused count=1"]


async def test_the_bucket_refills(redis_url: str) -> None:
    async with live_server(redis_url, **{**NO_LIMITS, "create_burst": 1, "create_interval": 0.2}) as server:
        assert (await create(server))[0] == 201
        assert (await create(server))[0] == 429

        async def created() -> bool:
            return (await create(server))[0] == 201

        await eventually(created, "the bucket to give a creation back", timeout=10)


async def test_websocket_create_beyond_the_burst_gets_a_typed_error(redis_url: str) -> None:
    async with live_server(redis_url, **{**NO_LIMITS, "create_burst": 2, "create_interval": 60.0}) as server:
        client = await Client.connect(server)
        for _ in range(2):
            await client.send(p.Create())
            await client.expect(p.Created)
        before = redis_state(redis_url)
        await client.send(p.Create())
        error = await client.error()
        assert (error.code, error.ref) == ("create_rate_limited", "create")
        assert "the next in" in error.message
        assert redis_state(redis_url) == before
        await client.send(p.Ping(nonce=7))  # refused, not cut off
        assert (await client.expect(p.Pong)).nonce == 7
        await client.close()
        assert await metric(server, 'thieves_creations_refused_total{code="create_rate_limited"}') == 1


async def test_two_server_processes_share_one_bucket(redis_url: str) -> None:
    limits = {**NO_LIMITS, "create_burst": 4, "create_interval": 60.0}
    async with live_server(redis_url, **limits) as a, live_server(redis_url, **limits) as b:
        for server in (a, b, a, b):
            assert (await create(server))[0] == 201
        for server in (a, b):
            assert (await create(server))[0] == 429


async def test_lobbies_per_address_are_capped_until_one_starts(redis_url: str) -> None:
    async with live_server(redis_url, **{**NO_LIMITS, "lobbies_per_address": 2}) as server:
        made = [(await create(server, seats=1))[1] for _ in range(2)]
        wait = await refused_unchanged(server, redis_url, 429, "too_many_lobbies")
        assert 3000 <= wait <= server.service.config.lobby_ttl  # at the latest when the oldest expires
        # X-Forwarded-For from a peer that is no trusted proxy changes nothing.
        assert (await create(server, forwarded="10.0.0.9"))[1]["code"] == "too_many_lobbies"
        await begin(server, made[0])
        assert (await create(server))[0] == 201  # a started race stops counting
        assert (await create(server))[1]["code"] == "too_many_lobbies"
        assert await metric(server, 'thieves_creations_refused_total{code="too_many_lobbies"}') == 3


async def test_a_trusted_proxy_forwards_the_client_address(redis_url: str) -> None:
    async with live_server(redis_url, **{**NO_LIMITS, "lobbies_per_address": 1},
                           trusted_proxies="127.0.0.0/8") as server:
        assert (await create(server, forwarded="10.0.0.1"))[0] == 201
        assert (await create(server, forwarded="10.0.0.1"))[1]["code"] == "too_many_lobbies"
        # The right-most hop is the proxy's word; what the client wrote to the left is not believed.
        assert (await create(server, forwarded="10.0.0.2, 10.0.0.1"))[1]["code"] == "too_many_lobbies"
        assert (await create(server, forwarded="10.0.0.1, 10.0.0.2"))[0] == 201
        assert (await create(server))[0] == 201  # no header: the proxy itself
        lobbies = redis.Redis.from_url(redis_url)
        try:
            assert lobbies.zcard(creator_keys("10.0.0.2")[1]) == 1
            assert lobbies.zcard(creator_keys("127.0.0.1")[1]) == 1
        finally:
            lobbies.close()


async def test_an_abandoned_lobby_stops_counting(redis_url: str) -> None:
    async with live_server(redis_url, **{**NO_LIMITS, "lobbies_per_address": 1, "lobbies_max": 5},
                           lobby_ttl=1) as server:
        created = (await create(server))[1]
        assert (await create(server))[1]["code"] == "too_many_lobbies"

        async def admitted() -> bool:
            return (await create(server))[0] == 201

        await eventually(admitted, "a creation once the first lobby is removed", timeout=15)
        client = redis.Redis.from_url(redis_url)
        try:  # the janitor removed the first lobby, and its entry in the open-lobby set with it
            await eventually(lambda: client.zscore(OPEN_LOBBIES, created["race"]["id"]) is None,
                             "the removed lobby to leave the open-lobby set", timeout=15)
        finally:
            client.close()


async def test_lobbies_in_total_are_capped(redis_url: str) -> None:
    async with live_server(redis_url, **{**NO_LIMITS, "lobbies_max": 3, "lobbies_per_address": 2},
                           trusted_proxies="127.0.0.1") as server:
        made = [(await create(server, forwarded=f"10.1.0.{i}", seats=1))[1] for i in range(3)]
        wait = await refused_unchanged(server, redis_url, 503, "lobbies_full", forwarded="10.1.0.9")
        assert wait >= 1
        # The address cap would admit 10.1.0.0 again; the total refuses first and takes nothing.
        await refused_unchanged(server, redis_url, 503, "lobbies_full", forwarded="10.1.0.0")
        await begin(server, made[1])
        assert (await create(server, forwarded="10.1.0.9"))[0] == 201
        assert (await create(server, forwarded="10.1.0.8"))[1]["code"] == "lobbies_full"
        assert await metric(server, 'thieves_creations_refused_total{code="lobbies_full"}') == 3


async def test_the_address_cap_refusing_gives_back_the_total_place(redis_url: str) -> None:
    async with live_server(redis_url, **{**NO_LIMITS, "lobbies_max": 10, "lobbies_per_address": 1}) as server:
        assert (await create(server))[0] == 201
        await refused_unchanged(server, redis_url, 429, "too_many_lobbies")
        client = redis.Redis.from_url(redis_url)
        try:
            assert client.zcard(OPEN_LOBBIES) == 1
        finally:
            client.close()


def _but_buckets(state: dict[bytes, Any]) -> dict[bytes, Any]:
    return {k: v for k, v in state.items() if not k.endswith(b":bucket")}


async def test_a_pool_race_refused_after_admission_gives_its_places_back_but_spends_its_token(
        redis_url: str) -> None:
    """pool_empty comes after admission: the lobby places are returned, the token is not (the attempt
    cost solver time; with refunds one address kept the solver busy for ever, issue 22)."""
    async with live_server(redis_url, create_burst=2, create_interval=60.0, lobbies_per_address=1,
                           lobbies_max=1, checked_wait=0.0) as server:
        for _ in range(2):
            before = _but_buckets(redis_state(redis_url))
            status, body, _ = await create(server, deal_source="pool")
            assert (status, body["code"]) == (503, "pool_empty")
            assert _but_buckets(redis_state(redis_url)) == before, "nothing but the spent token is written"
        status, body, headers = await create(server)
        assert (status, body["code"]) == (429, "create_rate_limited"), "two failed pool races spent the burst"
        assert 1 <= int(headers["Retry-After"]) <= 60


async def test_a_race_started_by_the_last_ready_stops_counting(redis_url: str) -> None:
    async with live_server(redis_url, **{**NO_LIMITS, "lobbies_max": 1}) as server:
        created = (await create(server, seats=1, start_mode="all-ready"))[1]
        assert (await create(server))[1]["code"] == "lobbies_full"
        ann = await Client.connect(server)
        await ann.hello(created["race"]["code"], "ann")
        await ann.send(p.Ready())
        await ann.expect(p.Countdown)
        assert (await create(server))[0] == 201
        await ann.close()


async def test_the_janitor_drops_open_lobby_entries_whose_race_left_the_lobby_unrecorded(redis_url: str) -> None:
    """A process killed between starting a race and recording it leaves a stale entry in the total's set:
    the janitor's repair drops it once it is older than the grace, so the total cap does not leak."""
    async with live_server(redis_url, **{**NO_LIMITS, "lobbies_max": 5}, checked_wait=0.0, lobby_ttl=2) as server:
        client = redis.Redis.from_url(redis_url)
        try:
            now = int(client.time()[0]) * 1000
            client.zadd(OPEN_LOBBIES, {"gone-race": now - 120_000})  # older than the grace (checked_wait + 60 s)
            await eventually(lambda: client.zscore(OPEN_LOBBIES, "gone-race") is None,
                             "the janitor to drop the stale entry")
        finally:
            client.close()
