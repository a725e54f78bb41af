"""Seeks across real ``thieves-server`` processes sharing one Redis, and a Redis Cluster (docs/protocol.md
"Seeks"): one pairing per wave per pool, a killed process's seeks never paired and soon out of their
pool, a reconnecting seeker taking its seek over, and ``seeking {requeued: true}`` always before the
next ``matched``.

The processes are real children (tests/process_util.py), so one can be SIGKILLed with its seek
connections open, as when a machine dies; the seekers are light WebSocket clients (``seek`` frames).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any, AsyncIterator, Iterator

import pytest
import redis

from process_util import ServerProcess
from redis_util import DEADLINE, PROCESS_ARGS, Client, eventually
from server.matchmaking.seeks import ALIVE_MS, PRESENT_MS
from server.race.clock import now_ms
from server.store.keys import SeekKeys, seeker_key
from server.store.seeks import LOCK_MS
from shared import protocol as p
from shared.names import name_key

SEEK_ARGS = ["--seek-wave", "0.1", "--seek-deals", "random", "--connections-per-address", "0"]
"""Short waves (two processes' ticks interleave often), random deals (no solver), and no cap on the
many connections of one loopback address."""


class Backend:
    """Where the processes keep their state: the private Redis, or the module's Redis Cluster."""

    def __init__(self, url: str, cluster: bool) -> None:
        self.url = url
        self.args = ["--redis-cluster", "yes"] if cluster else []
        self.redis: Any = redis.RedisCluster.from_url(url) if cluster else redis.Redis.from_url(url)


@pytest.fixture(params=["redis", "cluster"])
def backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    if request.param == "redis":
        made = Backend(request.getfixturevalue("redis_url"), cluster=False)
    else:
        made = Backend(request.getfixturevalue("empty_cluster").urls[0], cluster=True)
    yield made
    made.redis.close()


@contextlib.asynccontextmanager
async def two_processes(backend: Backend, join: float, tmp: Any) -> AsyncIterator[tuple[ServerProcess, ...]]:
    """Two ``thieves-server`` processes on the backend (started side by side), stopped at the end."""
    made = [ServerProcess(backend.url, args=[*PROCESS_ARGS, *SEEK_ARGS, "--seek-join", str(join), *backend.args],
                          log_path=tmp / f"server-{i}.log") for i in range(2)]
    try:
        await asyncio.gather(*(asyncio.to_thread(s.start) for s in made))
        yield tuple(made)
    finally:
        for s in made:
            await asyncio.to_thread(s.close)


async def register(server: ServerProcess, name: str) -> str:
    status, body = await asyncio.to_thread(server.http, "POST", "/players", {"name": name})
    assert status == 201, body
    return str(body["key"])


async def seek(server: ServerProcess, **fields: Any) -> tuple[Client, p.Seeking]:
    client = await Client.connect(server)  # type: ignore[arg-type]  # (a ws_url is all it needs)
    await client.send(p.Seek(**fields))
    return client, await client.expect(p.Seeking)


async def frames_until(client: Client, kind: type, timeout: float = DEADLINE) -> list[Any]:
    """The client's frames up to and including the first ``kind`` (within ``timeout`` in all)."""
    seen: list[Any] = []

    async def read() -> list[Any]:
        while not isinstance(msg := await client.recv(timeout), kind):
            seen.append(msg)
        seen.append(msg)
        return seen
    return await asyncio.wait_for(read(), timeout)


async def matched(client: Client, timeout: float = DEADLINE) -> p.Matched:
    """The client's ``matched``, after any number of ``seeking`` updates."""
    frames = await frames_until(client, p.Matched, timeout)
    assert all(isinstance(f, p.Seeking) for f in frames[:-1]), frames
    return frames[-1]


def events(servers: tuple[ServerProcess, ...], name: str) -> list[str]:
    return [line for s in servers for line in s.events(name)]


# ------------------------------------------------------------------ waves
CROWD = {2: 40, 3: 24, 4: 24}
"""Seekers per pool (by seats): enough groups in one wave that its pairing outlasts a wave."""
ROUNDS = 3
"""Crowds one after another (the first meets cold processes, whose slower seeks spread its arrivals)."""


async def test_two_processes_pair_each_pool_once_a_wave(backend: Backend, tmp_path: Any) -> None:
    """Crowds of 2-, 3- and 4-seat pools' seekers arrive together on two processes: every one is placed once,
    in a full race, and no group is ever formed twice (``seek_group_lost``: two pairings of one pool at
    once, each forming a group of the same seekers, the second thrown away)."""
    async with two_processes(backend, 30.0, tmp_path) as servers:
        for round_ in range(ROUNDS):
            clients: list[tuple[Client, str, int]] = []
            for seats, count in CROWD.items():
                for i in range(count):
                    client = await Client.connect(servers[i % 2])  # type: ignore[arg-type]
                    clients.append((client, f"r{round_}s{seats}n{i}", seats))
            # Every seek sent at once: each wave has many groups to place.
            await asyncio.gather(*(c.send(p.Seek(name=n, seats=s, time_limit=60)) for c, n, s in clients))
            got = await asyncio.gather(*(matched(c, timeout=60) for c, _, _ in clients))
            races: dict[str, set[str]] = {}
            for (_, name, seats), m in zip(clients, got):
                assert m.names[m.seat] == name and len(m.names) == seats
                races.setdefault(m.race, set()).add(name)
            assert sorted(n for members in races.values() for n in members) == sorted(n for _, n, _ in clients)
            assert all(len(members) == len(next(m for m in got if m.race == race).names)
                       for race, members in races.items())
            for c, _, _ in clients:
                await c.close()
        assert events(servers, "seek_group_lost") == []
        assert len(events(servers, "seek_race")) == ROUNDS * sum(count // seats for seats, count in CROWD.items())


# ------------------------------------------------------------------ a killed process
def vouched(backend: Backend, pool: str, seeks: list[str]) -> list[int]:
    """When each seek's connection last vouched for it (ms; -1: no liveness left)."""
    alive = SeekKeys(pool).alive
    scores = [backend.redis.zscore(alive, s) for s in seeks]
    return [int(s) - ALIVE_MS if s is not None else -1 for s in scores]


async def absent(backend: Backend, pool: str, seeks: list[str]) -> None:
    """Wait until nobody has vouched for these seeks for longer than PRESENT_MS."""
    await eventually(lambda: all(v < now_ms() - PRESENT_MS for v in vouched(backend, pool, seeks)),
                     "the killed process's seeks to be absent")


async def test_a_killed_process_s_seeks_are_never_paired_and_leave_their_pool(backend: Backend,
                                                                               tmp_path: Any) -> None:
    """Three seeks wait on a process that is killed; four seekers then come to the other process. They
    are put in one race together, never with the dead seeks (whose players would never come), and the
    dead seeks leave the pool once nobody has vouched for them for ALIVE_MS."""
    pool = "forty-thieves/4/60/casual"
    async with two_processes(backend, 30.0, tmp_path) as (doomed, live):
        dead = [(await seek(doomed, name=f"dead{i}", seats=4, time_limit=60)) for i in range(3)]
        ids = [s.seek for _, s in dead]
        await asyncio.to_thread(doomed.kill)
        killed = time.monotonic()
        await absent(backend, pool, ids)
        seekers = [(await seek(live, name=f"live{i}", seats=4, time_limit=60))[0] for i in range(4)]
        got = [await matched(c) for c in seekers]
        assert all(sorted(m.names) == ["live0", "live1", "live2", "live3"] for m in got)

        def gone() -> bool:
            return all(backend.redis.hget(SeekKeys(pool).q, s) is None for s in ids)
        await eventually(gone, "the dead seeks to leave their pool")
        assert time.monotonic() - killed < ALIVE_MS / 1000 + 5  # 5 s after the last vouch, a wave or two late
        await eventually(lambda: len(live.events("seek_dropped")) == 3, "three seek_dropped lines")
        status, body = await asyncio.to_thread(live.http, "GET", "/seeks")
        assert status == 200 and [line["waiting"] for line in body["pools"] if line["pool"] == pool] == [0]
        for c in (*seekers, *(c for c, _ in dead)):
            await c.close()


# ------------------------------------------------------------------ reconnecting
async def seek_again(server: ServerProcess, **fields: Any) -> tuple[Client, Any]:
    """A new connection's ``seek``, tried again on another new connection while the answer is
    ``already_seeking`` (the old seek's connection vouched for it lately); the first other answer."""
    client: Client | None = None
    answer: Any = None

    async def other() -> bool:
        nonlocal client, answer
        if client is not None:
            await client.close()
        client = await Client.connect(server)  # type: ignore[arg-type]
        await client.send(p.Seek(**fields))
        answer = await client.recv()
        return not (isinstance(answer, p.Error) and answer.code == "already_seeking")
    await eventually(other, "an answer other than already_seeking")
    assert client is not None
    return client, answer


async def test_a_seeker_whose_process_died_takes_its_seek_over(backend: Backend, tmp_path: Any) -> None:
    """After its process is killed, a player's new ``seek`` with the same key on the other process takes
    over its seek: a waiting one is told it waits (its waiting time kept) and can be cancelled; a placed
    one is told its ``matched`` and the race goes on. The same name without a key never takes a seek
    over: it seeks afresh once the orphan has left its pool."""
    async with two_processes(backend, 30.0, tmp_path) as (doomed, live):
        ann_key, cy_key, dee_key = [await register(live, n) for n in ("Ann", "Cy", "Dee")]
        ann, ann_seeking = await seek(doomed, key=ann_key, time_limit=60)
        bob, bob_seeking = await seek(doomed, name="bob", seats=3, time_limit=60)
        cy, _ = await seek(doomed, key=cy_key, time_limit=90)
        dee, _ = await seek(doomed, key=dee_key, time_limit=90)
        placed = {m.seek: m for m in [await matched(cy), await matched(dee)]}
        await asyncio.to_thread(doomed.kill)

        # A waiting seek: resumed with its id and its waiting time, then cancelled.
        ann2, answer = await seek_again(live, key=ann_key, time_limit=120)
        assert isinstance(answer, p.Seeking), answer
        assert answer.seek == ann_seeking.seek and answer.pool == "forty-thieves/2/60/casual"
        assert answer.waited_ms >= 1000
        await ann2.send(p.SeekCancel())
        assert (await ann2.expect(p.SeekCancelled)).cancelled
        await ann2.send(p.Seek(key=ann_key, time_limit=120))
        assert (await ann2.expect(p.Seeking)).pool == "forty-thieves/2/120/casual"
        bob2, answer = await seek_again(live, name="bob", seats=3, time_limit=60)
        assert isinstance(answer, p.Seeking) and answer.seek != bob_seeking.seek, answer
        assert answer.waited_ms < 1000 and answer.waiting == 1  # a new seek, alone: the orphan left

        # Placed seeks: each is told its race again, and the race starts once both join.
        joined = []
        for key in (cy_key, dee_key):
            again, answer = await seek_again(live, key=key, time_limit=90)
            assert isinstance(answer, p.Matched), answer
            assert answer == placed[answer.seek]
            await again.send(p.SeekCancel())  # too late: the race is the player's
            assert not (await again.expect(p.SeekCancelled)).cancelled
            player = await Client.connect(live)  # type: ignore[arg-type]
            assert (await player.hello(answer.race, token=answer.token)).seat == answer.seat
            await player.send(p.Ready())
            joined.append((again, player))
        for again, player in joined:
            await player.expect(p.Countdown, timeout=DEADLINE)
            assert await asyncio.wait_for(again.closed(), DEADLINE) == 1000  # the seek is over
        for c in (ann, bob, cy, dee, ann2, bob2, *(c for pair in joined for c in pair)):
            await c.close()


async def test_a_placed_seeker_whose_connection_closed_takes_its_seek_over_at_once(backend: Backend,
                                                                                    tmp_path: Any) -> None:
    """The process lives, the seek connection closed after ``matched``: the player's next ``seek`` with
    its key is answered with that ``matched`` at once (not ``already_seeking`` until the join deadline).
    Someone who sends only the same name is refused meanwhile, and never sees that seat's token."""
    async with two_processes(backend, 30.0, tmp_path) as (one, two):
        ann_key = await register(two, "Ann")
        ann, _ = await seek(one, key=ann_key, time_limit=60)
        bob, _ = await seek(two, name="bob", time_limit=60)
        first = await matched(ann)
        bob_first = await matched(bob)
        await ann.close()
        again, answer = await seek_again(two, key=ann_key, time_limit=60)
        assert answer == first, answer
        await bob.close()
        thief = await Client.connect(two)  # type: ignore[arg-type]
        await thief.send(p.Seek(name="bob", time_limit=60))
        refused = await thief.recv()
        assert isinstance(refused, p.Error) and refused.code == "already_seeking", refused
        assert bob_first.token not in repr(refused)
        for c in (again, thief):
            await c.close()


async def test_a_lock_a_dead_process_left_does_not_keep_its_player_out(backend: Backend, tmp_path: Any) -> None:
    """A process killed between a seek's end and the release of its player's lock (a wave settling or
    dropping it, or a cancel) leaves a lock naming a seek that is in no pool. The player's next ``seek``
    takes the lock back once it is older than a seek takes to enter its pool (a younger one may be
    another connection's seek on its way in: refused)."""
    lock = seeker_key(f"n:{name_key('ann')}")
    async with two_processes(backend, 30.0, tmp_path) as (one, _):
        backend.redis.set(lock, "forty-thieves/2/60/casual 0123456789abcdef", px=LOCK_MS)  # just taken
        client = await Client.connect(one)  # type: ignore[arg-type]
        await client.send(p.Seek(name="ann", time_limit=60))
        assert (await client.error()).code == "already_seeking"
        backend.redis.set(lock, "forty-thieves/2/60/casual 0123456789abcdef", px=LOCK_MS - ALIVE_MS - 1000)
        await client.send(p.Seek(name="ann", time_limit=60))
        seeking = await client.expect(p.Seeking)
        assert seeking.seek != "0123456789abcdef" and seeking.waiting == 1
        await client.send(p.SeekCancel())
        assert (await client.expect(p.SeekCancelled)).cancelled
        await client.close()


# ------------------------------------------------------------------ requeued
async def test_requeued_is_always_told_before_the_next_matched(backend: Backend, tmp_path: Any) -> None:
    """In two pools, a player comes to its race and its partner does not; a third seeker waits alone, so
    the wave that puts the player back places it again at once. The player's seek connection hears
    ``seeking {requeued: true}`` between its two ``matched``, every time."""
    async with two_processes(backend, 2.0, tmp_path) as servers:
        async def scenario(limit: int) -> list[Any]:
            ann, _ = await seek(servers[0], name=f"ann{limit}", time_limit=limit)
            bob, _ = await seek(servers[1], name=f"bob{limit}", time_limit=limit)
            first = await matched(ann)
            await matched(bob)
            carl, _ = await seek(servers[1], name=f"carl{limit}", time_limit=limit)  # waits alone
            player = await Client.connect(servers[1])  # type: ignore[arg-type]
            await player.hello(first.race, token=first.token)
            await player.send(p.Ready())  # bob never comes
            frames = await frames_until(ann, p.Matched)
            second = await matched(carl)
            assert frames[-1].race == second.race != first.race
            for c in (ann, bob, carl, player):
                await c.close()
            return frames

        for frames in await asyncio.gather(scenario(60), scenario(90)):
            told = [f for f in frames if isinstance(f, p.Seeking) and f.requeued]
            assert len(told) == 1, frames
