"""A whole race on a real local 3-master Redis Cluster (tests/cluster_util.py).

Every key of a race shares the race's hash tag, so each script runs on one
node; moves go out as concurrent per-race script calls (a cluster cannot
pipeline them); events travel by plain PUBLISH, which the cluster bus
copies to every node. Two in-process servers on the cluster show that a
spectator on one sees moves made through the other.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import redis.asyncio as aioredis
from cluster_util import LocalCluster
from redis_util import (Client, LiveServer, caught_up, create_race, eventually, live_server, register, seed_checked,
                        start_race)

from server.store import Keys
from server.store.keys import NAMES_INDEXED
from shared import protocol as p
from shared.record import GameRecord, replay

WIN = json.loads((Path(__file__).parent / "data" / "race_win_line.json").read_text())


async def test_a_whole_race_on_a_redis_cluster(servers: tuple[LiveServer, LiveServer], cluster: LocalCluster) -> None:
    a, b = servers
    assert a.service.store.cluster and b.service.store.cluster
    created = await create_race(a, seats=3, deal_source="number", deal=WIN["deal"])
    race = created.race.id
    ann, bob = await Client.connect(a), await Client.connect(b)
    w_ann = await ann.hello(created.race.code, "ann")
    await bob.hello(created.race.code, "bob")
    cy = await Client.connect(a)
    await cy.hello(race, "cy")
    watcher = await Client.connect(b)
    await watcher.hello(race, role="spectator")
    await start_race(a, created.creator_token, [ann, bob, cy])

    async def bob_plays() -> None:
        for text in WIN["moves"][:40]:
            assert isinstance(await bob.move(text), p.Ack)

    async def cy_plays() -> None:
        for _ in range(10):
            assert isinstance(await cy.move("S"), p.Ack)

    async def ann_plays(moves: list[str]) -> None:
        for text in moves:
            assert isinstance(await ann.move(text), p.Ack)

    await asyncio.gather(bob_plays(), cy_plays(), ann_plays(WIN["moves"][:30]))
    while (line := watcher.table.lines.get(0)) is None or line.moves != 30:  # through A, seen on B
        await watcher.recv()

    # ann drops and resumes through the other server: a replay read from the cluster's history.
    await caught_up(ann, b, race)
    await ann.close()
    assert isinstance(await cy.move("S"), p.Ack)
    ann = await Client.connect(b, ann.table)
    welcome = await ann.hello(race, token=w_ann.token, last_version=ann.table.version)
    assert welcome.resumed and welcome.seq == 30
    replayed = await ann.recv()
    assert isinstance(replayed, p.Progress) and 2 in {e.seat for e in replayed.players}
    ann.seq = 30
    await ann_plays(WIN["moves"][30:])

    await bob.give_up()
    await cy.give_up()
    res = (await watcher.expect(p.Finished)).results
    assert [(s.name, s.status) for s in res.standings] == [("ann", "finished"), ("bob", "gave_up"), ("cy", "gave_up")]
    assert [len(r.moves) for r in res.records] == [len(WIN["moves"]), 40, 11]
    for rec in res.records:
        assert replay(GameRecord("forty-thieves", res.deal, tuple(rec.moves))).game.position() == rec.position

    rc = aioredis.RedisCluster.from_url(cluster.url)
    try:
        k = Keys(race)
        keys = [k.meta, k.names, k.progress, k.history, k.results, k.player(0), k.log(0), k.player(2), k.listening]
        assert len({rc.keyslot(key) for key in keys}) == 1, "one race, one slot"
        assert await rc.exists(k.results) == 1
        # Both processes listen (their connections are open): each one's moves were announced to the other.
        assert {m.decode() for m in await rc.zrange(k.listening, 0, -1)} == {a.service.instance, b.service.instance}
    finally:
        await rc.aclose()
    for c in (ann, bob, cy, watcher):
        await c.close()


async def test_a_busy_batcher_lingers_on_the_cluster_too(empty_cluster: LocalCluster) -> None:
    """The moves' linger (tests/test_batcher_linger.py) with the cluster's concurrent per-race calls."""
    from test_batcher_linger import lingering_batch

    rc = aioredis.RedisCluster.from_url(empty_cluster.url)
    try:
        await lingering_batch(rc, cluster=True)
    finally:
        await rc.aclose()


async def test_presence_leases_and_heartbeats_work_on_the_cluster(servers: tuple[LiveServer, LiveServer]) -> None:
    a, _ = servers
    created = await create_race(a, seats=1)
    ann = await Client.connect(a)
    await ann.hello(created.race.id, "ann")
    store = a.service.store
    now = a.service.lease_expiry()
    await store.presence(created.race.id, 0, 0, "dead.1", True, now - 900, now - 1000)  # a dead process's lease
    state = await store.player(created.race.id, 0)
    assert state is not None and state.line.online == 2

    async def swept() -> bool:  # the heartbeat sweeps it (the script reaches the player hash by the race's tag)
        state = await store.player(created.race.id, 0)
        return state is not None and state.line.online == 1

    await eventually(swept, "the dead lease to be swept")
    await ann.close()


async def test_the_janitor_clears_lobbies_spread_over_the_nodes(cluster: LocalCluster) -> None:
    async with live_server(cluster.url, redis_cluster=True, lobby_ttl=1) as server:
        made = [await create_race(server, seats=2) for _ in range(4)]
        rc = aioredis.RedisCluster.from_url(cluster.url)
        try:
            slots = {rc.keyslot(Keys(c.race.id).meta) for c in made}
            assert len(slots) == 4

            async def all_removed() -> bool:
                return not any([await rc.exists(Keys(c.race.id).meta) for c in made])

            await eventually(all_removed, "the janitor to remove the lobbies on every node")
            assert not any([await rc.exists(f"code:{c.race.code}") for c in made])
        finally:
            await rc.aclose()


async def test_creation_limits_work_on_the_cluster(cluster: LocalCluster) -> None:
    """The bucket and the address's lobby set share a hash tag (one slot, one script); the statuses
    the lobby cap checks live in other slots; the open-lobby set in yet another."""
    from server.store import OPEN_LOBBIES, creator_keys

    async with live_server(cluster.url, redis_cluster=True, create_burst=3, create_interval=60.0,
                           lobbies_per_address=2, lobbies_max=100) as server:
        made = [await create_race(server, seats=1) for _ in range(2)]
        status, body = await server.http("POST", "/races", {})
        assert (status, body["code"]) == (429, "too_many_lobbies")
        ann = await Client.connect(server)
        await ann.hello(made[0].race.code, "ann")
        await start_race(server, made[0].creator_token, [ann])
        await create_race(server)  # the started race stopped counting; the third token is spent
        status, body = await server.http("POST", "/races", {})
        assert (status, body["code"]) == (429, "create_rate_limited")
        rc = aioredis.RedisCluster.from_url(cluster.url)
        try:
            bucket, lobbies = creator_keys("127.0.0.1")
            assert rc.keyslot(bucket) == rc.keyslot(lobbies)
            assert await rc.zcard(lobbies) == 2 and await rc.zcard(OPEN_LOBBIES) == 2
            assert float((await rc.hget(bucket, "tokens")).decode()) < 1
        finally:
            await rc.aclose()
        await ann.close()


async def test_look_alike_names_collide_on_a_redis_cluster(servers: tuple[LiveServer, LiveServer],
                                                           empty_cluster: LocalCluster) -> None:
    """The account index is keyed by a name's look (shared/names.py), one key per look in its own slot:
    look-alike registrations through two servers at once make exactly one account, a casual player
    cannot take that look, and accounts without an index entry get one when a server starts on a store
    whose index is not marked as built by its look version."""
    a, b = servers
    for attempt in range(3):
        answers = await asyncio.gather(a.http("POST", "/players", {"name": f"rob{attempt}"}),
                                       b.http("POST", "/players", {"name": f"R0B{attempt}"}))
        assert sorted(status for status, _ in answers) == [201, 409], answers
    created = await create_race(b)
    c = await Client.connect(a)
    await c.send(p.Hello(protocol=p.PROTOCOL_VERSION, race=created.race.id, name="rоb0"))  # Cyrillic о
    assert (await c.error()).code == "name_registered"
    rc = aioredis.RedisCluster.from_url(empty_cluster.url)
    try:
        await rc.hset("account:{carol}", mapping={"name": "Carol", "key_hash": "0" * 64, "created_at": 1})
        await rc.delete(NAMES_INDEXED)  # a store from before the index has no mark (tests/test_account_index.py)
    finally:
        await rc.aclose()
    async with live_server(empty_cluster.urls[2], redis_cluster=True) as third:
        status, body = await third.http("POST", "/players", {"name": "CAR0L"})
        assert (status, body["code"]) == (409, "account_name_taken")


async def test_accounts_and_lobby_seats_on_a_redis_cluster(servers: tuple[LiveServer, LiveServer]) -> None:
    """An account registered through one server is known to the other; a seat given back through one
    is freed for the other's connections (the leave's scripts each touch one hash tag); a key replaced
    through one closes the other's connections that joined with it."""
    a, b = servers
    status, body = await a.http("POST", "/players", {"name": "Ann"})
    assert status == 201
    key = body["key"]
    status, body = await b.http("POST", "/players", {"name": "ANN"})
    assert (status, body["code"]) == (409, "account_name_taken")
    status, body = await b.http("POST", "/players/ann/key", headers={"authorization": f"Bearer {key}"})
    assert status == 200
    key = body["key"]
    created = await create_race(a, seats=2, rated=True)
    ann = await Client.connect(b)
    first = await ann.hello(created.race.id, key=key)
    twin = await Client.connect(a)
    assert (await twin.hello(created.race.id, token=first.token)).seat == first.seat
    await ann.send(p.Leave())
    await ann.expect(p.Left)
    await twin.expect(p.Left)  # told by the other process's hub
    status, body = await a.http("GET", f"/races/{created.race.id}")
    assert body["race"]["players"] == 0
    again = await Client.connect(a)
    assert (await again.hello(created.race.id, key=key)).seat == first.seat
    # A key replaced through b closes the connection a holds with it (pub/sub through the cluster bus).
    status, body = await b.http("POST", "/players/ann/key", headers={"authorization": f"Bearer {key}"})
    assert status == 200
    assert (await again.error()).code == "bad_key"
    assert await again.closed() == p.CloseCode.KEY_REPLACED


