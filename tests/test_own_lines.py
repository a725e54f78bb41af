"""A process's hub takes its own moves' lines from the moves script's replies (server/race/hub.py ``learn``):
it reads no table back for them, its racers still see every change, and a move whose note the tick key
held back is announced by its committer, so other processes' hubs hear of it."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest
import redis.asyncio as aioredis
from redis_util import (Client, LiveServer, caught_up, create_race, eventually, listen_as_another_process, record_calls,
                        start_race)

from server.race import frame_plan
from server.store import Note
from server.store.keys import Keys
from shared import protocol as p

WIN = json.loads((Path(__file__).parent / "data" / "race_win_line.json").read_text())


async def _race_of_two(server: LiveServer) -> tuple[str, Client, Client, int]:
    """ann and bob racing on the winning line's deal, nobody else watching; ann's seat."""
    created = await create_race(server, seats=2, deal_source="number", deal=WIN["deal"])
    ann, bob = [await Client.connect(server) for _ in range(2)]
    seat = (await ann.hello(created.race.id, "ann")).seat
    await bob.hello(created.race.id, "bob")
    await start_race(server, created.creator_token, [ann, bob])
    assert seat is not None
    while (line := bob.table.lines.get(seat)) is None or line.status != "racing":
        await bob.recv(timeout=10)
    return created.race.id, ann, bob, seat


async def _until(client: Client, seat: int, **figures: object) -> None:
    while (line := client.table.lines.get(seat)) is None or any(getattr(line, k) != v for k, v in figures.items()):
        await client.recv(timeout=10)


async def test_racers_see_each_others_moves_with_no_table_read_back(server: LiveServer,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(frame_plan, "RACER_LAG", 0.3)
    race, ann, bob, seat = await _race_of_two(server)
    store = server.service.store
    reads = record_calls(monkeypatch, store, "lines")
    try:
        assert isinstance(await ann.move(WIN["moves"][0]), p.Ack)
        await _until(bob, seat, moves=1, home=0)  # a move count alone: bob's table catches up within the lag
        assert isinstance(await ann.move(WIN["moves"][1]), p.Ack)
        await _until(bob, seat, moves=2, home=1)  # a card home: at once
        assert reads == [], "the hub read back a table its own process had written"
        await caught_up(bob, server, race)
    finally:
        for c in (ann, bob):
            await c.close()


async def test_a_move_whose_note_the_tick_held_back_is_announced_by_its_committer(
        server: LiveServer, redis_url: str) -> None:
    race, ann, bob, _ = await _race_of_two(server)
    redis = aioredis.Redis.from_url(redis_url)
    pubsub = redis.pubsub()
    await listen_as_another_process(redis, race)
    await pubsub.subscribe(Keys(race).chan)
    try:
        # Another move announced the race a moment ago: the tick key holds both these moves' notes back.
        await redis.set(Keys(race).tick, 1, px=60_000)
        acks = await asyncio.gather(ann.move(WIN["moves"][0]), bob.move(WIN["moves"][0]))
        assert all(isinstance(a, p.Ack) for a in acks), acks
        last = max(a.version for a in acks if isinstance(a, p.Ack))
        deadline = time.monotonic() + 5
        heard = 0
        while heard < last:
            assert time.monotonic() < deadline, f"no note of version {last} (heard up to {heard})"
            msg = await pubsub.get_message(ignore_subscribe_messages=True, timeout=0.5)
            if msg is not None:
                heard = max(heard, Note.decode(msg["data"]).version)
    finally:
        await pubsub.aclose()
        await redis.aclose()
        for c in (ann, bob):
            await c.close()


async def test_a_committers_owed_note_names_the_end_once_the_race_is_over(server: LiveServer, redis_url: str) -> None:
    """The note a committer owes (``Store.announce``) carries the race's version now, and with it the kind
    of its last change: ``move`` while it runs, ``end`` once it is over. It said ``move`` of an end's
    version too, and a hub that heard it took the end as handled: with the end's own note lost (Redis
    restarted a moment before), its players never got ``finished`` (tests/test_faults.py's kill and
    restart, 6 runs in 30 under load)."""
    created = await create_race(server, seats=1, deal_source="number", deal=WIN["deal"])
    ann = await Client.connect(server)
    await ann.hello(created.race.id, "ann")
    await start_race(server, created.creator_token, [ann])
    assert isinstance(await ann.move(WIN["moves"][0]), p.Ack)
    client = aioredis.from_url(redis_url)
    channel = client.pubsub()
    try:
        await channel.subscribe(Keys(created.race.id).chan)

        async def next_note() -> Note:
            while True:
                msg = await channel.get_message(ignore_subscribe_messages=True, timeout=10)
                if msg is not None:
                    return Note.decode(msg["data"])

        await server.service.store.announce(created.race.id)
        running = await asyncio.wait_for(next_note(), 10)
        await ann.give_up()
        await ann.expect(p.Finished)
        while (ended := await asyncio.wait_for(next_note(), 10)).kind != "end":  # the give-up's, then the end's
            pass
        await server.service.store.announce(created.race.id)
        owed = await asyncio.wait_for(next_note(), 10)
    finally:
        await channel.aclose()
        await client.aclose()
    assert running.kind == "move"
    assert (owed.kind, owed.version) == ("end", ended.version)
    await ann.close()


async def test_moves_are_announced_only_while_another_process_listens(server: LiveServer, redis_url: str) -> None:
    """A race played and watched on one process publishes no note a move (its hub learns them from the
    moves script); once another process has a live entry in the race's listening set its moves are
    announced; an entry whose lease ran out (a dead process's) counts for nothing. Each phase ends with a
    give-up, whose note is always published: the notes heard before it are the phase's."""
    race, ann, bob, _ = await _race_of_two(server)
    redis = aioredis.Redis.from_url(redis_url)
    pubsub = redis.pubsub()  # a bare subscription, as a tool's: no entry in the listening set
    await pubsub.subscribe(Keys(race).chan)

    async def notes_until_give_up() -> list[Note]:
        heard: list[Note] = []
        while not heard or heard[-1].kind != "give_up":
            msg = await asyncio.wait_for(pubsub.get_message(ignore_subscribe_messages=True, timeout=10), 10)
            if msg is not None:
                heard.append(Note.decode(msg["data"]))
        return heard

    try:
        assert isinstance(await ann.move(WIN["moves"][0]), p.Ack)
        await ann.give_up()
        assert [n.kind for n in await notes_until_give_up() if n.kind == "move"] == []

        await listen_as_another_process(redis, race)
        ack = await bob.move(WIN["moves"][0])
        assert isinstance(ack, p.Ack)
        heard = 0
        while heard < ack.version:  # its note, or (held back by the tick key) its committer's a tick later
            msg = await asyncio.wait_for(pubsub.get_message(ignore_subscribe_messages=True, timeout=10), 10)
            if msg is not None and (note := Note.decode(msg["data"])).kind == "move":
                heard = note.version

        await listen_as_another_process(redis, race, lease_ms=-1000)  # that process died a second ago
        assert isinstance(await bob.move(WIN["moves"][1]), p.Ack)
        await bob.give_up()
        assert [n.version for n in await notes_until_give_up() if n.kind == "move" and n.version > ack.version] == []
    finally:
        await pubsub.aclose()
        await redis.aclose()
        for c in (ann, bob):
            await c.close()


async def test_a_process_listening_to_a_race_is_in_its_listening_set_and_its_own_moves_reach_its_listeners(
        server: LiveServer, redis_url: str) -> None:
    race, ann, bob, _ = await _race_of_two(server)
    service = server.service
    redis = aioredis.Redis.from_url(redis_url)
    listening = Keys(race).listening
    heard: list[str] = []
    try:
        entered = await redis.zscore(listening, service.instance)
        assert entered is not None and entered > time.time() * 1000 + 30_000  # a lease still well ahead
        assert 0 < await redis.pttl(listening) <= 60_000
        await service.served.subscriber.renew(int(entered))  # the heartbeat's renewal: the lease moves on
        assert await redis.zscore(listening, service.instance) == entered + 60_000

        await service.listen(race, heard.append)  # as an event's live feed listens to its heats
        assert isinstance(await ann.move(WIN["moves"][0]), p.Ack)
        assert heard[:1] == [race], "a move of this process's own is heard here as a note would be"
        await service.unlisten(race, heard.append)
    finally:
        for c in (ann, bob):
            await c.close()
    await eventually(lambda: _gone(redis, listening, service.instance), what="the entry removed with the hub")
    await redis.aclose()


async def _gone(redis: aioredis.Redis, key: str, member: str) -> bool:
    return await redis.zscore(key, member) is None
