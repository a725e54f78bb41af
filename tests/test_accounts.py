"""Accounts on a real server and Redis: registration, keys, joining as an account, rated races."""

from __future__ import annotations

from typing import Any

import pytest
from redis_util import Client, LiveServer, create_race, live_server, register, start_race

import redis.asyncio as aioredis
from shared import protocol as p


async def _dump(redis_url: str) -> dict[bytes, Any]:
    """Every key and its value (hash or string): a refused request must leave this as it was."""
    client = aioredis.from_url(redis_url)
    out: dict[bytes, Any] = {}
    try:
        for key in await client.keys("*"):
            kind = await client.type(key)
            out[key] = await (client.hgetall(key) if kind == b"hash" else client.get(key) if kind == b"string"
                              else client.zrange(key, 0, -1, withscores=True) if kind == b"zset" else client.type(key))
    finally:
        await client.aclose()
    return out


async def _refused_hello(server: LiveServer, race: str, **kw: Any) -> tuple[p.Error, int]:
    c = await Client.connect(server)
    await c.send(p.Hello(protocol=p.PROTOCOL_VERSION, race=race, **kw))
    err = await c.error()
    return err, await c.closed()


async def test_register_answers_a_key_once_and_keeps_only_its_hash(server: LiveServer, redis_url: str) -> None:
    status, body = await server.http("POST", "/players", {"name": "Bob_1"})
    assert status == 201 and body["name"] == "Bob_1"
    account, _, secret = body["key"].rpartition(".")
    assert account == "bob_1" and len(secret) >= 40
    stored = await _dump(redis_url)
    assert stored[b"account:{bob_1}"][b"name"] == b"Bob_1"
    assert not any(secret.encode() in repr(v).encode() for v in stored.values()), "the key is never stored"


@pytest.mark.parametrize("name", ["bob", "BOB", "Bob"])
async def test_a_name_taken_in_any_case_is_refused_and_nothing_changes(server: LiveServer, redis_url: str,
                                                                       name: str) -> None:
    await register(server, "Bob")
    before = await _dump(redis_url)
    status, body = await server.http("POST", "/players", {"name": name})
    assert (status, body["code"]) == (409, "account_name_taken") and name in body["message"]
    assert await _dump(redis_url) == before


@pytest.mark.parametrize("body,code", [
    ({"name": "a"}, "bad_name"), ({"name": "has space"}, "bad_name"), ({"name": "x" * 25}, "bad_name"),
    ({"name": "-dash"}, "bad_name"), ({"name": "ünï"}, "bad_name"), ({}, "bad_field"), ({"name": 5}, "bad_field"),
])
async def test_a_bad_name_is_a_typed_400_and_stores_nothing(server: LiveServer, redis_url: str, body: Any,
                                                            code: str) -> None:
    before = await _dump(redis_url)
    status, answer = await server.http("POST", "/players", body)
    assert (status, answer["code"]) == (400, code)
    assert await _dump(redis_url) == before


async def test_registration_is_rate_limited_per_address_and_a_taken_name_costs_no_token(redis_url: str) -> None:
    async with live_server(redis_url, register_burst=2, register_interval=60.0) as server:
        await register(server, "ann")
        status, _ = await server.http("POST", "/players", {"name": "ANN"})
        assert status == 409
        await register(server, "bob")  # the second of the burst: the taken name did not use one
        before = await _dump(redis_url)
        status, body = await server.http("POST", "/players", {"name": "cy"})
        assert (status, body["code"]) == (429, "register_rate_limited")
        assert 1 <= int(server.last_headers["retry-after"]) <= 60 and "the next in" in body["message"]
        assert await _dump(redis_url) == before