async def test_a_duplicate_event_and_the_daily_deal_on_a_cluster(empty_cluster: LocalCluster) -> None:
    """Events' scripts each touch one event's hash tag, the daily deal's one day's: two servers on the
    cluster run a one-round event (entries and heats through both) and a play of the daily deal."""
    token = "cluster-organiser"
    auth = {"authorization": f"Bearer {token}"}
    cluster = empty_cluster
    async with live_server(cluster.urls[0], redis_cluster=True, organiser_token=token) as a:
        async with live_server(cluster.urls[1], redis_cluster=True, organiser_token=token) as b:
            keys = {}
            for i, name in enumerate(("ann", "bob", "cy", "dan")):
                status, body = await (a if i % 2 else b).http("POST", "/players", {"name": name})
                assert status == 201, body
                keys[name] = body["key"]
            status, event = await a.http("POST", "/events", {"name": "Cup", "rounds": 1, "heat_size": 2,
                                                            "join_seconds": 1, "deals": [WIN["deal"]]}, headers=auth)
            assert status == 201, event
            for i, name in enumerate(keys):
                status, _ = await (b if i % 2 else a).http("POST", f"/events/{event['id']}/entrants",
                                                           headers={"authorization": f"Bearer {keys[name]}"})
                assert status == 200
            assert (await b.http("POST", f"/events/{event['id']}/start", headers=auth))[0] == 200

            async def drawn() -> bool:
                _, info = await a.http("GET", f"/events/{event['id']}")
                return bool(info["schedule"])
            await eventually(drawn, "round 1 drawn")
            _, info = await b.http("GET", f"/events/{event['id']}")
            players = []
            for h, heat in enumerate(info["schedule"][0]["heats"]):
                for account in heat["entrants"]:
                    c = await Client.connect(a if h % 2 else b)
                    await c.hello(heat["code"], key=keys[account])
                    players.append((c, account))
            for c, account in players:
                await c.expect(p.Countdown, timeout=30)
                for text in WIN["moves"][:20 if account in ("ann", "cy") else 2]:
                    assert isinstance(await c.move(text), p.Ack)
                await c.give_up()

            async def scored() -> bool:
                _, info = await b.http("GET", f"/events/{event['id']}")
                return info["status"] == "finished"
            await eventually(scored, "the round scored and the event finished")
            _, standings = await a.http("GET", f"/events/{event['id']}/standings")
            points = {line["name"]: line["matchpoints"] for line in standings["lines"]}
            assert points["ann"] + points["cy"] == 2 * 2 + 1 and points["bob"] + points["dan"] == 1
            for heat in info["schedule"][0]["heats"]:  # unsealed race by race, each on its own node
                _, results = await b.http("GET", f"/races/{heat['race']}/results")
                assert results["revealed"] and results["deal"] == WIN["deal"] and results["records"]
            status, play = await a.http("POST", "/daily/forty-thieves",
                                        headers={"authorization": f"Bearer {keys['ann']}"})
            assert status == 200, play
            status, again = await b.http("POST", "/daily/forty-thieves", headers={"authorization": f"Bearer {keys['ann']}"})
            assert again["race"] == play["race"], "one play a day, whichever server is asked"
            for c, _ in players:
                await c.close()


