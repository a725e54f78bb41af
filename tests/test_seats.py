"""Lobby seats that can be given back: ``leave``, the presence lease, and tokens of a seat that changed hands."""

from __future__ import annotations

from typing import Any

import pytest
from redis_util import Client, LiveServer, create_race, eventually, live_server, read_until_version, start_race

from server.race.clock import now_ms
from server.store import StoreError
from server.store.keys import Keys
from shared import protocol as p


async def _players(server: LiveServer, race: str) -> int:
    status, body = await server.http("GET", f"/races/{race}")
    assert status == 200
    return int(body["race"]["players"])


async def _table_until(c: Client, seats: set[int], what: str) -> None:
    """Read ``c``'s frames until its progress table holds exactly ``seats`` (fails after the deadline)."""
    async def check() -> bool:
        if set(c.table.lines) != seats:
            try:
                await c.recv(timeout=0.2)
            except TimeoutError:
                pass
        return set(c.table.lines) == seats

    await eventually(check, what)


async def _leave(c: Client) -> p.Left:
    await c.send(p.Leave())
    left = await c.expect(p.Left)
    assert await c.closed() == p.CloseCode.NORMAL
    return left


async def test_leaving_the_lobby_frees_the_seat_name_and_token(server: LiveServer) -> None:
    created = await create_race(server, seats=2)
    ann, bob = await Client.connect(server), await Client.connect(server)
    await ann.hello(created.race.id, "ann")
    old = await bob.hello(created.race.id, "bob")
    await read_until_version(ann, old.version)
    left = await _leave(bob)
    await read_until_version(ann, left.version)
    await _table_until(ann, {0}, "ann's table without bob's line (a full frame)")
    assert await _players(server, created.race.id) == 1
    # The old token no longer holds the seat...
    stale = await Client.connect(server)
    await stale.send(p.Hello(protocol=p.PROTOCOL_VERSION, race=created.race.id, token=old.token))
    err = await stale.error()
    assert err.code == "bad_token" and "given back" in err.message
    assert await stale.closed() == p.CloseCode.BAD_TOKEN
    # ...the name is free, and the next player takes the seat with a token of its own.
    carl = await Client.connect(server)
    again = await carl.hello(created.race.id, "bob")
    assert again.seat == old.seat and again.token != old.token
    stale = await Client.connect(server)
    await stale.send(p.Hello(protocol=p.PROTOCOL_VERSION, race=created.race.id, token=old.token))
    assert (await stale.error()).code == "bad_token", "the old token does not take the new player's seat"
    back = await Client.connect(server)
    assert (await back.hello(created.race.id, token=again.token)).seat == old.seat
    for c in (ann, carl, back):
        await c.close()


async def test_the_creator_can_fill_a_freed_seat_and_start(server: LiveServer) -> None:
    created = await create_race(server, seats=2, deal_source="number", deal=7)
    ann, bob, carl = await Client.connect(server), await Client.connect(server), await Client.connect(server)
    await ann.hello(created.race.id, "ann")
    await bob.hello(created.race.id, "bob")
    await carl.send(p.Hello(protocol=p.PROTOCOL_VERSION, race=created.race.id, name="carl"))
    assert (await carl.error()).code == "race_full"
    await _leave(bob)
    carl = await Client.connect(server)
    assert (await carl.hello(created.race.id, "carl")).seat == 1
    await start_race(server, created.creator_token, [ann, carl])
    await ann.give_up()
    await carl.give_up()
    res = (await ann.expect(p.Finished)).results
    assert sorted(s.name for s in res.standings) == ["ann", "carl"]
    assert sorted(r.name for r in res.records) == ["ann", "carl"]
    for c in (ann, carl):
        await c.close()


async def test_a_seat_left_empty_counts_as_done_and_is_nobodys_in_the_results(server: LiveServer) -> None:
    created = await create_race(server, seats=3)
    ann, bob, cy = await Client.connect(server), await Client.connect(server), await Client.connect(server)
    for c, name in ((ann, "ann"), (bob, "bob"), (cy, "cy")):
        await c.hello(created.race.id, name)
    await _leave(bob)
    await start_race(server, created.creator_token, [ann, cy])
    await ann.give_up()
    await cy.give_up()  # the last racer: the race ends though seat 1 never played
    res = (await ann.expect(p.Finished)).results
    assert sorted(s.seat for s in res.standings) == [0, 2]
    for c in (ann, cy):
        await c.close()


async def test_leave_after_the_start_is_refused_and_the_seat_stays(server: LiveServer) -> None:
    created = await create_race(server, seats=1)
    ann, watcher = await Client.connect(server), await Client.connect(server)
    await ann.hello(created.race.id, "ann")
    await watcher.hello(created.race.id, role="spectator")
    await watcher.send(p.Leave())
    assert (await watcher.error()).code == "forbidden"
    await start_race(server, created.creator_token, [ann])
    before = await server.service.store.snapshot(created.race.id)
    await ann.send(p.Leave())
    err = await ann.error()
    assert err.code == "race_closed" and "gives up instead of leaving" in err.message
    assert await server.service.store.snapshot(created.race.id) == before
    assert isinstance(await ann.move("S"), p.Ack)
    for c in (ann, watcher):
        await c.close()


async def test_every_connection_of_a_seat_that_left_is_told_and_closed(server: LiveServer) -> None:
    created = await create_race(server, seats=2)
    ann = await Client.connect(server)
    token = (await ann.hello(created.race.id, "ann")).token
    twin = await Client.connect(server)
    await twin.hello(created.race.id, token=token)
    await _leave(ann)
    await twin.expect(p.Left)
    assert await twin.closed() == p.CloseCode.NORMAL


