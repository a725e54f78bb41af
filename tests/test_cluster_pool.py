"""A Redis Cluster client with a deliberately tiny pool, on a real local 3-master cluster
(tests/cluster_util.py): commands and script calls far beyond the pool wait for a connection
(server/store/client.py, WaitingCluster) instead of failing with redis-py's MaxConnectionsError, a
wait that runs out ends as ``unavailable``, and a burst of races ending at the same instant on two
processes all end, once each (server/race/service.py, ENDS_AT_ONCE).
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import AsyncIterator

import pytest
from cluster_util import LocalCluster
from redis_util import TEST_CONFIG, eventually

from server.race import rules as races
from server.race.clock import now_ms
from server.race.hub import HubParts, RaceHub
from server.race.service import Service
from server.store import UNAVAILABLE, RaceMeta, Store, redis_client
from server.store.client import WaitingCluster
from shared import protocol as p
from shared.variants import get_variant

POOL = 3
"""Connections a client here may open to each node: two commands in flight (one is the pub/sub's)."""
RACES = 60
"""Races made at once: tens of times what the pool holds."""
HOME0 = get_variant("forty-thieves").home_at_start


@pytest.fixture
async def tiny() -> AsyncIterator[list[WaitingCluster]]:
    """The tiny-pool clients a test makes, closed after it."""
    made: list[WaitingCluster] = []
    yield made
    for client in made:
        await client.aclose()


def tiny_client(cluster: LocalCluster, made: list[WaitingCluster], url: int = 0, pool_size: int = POOL,
                pool_wait: float = 5.0) -> WaitingCluster:
    client = redis_client(cluster.urls[url], cluster=True, pool_size=pool_size, pool_wait=pool_wait)
    assert isinstance(client, WaitingCluster)
    made.append(client)
    return client


async def seated_races(store: Store, count: int, time_limit: int = 60) -> list[str]:
    """``count`` lobbies of two seats, one taken in each, made all at once (script calls concurrently)."""
    now = now_ms()
    metas = [races.new_race(p.Create(seats=2, time_limit=time_limit, deal_source="number", deal=i + 1), now, None)
             for i in range(count)]
    assert all(await asyncio.gather(*(store.create_race(meta) for meta in metas)))
    seated = await asyncio.gather(*(store.join(meta.id, "ann", HOME0, "test.1", now + 60_000, now) for meta in metas))
    assert [s.seat for s in seated] == [0] * count
    await asyncio.gather(*(store.welcomed(meta.id, 0, 0) for meta in metas))  # (a start gives back unanswered seats)
    return [meta.id for meta in metas]


async def test_far_more_concurrent_commands_than_the_pool_holds_all_complete(empty_cluster: LocalCluster,
                                                                          tiny: list[WaitingCluster]) -> None:
    client = tiny_client(empty_cluster, tiny)
    store = Store(client)
    ids = await seated_races(store, RACES)  # 120 script calls, 60 at a time, for 2 connections a node
    assert len({client.keyslot(f"race:{{{race}}}") for race in ids}) > 30, "spread over the nodes"

    # Pipelines (one per node each), plain commands and script calls, all at once.
    reads = [store.metas(ids[i:i + 10]) for i in range(0, RACES, 10)]
    singles = [store.meta(race) for race in ids]
    players = [store.player(race, 0) for race in ids]
    got = await asyncio.gather(*reads, *singles, *players)
    by_pipeline = [meta for batch in got[:len(reads)] for meta in batch]
    for meta, race in zip([*by_pipeline, *got[len(reads):len(reads) + RACES]], [*ids, *ids]):
        assert isinstance(meta, RaceMeta) and meta.id == race and meta.players == 1
    assert all(pl is not None and pl.name == "ann" for pl in got[len(reads) + RACES:])
    assert all(len(node._connections) <= POOL for node in client.get_nodes())  # (what redis-py counts)


async def test_a_wait_for_a_connection_that_runs_out_is_unavailable(empty_cluster: LocalCluster,
                                                                   tiny: list[WaitingCluster]) -> None:
    client = tiny_client(empty_cluster, tiny, pool_size=2, pool_wait=0.2)  # one command in flight
    await client.ping()  # (the slots learnt: the BLPOP below waits on the cluster, not on the first refresh)
    blocked = asyncio.create_task(client.blpop(["{wait}nothing"], timeout=3))  # holds the one connection
    waiting = asyncio.create_task(client.get("{wait}other"))  # (scheduled after it: it finds none free)
    with pytest.raises(UNAVAILABLE):
        await waiting
    assert not blocked.done(), "it gave up at its own deadline, not when the connection came back"
    assert await blocked is None
    assert await client.set("{wait}other", b"x") and await client.get("{wait}other") == b"x"  # the turn came back
    # A command over many slots, which redis-py's execute_command sends as a pipeline of its own, runs in
    # the command's one turn (waiting for a second, with one in all, would run out). (Its exists() method
    # splits the keys before: only the raw command goes through the command.)
    keys = [f"{{wait{i}}}key" for i in range(12)]
    assert len({client.keyslot(key) for key in keys}) == len(keys)
    await asyncio.gather(*(client.set(key, b"1") for key in keys))
    assert await client.execute_command("EXISTS", *keys) == len(keys)


async def test_many_races_ending_at_once_on_two_processes_all_end_once(empty_cluster: LocalCluster,
                                                                      tiny: list[WaitingCluster]) -> None:
    """The end timers of every hub fire at the same instant, in both processes (each serves every race),
    as a round's heats do; every race ends, its results stored, with one end event each."""
    config = replace(TEST_CONFIG, redis_cluster=True)
    services = [Service(config, tiny_client(empty_cluster, tiny, url=i)) for i in range(2)]
    store = services[0].store
    ids = await seated_races(store, RACES, time_limit=1)
    now = now_ms()
    await asyncio.gather(*(store.start(race, now, 0) for race in ids))  # one instant: one ends_at for all
    metas = await store.metas(ids)
    assert len({meta.ends_at for meta in metas if meta is not None}) == 1
    parts = [HubParts(service.store, service.ticker, service.metrics.sent, service.end_race, service.config.lobby_ttl,
                      service.racer_interval) for service in services]
    hubs = [RaceHub(meta.id, part) for part in parts for meta in metas if meta is not None]
    try:
        for hub, meta in zip(hubs, [*metas, *metas]):
            assert meta is not None
            hub.set_meta(meta)  # arms its end timer, as a hub does on its first meta

        async def all_ended() -> bool:
            return all(meta is not None and meta.status == "finished" for meta in await store.metas(ids))

        await eventually(all_ended, f"all {RACES} races to end")
        for race in ids:
            assert await store.results(race) is not None
            events = await store.history(race, 0, 1 << 30)
            assert events is not None and [e.kind for e in events].count("end") == 1
    finally:
        for hub in hubs:
            hub.close()