async def test_races_end_when_every_racer_gives_up_and_drops_at_once_on_a_cluster(
        servers: tuple[LiveServer, LiveServer]) -> None:
    """As on one Redis (tests/test_race_e2e.py), with each race's racers on both servers."""
    from test_race_e2e import give_up_and_drop

    await give_up_and_drop(list(servers), 6)


async def test_the_event_state_table_is_enforced_on_a_cluster(empty_cluster: LocalCluster) -> None:
    """The step scripts (one event's hash tag each) refuse what the state table does not allow on a
    cluster as on one Redis."""
    import redis.asyncio as aioredis
    from test_event_states import check_the_table_is_enforced

    client = aioredis.RedisCluster.from_url(empty_cluster.url)
    try:
        await check_the_table_is_enforced(client)
    finally:
        await client.aclose()


async def test_a_challenge_and_a_rematch_on_a_redis_cluster(servers: tuple[LiveServer, LiveServer]) -> None:
    """A challenge's steps are one-key scripts on its own hash tag, the accounts' indexes live in their
    slots: made through one server, listed, accepted and raced through the other, then a rematch
    answered through both; refused and declined likewise."""
    a, b = servers
    keys = {}
    for name in ("ann", "bob"):
        status, body = await a.http("POST", "/players", {"name": name})
        assert status == 201, body
        keys[name] = {"authorization": f"Bearer {body['key']}"}
    await seed_checked(a, count=2, variants=("forty-thieves",))
    status, sent = await a.http("POST", "/challenges", {"to": "bob", "time_limit": 60}, keys["ann"])
    assert status == 201, sent
    status, listed = await b.http("GET", "/challenges", headers=keys["bob"])
    assert [c["id"] for c in listed["incoming"]] == [sent["id"]]
    status, accepted = await b.http("POST", f"/challenges/{sent['id']}/accept", {}, keys["bob"])
    assert (status, accepted["status"]) == (200, "accepted"), accepted
    status, seen = await a.http("GET", f"/challenges/{sent['id']}", headers=keys["ann"])
    assert seen["race"] == accepted["race"]
    racers = [await Client.connect(a), await Client.connect(b)]
    for client, name in zip(racers, ("ann", "bob")):
        await client.hello(accepted["code"], key=keys[name]["authorization"].split()[1])
        await client.send(p.Ready(ready=True))
    for client in racers:
        assert (await client.expect(p.Countdown)).view is not None
    for client in racers:
        await client.give_up()
    race = (await racers[0].expect(p.Finished)).results.race
    for client in racers:
        await client.close()
    # the rematch: one hash under the old race's tag, the new race in a slot of its own
    status, offer = await b.http("POST", f"/races/{race}/rematch", {"accept": True}, keys["ann"])
    assert (status, offer["status"]) == (200, "open"), offer
    status, offer = await a.http("POST", f"/races/{race}/rematch", {"accept": True}, keys["bob"])
    assert (status, offer["status"]) == (200, "accepted") and offer["new_race"] != race
    assert (await b.http("GET", f"/races/{race}/rematch"))[1]["code"] == offer["code"]

    status, declined = await a.http("POST", "/challenges", {"to": "bob"}, keys["ann"])
    status, body = await b.http("POST", f"/challenges/{declined['id']}/decline", {}, keys["bob"])
    assert (status, body["status"]) == (200, "declined")
    # the challenger's open challenges (counted in its account's slot), made and asked about on both
    opened = [(await (a, b)[i % 2].http("POST", "/challenges", {"to": "bob"}, keys["ann"]))[1] for i in range(3)]
    assert [(await b.http("GET", f"/challenges/{c['id']}", headers=keys["ann"]))[1]["status"] for c in opened] == \
        ["open"] * 3
    status, body = await b.http("POST", "/challenges", {"to": "bob"}, keys["ann"])
    assert (status, body["code"]) == (429, "too_many_challenges")
    assert (await a.http("POST", "/players/bob/challenges", {"accept": False}, keys["bob"]))[0] == 200
    status, body = await b.http("POST", "/challenges", {"to": "bob"}, keys["ann"])
    assert (status, body["code"]) == (403, "challenges_refused")