async def test_a_connection_of_an_older_generation_cannot_ready_the_seat(server: LiveServer) -> None:
    created = await create_race(server, seats=2)
    ann = await Client.connect(server)
    await ann.hello(created.race.id, "ann")
    store = server.service.store
    await store.leave(created.race.id, 0, 0)
    bob = await Client.connect(server)
    assert (await bob.hello(created.race.id, "bob")).seat == 0
    before = await store.snapshot(created.race.id)
    try:
        await store.ready(created.race.id, 0, 0, True, now_ms(), 0)
        raise AssertionError("the old generation's ready was applied")
    except StoreError as exc:
        assert exc.code == "seat_left"
    assert await store.snapshot(created.race.id) == before
    await bob.close()


async def test_all_ready_after_a_ready_player_left(server: LiveServer) -> None:
    created = await create_race(server, seats=2, start_mode="all-ready")
    ann, bob = await Client.connect(server), await Client.connect(server)
    await ann.hello(created.race.id, "ann")
    await bob.hello(created.race.id, "bob")
    await bob.send(p.Ready(ready=True))
    await _leave(bob)  # bob was ready: the count of ready seats goes down with him
    carl = await Client.connect(server)
    await carl.hello(created.race.id, "carl")
    await ann.send(p.Ready(ready=True))
    status, body = await server.http("GET", f"/races/{created.race.id}")
    assert body["race"]["status"] == "lobby", "carl is not ready: no start"
    await carl.send(p.Ready(ready=True))
    await ann.expect(p.Countdown)
    for c in (ann, carl):
        await c.close()


async def test_a_lobby_seat_whose_connections_are_gone_for_the_lease_is_freed(redis_url: str) -> None:
    # ann stays connected: her hub's heartbeat (every lease/3) frees bob's seat.
    async with live_server(redis_url, presence_lease=0.6) as server:
        created = await create_race(server, seats=2)
        ann, bob = await Client.connect(server), await Client.connect(server)
        await ann.hello(created.race.id, "ann")
        await bob.hello(created.race.id, "bob")
        await _table_until(ann, {0, 1}, "bob in ann's table")
        await bob.close()
        await _table_until(ann, {0}, "bob's line gone from ann's table")
        assert await _players(server, created.race.id) == 1
        carl = await Client.connect(server)
        assert (await carl.hello(created.race.id, "bob")).seat == 1
        for c in (ann, carl):
            await c.close()


async def test_a_lobby_seat_is_freed_a_lease_after_its_last_connection_closed_with_nobody_watching(
        redis_url: str) -> None:
    """With nobody else connected the hub is gone, and only the janitor looked (every lobby TTL/4, at
    most 30 s): a 3 s lease freed the seat after 23-25 s (issue 22). The process the connection left
    looks again once the lease has run out. The deadline is far below the janitor's 30 s."""
    async with live_server(redis_url, presence_lease=1.0, lobby_ttl=3600) as server:
        assert server.service.janitor.interval == 30.0
        created = await create_race(server, seats=2)
        bob = await Client.connect(server)
        await bob.hello(created.race.id, "bob")
        await bob.close()

        async def freed() -> bool:
            return await _players(server, created.race.id) == 0

        await eventually(freed, "bob's seat freed about a lease after he left", timeout=10.0)


async def test_a_lobby_nobody_watches_has_its_stale_seats_freed_by_the_janitor(redis_url: str) -> None:
    async with live_server(redis_url, presence_lease=0.3, lobby_ttl=60) as server:
        created = await create_race(server, seats=2)
        bob = await Client.connect(server)
        await bob.hello(created.race.id, "bob")
        await bob.close()

        async def freed() -> bool:
            # The janitor runs every lobby_ttl/4 s at most (here 15 s): drive it, as its timer would.
            await server.service.janitor.sweep()
            return await _players(server, created.race.id) == 0

        await eventually(freed, "bob's seat freed with nobody connected")


async def test_a_heartbeat_renews_the_leases_on_every_race_served_in_one_round_trip(
        server: LiveServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """The heartbeat (every lease/3) renews this process's presence lease on each race it serves; the races'
    calls go to Redis together, in one round trip of the store's batcher, not a round trip each."""
    races = [(await create_race(server, seats=2)).race.id for _ in range(3)]
    players = [await Client.connect(server) for _ in races]
    try:
        for c, race in zip(players, races):
            await c.hello(race, "ann")
        store = server.service.store
        trips: list[list[Any]] = []
        real = store._moves._round_trip

        async def counted(calls: list[Any], lane: Any, *rest: Any) -> list[Any]:
            trips.append([call.script for call in calls])
            return await real(calls, lane, *rest)

        monkeypatch.setattr(store._moves, "_round_trip", counted)
        renewed = server.service.lease_expiry()
        await server.service.leases.heartbeat()
        beats = [trip.count(store._heartbeat) for trip in trips if store._heartbeat in trip]
        assert beats and all(n == len(races) for n in beats), f"heartbeat calls per round trip: {beats}"
        for race in races:
            leases = await store.redis.zrange(Keys(race).presence, 0, -1, withscores=True)
            assert len(leases) == 1 and leases[0][1] >= renewed, (race, leases)
    finally:
        for c in players:
            await c.close()
