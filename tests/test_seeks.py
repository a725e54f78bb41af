"""Seeks on a real server and Redis: pools, waves, cancels, no-shows, bad input (docs/protocol.md "Seeks").

Seekers are light WebSocket clients (``seek`` frames); their races are joined with the token the
``matched`` frame carries, as ``thieves seek`` does.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import re
import urllib.request
from typing import Any, AsyncIterator

import msgspec
import pytest
import redis.asyncio as aioredis

from redis_util import DEADLINE, Client, LiveServer, eventually, live_server, register
from shared import protocol as p
from shared import seeks as rule
from server.race.clock import now_ms
from server.store.keys import SeekKeys

FAST = dict(seek_wave=0.1, seek_join=2.0, seek_deals="random")
"""Short waves and join window: a test never waits long for a pairing or a no-show."""


async def seek(server: LiveServer, **fields: Any) -> tuple[Client, p.Seeking]:
    client = await Client.connect(server)
    await client.send(p.Seek(**fields))
    return client, await client.expect(p.Seeking)


async def matched(client: Client, timeout: float = DEADLINE) -> p.Matched:
    """The client's ``matched``, skipping ``seeking`` updates (which come every second: the deadline is
    over the whole wait)."""
    async def wait() -> p.Matched:
        while True:
            msg = await client.recv(timeout)
            if isinstance(msg, p.Matched):
                return msg
            assert isinstance(msg, p.Seeking), msg
    return await asyncio.wait_for(wait(), timeout)


async def seek_closed(client: Client) -> int:
    """The close code of a seek connection the server ends (its ``seeking`` frames keep coming until
    then, so :meth:`Client.closed`'s quiet-time wait alone would never end if the server did not). After
    ``matched`` nothing comes until the close, which waits for the race's start and the next wave: the
    quiet time allowed is the whole deadline (5 s failed the hundred seekers on a loaded machine)."""
    return await asyncio.wait_for(client.closed(DEADLINE), DEADLINE)


async def join(server: LiveServer, m: p.Matched) -> Client:
    """Join the race a seek was given, as the client does: hello with the token, then ready."""
    player = await Client.connect(server)
    welcome = await player.hello(m.race, token=m.token)
    assert welcome.seat == m.seat
    await player.send(p.Ready())
    return player


@pytest.fixture
async def fast(redis_url: str) -> AsyncIterator[LiveServer]:
    async with live_server(redis_url, **FAST) as live:
        yield live


async def test_two_seekers_are_given_one_race_and_it_starts_when_both_join(fast: LiveServer) -> None:
    ann, first = await seek(fast, name="ann", time_limit=60)
    assert first.pool == "forty-thieves/2/60/casual" and first.waiting == 1 and first.rating == 1000
    assert first.gap == rule.GAP_BASE
    bob, _ = await seek(fast, name="bob", time_limit=60)
    ma, mb = await matched(ann), await matched(bob)
    assert ma.race == mb.race and {ma.seat, mb.seat} == {0, 1} and sorted(ma.names) == ["ann", "bob"]
    a, b = await join(fast, ma), await join(fast, mb)
    countdown = await a.expect(p.Countdown)
    assert countdown.view is not None
    await b.expect(p.Countdown)
    # Once the race started the seek is over: its connection is closed, and the players may seek again.
    assert await seek_closed(ann) == 1000
    assert await seek_closed(bob) == 1000
    again, seeking = await seek(fast, name="ann", time_limit=60)
    assert seeking.waiting == 1
    await again.close()


# ------------------------------------------------------------------ bad input
async def seek_keys(server: LiveServer) -> dict[str, Any]:
    """Every seek key in Redis with its contents: what a refused seek must leave as it was (but the
    waves' own bookkeeping, a pool's last wave number and pairing lease, which every wave rewrites)."""
    r = server.service.redis
    out: dict[str, Any] = {}
    for pattern in ("seek:*", "seeker:*", "seeks:*"):
        async for key in r.scan_iter(match=pattern):
            if key.endswith((b":wave", b":pairing")):
                continue
            kind = (await r.type(key)).decode()
            out[key.decode()] = (await r.hgetall(key) if kind == "hash" else await r.zrange(key, 0, -1)
                                 if kind == "zset" else await r.smembers(key) if kind == "set" else await r.get(key))
    return out


@pytest.mark.parametrize("fields, code, words", [
    (dict(name="ann", variant="ninety-thieves"), "bad_variant", "ninety-thieves"),
    (dict(name="ann", seats=1), "seek_out_of_range", "2 to 8 players, not 1"),
    (dict(name="ann", seats=9), "seek_out_of_range", "not 9"),
    (dict(name="ann", time_limit=10), "seek_out_of_range", "30 to 3600 seconds, not 10"),
    (dict(name="ann", time_limit=5000), "seek_out_of_range", "not 5000"),
    (dict(name="ann", rated=True), "account_required", "rated race is for accounts only"),
    (dict(), "bad_field", "needs a name"),
    (dict(key="nobody.secret"), "bad_key", ""),
])
async def test_a_bad_seek_is_a_typed_error_and_stores_nothing(fast: LiveServer, fields: dict[str, Any], code: str,
                                                              words: str) -> None:
    waiting, _ = await seek(fast, name="zed")
    before = await seek_keys(fast)
    client = await Client.connect(fast)
    await client.send(p.Seek(**fields))
    error = await client.error()
    assert (error.code, error.ref) == (code, "seek")
    assert words in error.message
    assert await seek_keys(fast) == before
    await client.close()
    await waiting.close()


async def test_a_second_seek_by_the_same_player_is_refused(fast: LiveServer) -> None:
    key = await register(fast, "Ann")
    first, _ = await seek(fast, key=key, time_limit=60)
    before = await seek_keys(fast)
    again = await Client.connect(fast)
    await again.send(p.Seek(key=key, time_limit=120))  # another pool, another connection: still one player
    error = await again.error()
    assert error.code == "already_seeking" and "Ann already waits for a race" in error.message
    await first.send(p.Seek(key=key, time_limit=60))  # the same connection
    assert (await first.error()).code == "already_seeking"
    await first.send(p.Hello(protocol=1, race="ABCDEF", name="x"))  # a seek connection joins no race
    assert (await first.error()).code == "already_seeking"
    await again.send(p.Seek(name="ANN", time_limit=60))  # an account's name, without its key
    assert (await again.error()).code == "name_registered"
    assert await seek_keys(fast) == before
    # Cancelled, the player may seek again.
    await first.send(p.SeekCancel())
    assert (await first.expect(p.SeekCancelled)).cancelled
    await first.send(p.SeekCancel())
    assert (await first.error()).code == "not_seeking"
    await again.send(p.Seek(key=key, time_limit=120))
    assert (await again.expect(p.Seeking)).pool == "forty-thieves/2/120/casual"
    await first.close()
    await again.close()


async def test_a_seek_with_one_accounts_key_and_another_name_is_refused_as_hello_is(fast: LiveServer) -> None:
    key = await register(fast, "Ann")
    before = await seek_keys(fast)
    client = await Client.connect(fast)
    await client.send(p.Seek(key=key, name="bob"))
    error = await client.error()
    assert (error.code, error.ref) == ("bad_field", "seek")
    assert "this key is 'Ann''s; leave out the name or give that one" in error.message
    assert await seek_keys(fast) == before
    await client.send(p.Seek(key=key, name="ANN"))  # the key's own name, in any case, is no mistake
    assert (await client.expect(p.Seeking)).pool == "forty-thieves/2/300/casual"
    await client.close()


async def test_a_race_from_seeks_reports_a_secret_random_deal_and_never_shows_its_number(fast: LiveServer) -> None:
    ann, _ = await seek(fast, name="ann", time_limit=60)
    bob, _ = await seek(fast, name="bob", time_limit=60)
    ma, mb = await matched(ann), await matched(bob)
    a, b = await join(fast, ma), await join(fast, mb)
    await a.expect(p.Countdown)
    meta = await fast.service.store.meta(ma.race)
    assert meta is not None and meta.deal_source == "random" and meta.status == "started"
    status, body = await fast.http("GET", f"/races/{ma.race}")
    assert status == 200 and body["race"]["deal_source"] == "random"
    assert str(meta.deal) not in str(body) and meta.salt not in str(body)
    spectator = await Client.connect(fast)
    welcome = await spectator.hello(ma.race, role="spectator")
    assert welcome.race.deal_source == "random"
    assert str(meta.deal) not in str(welcome)
    for c in (ann, bob, a, b, spectator):
        await c.close()


async def test_server_made_races_report_where_their_secret_deal_came_from(fast: LiveServer) -> None:
    """The one path challenges, rematches, daily plays, event heats and seeks make their races by."""
    from server.deals.checked import CheckedDeal

    svc = fast.service
    drawn = await svc.create_for(["ann", "bob"], CheckedDeal("forty-thieves", 123_456_789, ()), 60, "all-ready", "")
    chosen = await svc.create_for(["ann", "bob"], CheckedDeal("forty-thieves", 7, (), chosen=True), 60,
                                  "all-ready", "")
    assert (drawn.deal_source, drawn.deal, drawn.checked) == ("random", 123_456_789, False)
    assert (chosen.deal_source, chosen.deal) == ("number", 7)
    status, body = await fast.http("GET", f"/races/{drawn.id}")
    assert status == 200 and body["race"]["deal_source"] == "random" and "123456789" not in str(body)


# ------------------------------------------------------------------ key replacement
async def replace_key(server: LiveServer, old: str) -> str:
    """``POST /players/{name}/key`` with the current key: the new one (the old one stops working)."""
    status, body = await server.http("POST", f"/players/{old.split('.')[0]}/key",
                                     headers={"authorization": f"Bearer {old}"})
    assert status == 200, body
    return str(body["key"])


async def next_error(client: Client) -> p.Error:
    """The connection's next ``error``, past the ``seeking`` updates."""
    async def wait() -> p.Error:
        while not isinstance(msg := await client.recv(DEADLINE), p.Error):
            assert isinstance(msg, p.Seeking), msg
        return msg
    return await asyncio.wait_for(wait(), DEADLINE)


async def waiting_names(server: LiveServer, pool: str) -> list[str]:
    return sorted(e.name for e in await server.seeks.store.waiting(pool))


async def test_a_key_replacement_ends_the_seek_made_with_the_old_key(fast: LiveServer) -> None:
    old = await register(fast, "Ann")
    ann, _ = await seek(fast, key=old, time_limit=60)
    new = await replace_key(fast, old)
    error = await next_error(ann)
    assert error.code == "bad_key" and "replaced" in error.message
    assert await seek_closed(ann) == p.CloseCode.KEY_REPLACED
    pool = "forty-thieves/2/60/casual"
    async def empty() -> bool:
        return await waiting_names(fast, pool) == []
    await eventually(empty, "the old key's seek to leave its pool")
    # Nobody is paired with it; the account seeks again with its new key (its one-seek lock is free).
    bob, _ = await seek(fast, name="bob", time_limit=60)
    again, _ = await seek(fast, key=new, time_limit=60)
    mb, ma = await matched(bob), await matched(again)
    assert ma.race == mb.race and sorted(ma.names) == ["Ann", "bob"]
    for c in (bob, again):
        await c.close()


async def test_a_wave_pairs_no_seek_whose_key_was_replaced_unheard(fast: LiveServer) -> None:
    """The news of a replaced key reaches the seek's process over pub/sub (at most once) or at its next
    heartbeat (seconds later); a wave in between must not form a race from the old key's seek, or its
    token would seat whoever held that key as the account."""
    old = await register(fast, "Ann")
    ann, _ = await seek(fast, key=old, time_limit=60)
    # What rotate.lua writes, without the news (a process that missed it).
    await fast.service.redis.hset("account:{ann}", mapping={"key_hash": "0" * 64, "key_since": now_ms()})
    bob, _ = await seek(fast, name="bob", time_limit=60)
    pool = "forty-thieves/2/60/casual"

    async def only_bob() -> bool:
        return await waiting_names(fast, pool) == ["bob"]
    await eventually(only_bob, "the wave to drop the old key's seek and keep bob waiting")
    assert await fast.seeks.store.formed(pool) == []
    for c in (ann, bob):
        await c.close()


# ------------------------------------------------------------------ creation limits
async def creation_counts(server: LiveServer) -> dict[str, Any]:
    """The creation limits' keys (the address's bucket and lobbies, every lobby): what a refused seek
    must leave as it was."""
    r = server.service.redis
    out: dict[str, Any] = {}
    for pattern in ("creator:*", "lobbies:*"):
        async for key in r.scan_iter(match=pattern):
            kind = (await r.type(key)).decode()
            out[key.decode()] = await r.hgetall(key) if kind == "hash" else await r.zrange(key, 0, -1)
    return out


async def refused_seek(server: LiveServer, **fields: Any) -> p.Error:
    """A seek the limits refuse: its typed error, and nothing written (the waves' own counters aside)."""
    async def state() -> tuple[dict[str, Any], dict[str, Any]]:
        return await creation_counts(server), await seek_keys(server)
    before = await state()
    client = await Client.connect(server)
    await client.send(p.Seek(**fields))
    error = await client.error()
    assert error.ref == "seek" and not error.message.startswith("seek") and "nothing was stored" in error.message
    assert await state() == before
    await client.close()
    return error


async def test_a_seek_spends_its_addresss_creation_token_as_creating_a_race_does(redis_url: str) -> None:
    async with live_server(redis_url, create_burst=2, create_interval=600.0, **FAST) as server:
        status, _ = await server.http("POST", "/races", {})
        assert status == 201
        ann, _ = await seek(server, name="ann", time_limit=60)  # the address's second creation
        error = await refused_seek(server, name="bob", time_limit=60)
        assert error.code == "create_rate_limited" and "races (or daily plays, or seeks)" in error.message
        status, body = await server.http("POST", "/races", {})  # and the seek spent the race's token
        assert (status, body["code"]) == (429, "create_rate_limited")
        await ann.close()


async def test_a_seek_holds_a_lobby_place_of_its_address_until_its_race_starts(redis_url: str) -> None:
    async with live_server(redis_url, create_burst=0, lobbies_per_address=2, **dict(FAST, seek_join=30.0)) as server:
        ann, _ = await seek(server, name="ann", time_limit=60)
        bob, _ = await seek(server, name="bob", time_limit=60)
        ma, mb = await matched(ann), await matched(bob)
        error = await refused_seek(server, name="cy", time_limit=90)
        assert error.code == "too_many_lobbies" and "a seek counts as one until its race starts" in error.message
        status, body = await server.http("POST", "/races", {})  # a race, too, finds the places taken
        assert (status, body["code"]) == (429, "too_many_lobbies")
        a, b = await join(server, ma), await join(server, mb)
        await a.expect(p.Countdown)
        cy = await Client.connect(server)

        async def admitted() -> bool:
            await cy.send(p.Seek(name="cy", time_limit=90))
            return isinstance(await cy.recv(), p.Seeking)
        await eventually(admitted, "the started race's places to come back")
        for c in (ann, bob, a, b, cy):
            await c.close()


async def test_a_cancelled_seek_gives_its_lobby_place_back(redis_url: str) -> None:
    async with live_server(redis_url, create_burst=0, lobbies_per_address=1, **FAST) as server:
        ann, _ = await seek(server, name="ann", time_limit=60)
        assert (await refused_seek(server, name="bob", time_limit=90)).code == "too_many_lobbies"
        await ann.send(p.SeekCancel())
        assert (await ann.expect(p.SeekCancelled)).cancelled
        bob, _ = await seek(server, name="bob", time_limit=90)
        await ann.close()
        await bob.close()


async def test_the_janitor_keeps_a_waiting_seeks_place_in_the_total_until_the_lobby_ttl(redis_url: str) -> None:
    from server.store import OPEN_LOBBIES

    async with live_server(redis_url, **FAST) as server:
        ann, seeking = await seek(server, name="ann", time_limit=60)
        creations, place = server.service.creations, f"seek.{seeking.seek}"
        # Past the grace a race id without its race is dropped; a seek's place is no race and stays.
        assert await creations.repair([], now_ms() + creations.settings.grace_ms + 1000) == 0
        assert await server.service.redis.zscore(OPEN_LOBBIES, place) is not None
        assert await creations.repair([], now_ms() + creations.settings.ttl_ms + 1000) == 1
        await ann.close()


async def test_a_lock_a_dead_process_left_gives_its_seeks_places_back_when_taken_back(redis_url: str) -> None:
    """A process killed between a seek's end and its release leaves the player's lock and the seek's
    places among its address's (its pool, a lobby place). The player's next ``seek`` takes the lock back
    (once older than a seek takes to enter its pool) and gives those places back with it: they do not
    count against the address until they expire."""
    from server.matchmaking.seeks import ALIVE_MS
    from server.store import OPEN_LOBBIES
    from server.store.keys import seek_places_key, seeker_key
    from server.store.limits import seek_place
    from server.store.seeks import LOCK_MS
    from shared.names import name_key

    async with live_server(redis_url, lobbies_per_address=1, seek_pools_per_address=1, **FAST) as server:
        store, dead, pool, client = server.seeks.store, "0123456789abcdef", "forty-thieves/2/90/casual", \
            "127.0.0.1"
        who = f"n:{name_key('ann')}"
        assert await store.lock(who, pool, dead, client)
        assert await store.enter(client, dead, pool, 1) == []
        await server.service.admit_creation(client, seek_place(dead))
        await server.service.redis.pexpire(seeker_key(who), LOCK_MS - ALIVE_MS - 1000)
        ann, seeking = await seek(server, name="ann", time_limit=60)  # another pool: the cap would refuse it
        assert seeking.seek != dead and seeking.waiting == 1
        assert await server.service.redis.hkeys(seek_places_key(client)) == [seeking.seek.encode()]
        assert await server.service.redis.zscore(OPEN_LOBBIES, seek_place(dead)) is None
        await ann.close()


# ------------------------------------------------------------------ a seek nobody pairs
async def test_a_seek_expires_after_its_time_and_its_seeker_is_told(redis_url: str) -> None:
    async with live_server(redis_url, seek_expire=1.0, **FAST) as server:
        ann, seeking = await seek(server, name="ann", time_limit=60)
        error = await next_error(ann)
        assert (error.code, error.ref) == ("seek_expired", "seek")
        assert "nobody was paired with you in 1 s, the longest a seek waits: seek again" in error.message
        assert await seek_closed(ann) == 1000
        assert await waiting_names(server, "forty-thieves/2/60/casual") == []
        assert list(await creation_counts(server)) == ["creator:{127.0.0.1}:bucket"]  # its places given back
        assert metric(await metrics_text(server), "expired") == 1
        again, _ = await seek(server, name="ann", time_limit=60)  # the player may seek again
        await again.close()


async def test_one_address_waits_in_at_most_its_cap_of_pools(redis_url: str) -> None:
    async with live_server(redis_url, seek_pools_per_address=2, **FAST) as server:
        ann, _ = await seek(server, name="ann", time_limit=60)
        bob, _ = await seek(server, name="bob", seats=3, time_limit=60)
        error = await refused_seek(server, name="cy", time_limit=90)
        assert error.code == "too_many_seek_pools"
        assert ("this address's seeks wait in 2 pools (forty-thieves/2/60/casual, forty-thieves/3/60/casual), the "
                "most one address may") in error.message
        cy, _ = await seek(server, name="cy", seats=3, time_limit=60)  # a pool it waits in already
        await ann.send(p.SeekCancel())
        assert (await ann.expect(p.SeekCancelled)).cancelled
        dee, _ = await seek(server, name="dee", time_limit=90)  # a pool left: another may be taken
        for c in (ann, bob, cy, dee):
            await c.close()


async def test_a_wave_drops_a_lone_seek_nobody_vouches_for(fast: LiveServer) -> None:
    """A pool too empty to form a race is skipped cheaply, but not its dead seeks (a process died)."""
    from server.store.records import SeekEntry

    pool = "forty-thieves/2/60/casual"
    entry = SeekEntry(id="0123456789abcdef", who="n:ghost", name="ghost", rating=1000, since=now_ms())
    await fast.seeks.store.add(pool, entry, now_ms() - 1)

    async def gone() -> bool:
        return await waiting_names(fast, pool) == []
    await eventually(gone, "the wave to drop the seek nobody vouches for")
    assert metric(await metrics_text(fast), "dropped") == 1


# ------------------------------------------------------------------ no-shows
async def metrics_text(server: LiveServer) -> str:
    def call() -> str:
        with urllib.request.urlopen(server.url + "/metrics", timeout=5) as resp:
            return resp.read().decode()
    return await asyncio.to_thread(call)


def metric(text: str, what: str) -> int:
    found = re.search(rf'^thieves_seeks_total\{{what="{what}"\}} (\d+)$', text, re.M)
    return int(found.group(1)) if found else 0


async def test_a_no_show_is_dropped_and_counted_and_the_other_waits_again(fast: LiveServer) -> None:
    ann, _ = await seek(fast, name="ann", time_limit=60)
    bob, _ = await seek(fast, name="bob", time_limit=60)
    ma, _ = await matched(ann), await matched(bob)
    came = await join(fast, ma)  # bob never joins
    # At the join deadline the race goes, bob's seek is over (its connection closed), ann waits again.
    async def requeued() -> p.Seeking:
        while not isinstance(msg := await ann.recv(), p.Seeking) or not msg.requeued:
            pass
        return msg
    msg = await asyncio.wait_for(requeued(), DEADLINE)
    assert isinstance(msg, p.Seeking) and msg.waited_ms >= 2000  # her waiting time is kept
    assert await seek_closed(bob) == 1000
    assert (await fast.http("GET", f"/races/{ma.race}"))[0] == 404
    await came.close()
    text = await metrics_text(fast)
    assert metric(text, "no_show") == 1 and metric(text, "requeued") == 1
    from shared.names import name_key
    assert await fast.seeks.store.shy(f"n:{name_key('bob')}") == 1
    # Bob seeks again: he waits among the shy; carl (not shy) is paired with ann, never with bob.
    bob2, _ = await seek(fast, name="bob", time_limit=60)
    carl, _ = await seek(fast, name="carl", time_limit=60)
    mc = await matched(carl)
    assert sorted(mc.names) == ["ann", "carl"]
    entries = await fast.seeks.store.waiting("forty-thieves/2/60/casual")
    assert [(e.name, e.shy) for e in entries] == [("bob", True)]
    for c in (ann, bob2, carl):
        await c.close()


# ------------------------------------------------------------------ cancels
async def test_a_cancel_racing_a_pairing_never_leaves_the_player_in_a_race(fast: LiveServer) -> None:
    """Pairs of seekers, one of each cancelling at a random moment around the waves: a cancel that
    succeeded means no race anywhere names the player; one that lost was preceded by its matched. Half
    cancel at once, before their partner seeks, so that some cancels win even on a loaded machine (with
    every cancel up to 0.3 s after both seeks, all twelve once lost to the 0.1 s waves)."""
    rng = random.Random(24)

    async def one(i: int) -> tuple[str, bool, list[p.Matched]]:
        a, _ = await seek(fast, name=f"a{i}", time_limit=60)
        if i % 2:
            await a.send(p.SeekCancel())
            b, _ = await seek(fast, name=f"b{i}", time_limit=60)
        else:
            b, _ = await seek(fast, name=f"b{i}", time_limit=60)
            await asyncio.sleep(rng.uniform(0, 0.3))
            await a.send(p.SeekCancel())
        got: list[p.Matched] = []

        async def answer() -> p.SeekCancelled:
            while True:
                msg = await a.recv(20)
                if isinstance(msg, p.Matched):
                    got.append(msg)
                elif isinstance(msg, p.SeekCancelled):
                    return msg
        msg = await asyncio.wait_for(answer(), DEADLINE)
        await a.close()
        await b.close()
        return f"a{i}", msg.cancelled, got

    outcomes = await asyncio.gather(*(one(i) for i in range(12)))
    formed: list[list[str]] = []
    for m in await fast.seeks.store.formed("forty-thieves/2/60/casual"):
        formed.append([e.name for e in m[0].members])
    for name, cancelled, got in outcomes:
        if cancelled:
            assert got == [] and not any(name in members for members in formed)
        else:
            assert len(got) == 1 and name in got[0].names
    assert any(c for _, c, _ in outcomes)


# ------------------------------------------------------------ many, two processes
async def set_rating(redis: Any, account: str, variant: str, rating: int) -> None:
    """Give an account the shown rating ``rating`` (sigma 2: mu from 1000 + 40 (mu - 3 sigma)), as a
    rated race would have left it."""
    sigma = 2.0
    mu = (rating - 1000) / 40 + 3 * sigma
    await redis.hset(f"account:{{{account}}}", mapping={f"v:{variant}:mu": repr(mu), f"v:{variant}:sigma": repr(sigma),
                                                       f"v:{variant}:rated": 5})


async def test_a_hundred_seekers_over_two_processes_are_each_placed_once_within_the_bound(redis_url: str) -> None:
    rng = random.Random(100)
    # Every seeker comes from this one loopback address with two connections (its seek and its seat), so
    # the per-address cap (64 by default) is lifted here, as the benches do: it is not what this tests.
    # Nor is a no-show: a join window of 30 s (FAST's 2 s) keeps a seeker slowed by a loaded machine from
    # being dropped as one (a full run with a busy core saw a seeker never matched after such a drop).
    crowd = dict(FAST, connections_per_address=0, seek_join=30.0)
    async with live_server(redis_url, register_burst=0, **crowd) as one, live_server(redis_url, **crowd) as two:
        names = [f"p{i:03d}" for i in range(100)]
        keys = await asyncio.gather(*(register(one, n) for n in names))
        # Every pair within GAP_MAX of each other: players further apart are never grouped (the rule), so
        # ratings over a wider span (700..1900 once) can leave the last two waiting for ever, as a full
        # run with a busy core saw when the waves paired the middle first and two extremes were left.
        low = 800
        ratings = {n.casefold(): rng.randint(low, low + rule.GAP_MAX) for n in names}
        for n in names:
            await set_rating(one.service.redis, n.casefold(), "forty-thieves", ratings[n.casefold()])

        async def seeker(i: int) -> p.Matched:
            await asyncio.sleep(rng.uniform(0, 2.0))  # arrivals spread over two seconds
            server = (one, two)[i % 2]
            client, seeking = await seek(server, key=keys[i], time_limit=60)
            assert seeking.rating == ratings[names[i]]
            m = await matched(client, timeout=60)
            player = await join((one, two)[rng.randrange(2)], m)  # joined through either process
            await player.expect(p.Countdown)
            await seek_closed(client)
            await player.close()
            return m

        got = await asyncio.gather(*(seeker(i) for i in range(100)))
        races: dict[str, list[p.Matched]] = {}
        for m in got:
            races.setdefault(m.race, []).append(m)
        assert sorted(n for m in got for n in [m.names[m.seat]]) == [n for n in names]  # each placed once
        assert all(len(ms) == 2 for ms in races.values()) and len(races) == 50
        for ms in races.values():
            shown = [ratings[n.casefold()] for n in ms[0].names]
            assert ms[0].ratings == shown
            longest = max(m.waited_ms for m in ms)
            # The documented bound, checked on the ratings given: the spread within the allowed gap of
            # the group's longest waiter at the wave that formed it.
            assert max(shown) - min(shown) <= ms[0].gap == rule.allowed_gap(longest)
        formed = [metric(await metrics_text(s), "races") for s in (one, two)]
        assert sum(formed) == 50


async def test_the_pools_are_shown_on_get_seeks_the_front_page_and_metrics(fast: LiveServer) -> None:
    ann, _ = await seek(fast, name="ann", seats=3, time_limit=90)
    status, body = await fast.http("GET", "/seeks")
    assert status == 200
    assert body["pools"] == [{"pool": "forty-thieves/3/90/casual", "variant": "forty-thieves", "seats": 3,
                              "time_limit": 90, "rated": False, "waiting": 1}]

    def page() -> str:
        req = urllib.request.Request(fast.url + "/", headers={"accept": "text/html"})
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.read().decode()
    html = await asyncio.to_thread(page)
    assert 'data-pool="forty-thieves/3/90/casual"' in html and "<td>1:30</td>" in html and "<td>1</td>" in html
    assert 'thieves_seeks_waiting{pool="forty-thieves/3/90/casual"} 1' in await metrics_text(fast)
    await ann.send(p.SeekCancel())
    assert (await ann.expect(p.SeekCancelled)).cancelled
    # The next wave takes the idle pool off the list.
    async def gone() -> bool:
        return (await fast.http("GET", "/seeks"))[1]["pools"] == []
    await eventually(gone, "the idle pool to leave the list")
    assert "Nobody is looking for a race right now" in await asyncio.to_thread(page)
    assert metric(await metrics_text(fast), "cancelled") == 1
    await ann.close()


async def test_races_from_seeks_take_a_checked_deal_when_one_is_ready_else_a_random_one(redis_url: str) -> None:
    from redis_util import seed_checked

    async with live_server(redis_url, seek_wave=0.1, seek_join=5.0) as live:  # --seek-deals pool (the default)
        await seed_checked(live, count=1, variants=("forty-thieves",))
        checked = []
        for pair in (("ann", "bob"), ("cy", "dee")):  # one deal in the pool: the first race takes it
            a, _ = await seek(live, name=pair[0], time_limit=60)
            b, _ = await seek(live, name=pair[1], time_limit=60)
            m = await matched(a)
            await matched(b)
            player = await Client.connect(live)
            checked.append((await player.hello(m.race, token=m.token)).race.checked)
            for c in (a, b, player):
                await c.close()
        assert checked == [True, False]


def test_seek_deals_is_pool_or_random() -> None:
    from server.config import parse_args

    assert parse_args(["--seek-deals", "random"], environ={}).seek_deals == "random"
    with pytest.raises(ValueError, match="--seek-deals is pool or random, not 'solver'"):
        parse_args(["--seek-deals", "solver"], environ={})