async def test_seekers_over_two_processes_on_a_cluster_are_paired_once(empty_cluster: LocalCluster) -> None:
    """Seek pools on a Redis Cluster (each pool's keys in one slot, a player's lock in its own): ten
    seekers spread over two processes get five races, which start when their players join."""
    fast = dict(redis_cluster=True, seek_wave=0.1, seek_join=5.0, seek_deals="random")
    async with live_server(empty_cluster.urls[0], **fast) as a, live_server(empty_cluster.urls[1], **fast) as b:
        async def seeker(i: int) -> p.Matched:
            client = await Client.connect((a, b)[i % 2])
            await client.send(p.Seek(name=f"s{i}", time_limit=60))
            async def matched() -> p.Matched:
                while not isinstance(msg := await client.recv(20), p.Matched):
                    assert isinstance(msg, p.Seeking)
                return msg
            msg = await asyncio.wait_for(matched(), 30)
            player = await Client.connect((b, a)[i % 2])
            await player.hello(msg.race, token=msg.token)
            await player.send(p.Ready())
            await player.expect(p.Countdown)
            await asyncio.wait_for(client.closed(), 20)
            await player.close()
            return msg

        got = await asyncio.gather(*(seeker(i) for i in range(10)))
        assert sorted(m.names[m.seat] for m in got) == sorted(f"s{i}" for i in range(10))
        assert len({m.race for m in got}) == 5