async def test_hello_with_a_key_joins_under_the_accounts_own_name(server: LiveServer) -> None:
    key = await register(server, "Ann")
    created = await create_race(server)
    c = await Client.connect(server)
    welcome = await c.hello(created.race.id, key=key)
    assert welcome.seat == 0 and [e.name for e in welcome.progress] == ["Ann"]
    d = await Client.connect(server)
    err, code = await _refused_hello(server, created.race.id, name="ann")
    assert err.code == "name_registered" and code == p.CloseCode.HELLO_REFUSED
    err, code = await _refused_hello(server, created.race.id, name="carl", key=key)
    assert err.code == "bad_field" and "Ann" in err.message
    await c.close()
    await d.close()


@pytest.mark.parametrize("forge", [
    lambda key: key[:-2] + ("AA" if not key.endswith("AA") else "BB"),  # the right name, a wrong secret
    lambda key: "nobody." + key.rpartition(".")[2],  # no such account
    lambda key: "no-dot-at-all",
])
async def test_a_forged_key_is_bad_key_and_closes_4000(server: LiveServer, forge: Any) -> None:
    key = await register(server, "ann")
    created = await create_race(server)
    err, code = await _refused_hello(server, created.race.id, key=forge(key))
    assert err.code == "bad_key" and code == p.CloseCode.HELLO_REFUSED


async def test_rotating_a_key_revokes_the_old_one_at_once(server: LiveServer, redis_url: str) -> None:
    old = await register(server, "ann")
    other = await register(server, "bob")
    status, body = await server.http("POST", "/players/ann/key", headers={"authorization": f"Bearer {old}"})
    assert status == 200 and body["name"] == "ann" and body["key"] != old
    new = body["key"]
    created = await create_race(server)
    err, _ = await _refused_hello(server, created.race.id, key=old)
    assert err.code == "bad_key"
    c = await Client.connect(server)
    assert (await c.hello(created.race.id, key=new)).seat == 0
    before = await _dump(redis_url)
    for headers, expect in [({"authorization": f"Bearer {old}"}, 401), ({}, 401),
                            ({"authorization": f"Bearer {other}"}, 401), ({"authorization": "Basic xyz"}, 401)]:
        status, body = await server.http("POST", "/players/ann/key", headers=headers)
        assert (status, body["code"]) == (expect, "bad_key"), headers
    status, body = await server.http("POST", "/players/nobody/key", headers={"authorization": f"Bearer {new}"})
    assert (status, body["code"]) == (404, "player_not_found")
    assert await _dump(redis_url) == before
    await c.close()


async def test_replacing_a_key_closes_the_live_connections_that_joined_with_it(server: LiveServer,
                                                                              redis_url: str) -> None:
    """A connection that joined with a key kept acting after the key was replaced (issue 22): it is now
    told bad_key and closed with 4008 (KEY_REPLACED), also when it is on another process than the one
    that replaced the key; other accounts' connections stay."""
    old, bob_key = await register(server, "ann"), await register(server, "bob")
    created = await create_race(server, seats=2)
    async with live_server(redis_url) as other:
        ann, bob = await Client.connect(other), await Client.connect(server)
        welcome = await ann.hello(created.race.id, key=old)
        seat = welcome.seat
        await bob.hello(created.race.id, key=bob_key)
        status, body = await server.http("POST", "/players/ann/key", headers={"authorization": f"Bearer {old}"})
        assert status == 200
        err = await ann.error()
        assert err.code == "bad_key" and "replaced" in err.message
        assert await ann.closed() == p.CloseCode.KEY_REPLACED
        await bob.send(p.Ready(ready=True))
        assert not isinstance(await bob.recv(), p.Error), "bob's connection is not affected"
        # Whoever held the old key holds the seat token it was given: alone, it no longer takes the seat.
        err, code = await _refused_hello(server, created.race.id, token=welcome.token)
        assert (err.code, code) == ("bad_token", p.CloseCode.BAD_TOKEN) and "replaced" in err.message
        again = await Client.connect(other)
        assert (await again.hello(created.race.id, key=body["key"], token=welcome.token)).seat == seat, \
            "the new key takes the seat back (with the old token, as a client resuming sends both)"
        for c in (bob, again):
            await c.close()