async def _recv_checked(c: Client, timeout: float) -> p.ServerMessage:
    """The next frame; a progress frame that is not a full table must bring only lines that differ from the
    client's (docs/protocol.md: "changes only")."""
    msg = p.decode_server(await asyncio.wait_for(c.ws.recv(), timeout))
    if isinstance(msg, p.Progress) and not msg.full:
        repeated = [e for e in msg.players if c.table.lines.get(e.seat) == e]
        assert not repeated, f"progress v{msg.version} repeats lines the client had: {repeated}"
    c.table.apply(msg)
    return msg


async def _until_status(c: Client, seat: int, status: str, timeout: float) -> None:
    """Read (checking each frame) until the client's table shows ``seat`` with ``status``, or fail after ``timeout``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while (line := c.table.lines.get(seat)) is None or line.status != status:
        left = deadline - loop.time()
        assert left > 0, f"seat {seat} stayed {line.status if line else None!r}, not {status!r}, for {timeout:g} s"
        try:
            await _recv_checked(c, left)
        except asyncio.TimeoutError:
            pass


async def test_a_rival_who_is_no_longer_ready_shows_as_waiting_across_processes(
        empty_cluster: LocalCluster) -> None:
    """An all-ready lobby over two processes at the default rates: every racer sees each ready change
    within 3 s, and no progress frame repeats a line it had."""
    hz = dict(progress_hz=10.0, racer_hz=4.0)
    async with live_server(empty_cluster.urls[0], redis_cluster=True, **hz) as a:
        async with live_server(empty_cluster.urls[1], redis_cluster=True, **hz) as b:
            created = await create_race(a, seats=3, start_mode="all-ready")
            ann, cy, bob = await Client.connect(a), await Client.connect(a), await Client.connect(b)
            seats = {}
            for c, name in ((ann, "ann"), (bob, "bob"), (cy, "cy")):
                seats[name] = (await c.hello(created.race.id, name)).seat
            for c in (ann, bob):
                await c.send(p.Ready(ready=True))
            for c in (ann, bob, cy):
                for name in ("ann", "bob"):
                    await _until_status(c, seats[name], "ready", 10)
            await bob.send(p.Ready(ready=False))
            for c in (ann, bob, cy):
                await _until_status(c, seats["bob"], "waiting", 3)
            await ann.send(p.Ready(ready=False))
            for c in (ann, bob, cy):
                await _until_status(c, seats["ann"], "waiting", 3)
            for c in (ann, bob, cy):
                await c.close()


async def test_a_racer_given_its_first_table_between_two_racers_frames_gets_every_later_change(
        empty_cluster: LocalCluster) -> None:
    """A racer's first table (the full one after its welcome) waits for the racers' next frame: given at
    once, it was newer than the table the hub makes the racers' frames from, and their next frame repeated
    lines it had and left out a rival's line changed back meanwhile (ready, then waiting again).

    One frame every 10 s to the racers (``racer_hz`` 0.1) holds the racers' frame back while bob, on the
    other process, gets ready, cy joins, and bob is waiting again."""
    hz = dict(progress_hz=10.0, racer_hz=0.1)
    async with live_server(empty_cluster.urls[0], redis_cluster=True, **hz) as a:
        async with live_server(empty_cluster.urls[1], redis_cluster=True, **hz) as b:
            created = await create_race(a, seats=3, start_mode="all-ready")
            race, store = created.race.id, a.service.store
            bob = await Client.connect(b)
            seat = (await bob.hello(race, "bob")).seat
            ann = await Client.connect(a)
            await ann.hello(race, "ann")
            while not (isinstance(msg := await _recv_checked(ann, 10), p.Progress) and msg.full):
                pass  # the racers' frame on ann's process went out now: the next is 10 s away

            async def bob_is(status: str) -> bool:
                return next(line for line in (await store.lines(race))[1] if line.seat == seat).status == status

            await bob.send(p.Ready(ready=True))
            await eventually(lambda: bob_is("ready"), "bob to be ready")
            cy = await Client.connect(a)
            welcome = await cy.hello(race, "cy")
            assert next(e for e in welcome.progress if e.seat == seat).status == "ready"
            hub = a.service.hubs[race]
            await eventually(lambda: hub.table.version >= welcome.version, "a flush of the table cy was welcomed with")
            await bob.send(p.Ready(ready=False))
            await eventually(lambda: bob_is("waiting"), "bob to be waiting again")
            await _until_status(cy, seat, "waiting", 30)
            await _until_status(ann, seat, "waiting", 30)
            for c in (ann, bob, cy):
                await c.close()


async def test_a_seeks_limits_expiry_and_key_replacement_on_a_cluster(empty_cluster: LocalCluster) -> None:
    """What bounds a seek, on a Redis Cluster: its address's pools and lobby places (the address's keys
    in one slot, the pool's in another), the end of its key (the account in a third) and its expiry."""
    bounds = dict(redis_cluster=True, seek_wave=0.1, seek_deals="random", seek_expire=2.0, create_burst=0,
                  lobbies_per_address=2, seek_pools_per_address=1)
    async with live_server(empty_cluster.urls[0], **bounds) as server:
        key = await register(server, "Ann")
        ann = await Client.connect(server)
        await ann.send(p.Seek(key=key, time_limit=60))
        await ann.expect(p.Seeking)
        bob = await Client.connect(server)
        await bob.send(p.Seek(name="bob", time_limit=90))
        assert (await bob.error()).code == "too_many_seek_pools"
        status, _ = await server.http("POST", "/players/ann/key", headers={"authorization": f"Bearer {key}"})
        assert status == 200

        async def next_error(client: Client) -> p.Error:
            while not isinstance(msg := await client.recv(20), p.Error):
                assert isinstance(msg, p.Seeking)
            return msg
        assert (await asyncio.wait_for(next_error(ann), 20)).code == "bad_key"
        assert await asyncio.wait_for(ann.closed(20), 20) == p.CloseCode.KEY_REPLACED

        async def admitted() -> bool:  # ann's seek and its pool are given back
            await bob.send(p.Seek(name="bob", time_limit=90))
            return isinstance(await bob.recv(), p.Seeking)
        await eventually(admitted, "bob's seek to be admitted once ann's ended")
        error = await asyncio.wait_for(next_error(bob), 20)
        assert (error.code, error.ref) == ("seek_expired", "seek")
        await bob.close()