async def test_a_key_replaced_while_the_news_was_lost_is_found_at_the_next_heartbeat(redis_url: str) -> None:
    """Pub/sub is at most once: a process that missed the news (Redis away a moment) compares each
    connected account's key hash with Redis's at its heartbeat (every lease/3) and closes the stale."""
    async with live_server(redis_url, presence_lease=0.6) as server:
        key = await register(server, "ann")
        created = await create_race(server, seats=2)
        ann = await Client.connect(server)
        await ann.hello(created.race.id, key=key)
        client = aioredis.from_url(redis_url)
        try:
            await client.hset("account:{ann}", "key_hash", "0" * 64)  # replaced, and nobody told this process
        finally:
            await client.aclose()
        assert (await ann.error()).code == "bad_key"
        assert await ann.closed() == p.CloseCode.KEY_REPLACED


async def test_an_accounts_key_alone_takes_its_seat_back_while_the_race_runs(server: LiveServer) -> None:
    key = await register(server, "ann")
    created = await create_race(server, seats=2, deal_source="number", deal=7)
    ann, bob = await Client.connect(server), await Client.connect(server)
    first = await ann.hello(created.race.id, key=key)
    again = await Client.connect(server)
    assert (await again.hello(created.race.id, key=key)).seat == first.seat, "no second seat in the lobby"
    await again.close()
    await bob.hello(created.race.id, "bob")
    await start_race(server, created.creator_token, [ann, bob])
    assert isinstance(await ann.move("S"), p.Ack)
    await ann.close()
    back = await Client.connect(server)
    welcome = await back.hello(created.race.id, key=key)
    assert welcome.seat == first.seat and welcome.seq == 1 and welcome.view is not None
    back.seq = 1
    assert isinstance(await back.move("S"), p.Ack)
    status, body = await server.http("GET", f"/races/{created.race.id}")
    assert body["race"]["players"] == 2
    err, _ = await _refused_hello(server, created.race.id, key=await register(server, "late"))
    assert err.code == "race_closed", "a new account cannot join a running race"
    for c in (back, bob):
        await c.close()


async def test_a_token_of_another_accounts_seat_is_refused_with_a_key(server: LiveServer) -> None:
    ann_key, bob_key = await register(server, "ann"), await register(server, "bob")
    created = await create_race(server)
    ann = await Client.connect(server)
    token = (await ann.hello(created.race.id, key=ann_key)).token
    err, code = await _refused_hello(server, created.race.id, key=bob_key, token=token)
    assert err.code == "bad_key" and code == p.CloseCode.HELLO_REFUSED
    await ann.close()


async def test_a_rated_race_takes_accounts_only_and_two_to_start(server: LiveServer, redis_url: str) -> None:
    status, body = await server.http("POST", "/races", {"rated": True, "seats": 1})
    assert (status, body["code"]) == (400, "bad_field")
    created = await create_race(server, rated=True, seats=3)
    assert created.race.rated
    err, code = await _refused_hello(server, created.race.id, name="guest")
    assert err.code == "account_required" and code == p.CloseCode.HELLO_REFUSED
    ann = await Client.connect(server)
    await ann.hello(created.race.id, key=await register(server, "ann"))
    starter = await Client.connect(server)
    await starter.send(p.Start(creator_token=created.creator_token))
    assert (await starter.error()).code == "not_enough_players"
    bob = await Client.connect(server)
    await bob.hello(created.race.id, key=await register(server, "Bob"))
    await start_race(server, created.creator_token, [ann, bob])
    await ann.give_up()
    await bob.give_up()
    res = (await ann.expect(p.Finished)).results
    assert {s.name: s.account for s in res.standings} == {"ann": "ann", "Bob": "bob"}
    for c in (ann, bob, starter):
        await c.close()
