"""Replica acknowledgements on a real local Redis Cluster (tests/cluster_util.py: masters, no replicas).

What a cluster adds: the WAIT must reach the race's own master, on the connection the write's replies
came back on or after it, never another node. With ``on`` and no replicas every move is unconfirmed,
so it is answered ``unavailable`` and the WAIT shows in the race's master's command counts (only
there); ``auto`` finds no replica on any master and sends none.
"""

from __future__ import annotations

import json
from pathlib import Path

import redis
from cluster_util import LocalCluster
from redis_util import Client, LiveServer, create_race, live_server, start_race

from server.store import Keys
from shared import protocol as p

WIN = json.loads((Path(__file__).parent / "data" / "race_win_line.json").read_text())


def waits_by_node(cluster: LocalCluster) -> dict[str, int]:
    """WAIT calls each node ran (``INFO commandstats``), by its URL."""
    out = {}
    for url in cluster.urls:
        with redis.Redis.from_url(url) as node:
            out[url] = int(node.info("commandstats").get("cmdstat_wait", {}).get("calls", 0))
    return out


def owner(cluster: LocalCluster, key: str) -> str:
    """The URL of the node that holds ``key``'s slot."""
    with redis.RedisCluster.from_url(cluster.url) as client:
        node = client.get_node_from_key(key)
        return next(url for url in cluster.urls if url.endswith(f":{node.port}/0") or url.endswith(f":{node.port}"))


async def one_racer(server: LiveServer) -> tuple[str, Client]:
    created = await create_race(server, seats=1, deal_source="number", deal=WIN["deal"])
    ann = await Client.connect(server)
    await ann.hello(created.race.id, "ann")
    await start_race(server, created.creator_token, [ann])
    return created.race.id, ann


async def test_on_without_replicas_joins_and_moves_are_unavailable_and_wait_on_the_races_master(
        empty_cluster: LocalCluster) -> None:
    async with live_server(empty_cluster.urls[0], redis_cluster=True, replica_acks="on",
                           replica_ack_timeout=50) as server:
        created = await create_race(server, seats=2, deal_source="number", deal=WIN["deal"])
        home = owner(empty_cluster, Keys(created.race.id).meta)
        before = waits_by_node(empty_cluster)
        late = await Client.connect(server)
        await late.send(p.Hello(protocol=p.PROTOCOL_VERSION, race=created.race.id, name="bob"))
        assert (await late.error()).code == "unavailable"
        assert waits_by_node(empty_cluster)[home] > before[home]

        server.service.store.replicas.active = False  # as auto does while no replica exists: ann joins
        race, ann = await one_racer(server)
        server.service.store.replicas.active = True  # and as it does once one appears
        before = waits_by_node(empty_cluster)
        refused = await ann.move(WIN["moves"][0])
        assert isinstance(refused, p.Reject) and refused.reason == "unavailable", refused
        again = await ann.move(WIN["moves"][0], seq=refused.seq)  # stored, unconfirmed: not acknowledged
        assert isinstance(again, p.Reject) and again.reason == "unavailable", again
        after = waits_by_node(empty_cluster)
    home = owner(empty_cluster, Keys(race).meta)
    assert after[home] - before[home] >= 2, (home, before, after)
    assert all(after[url] == before[url] for url in empty_cluster.urls if url != home), (home, before, after)


async def test_auto_on_a_cluster_without_replicas_sends_no_wait(empty_cluster: LocalCluster) -> None:
    before = waits_by_node(empty_cluster)
    async with live_server(empty_cluster.urls[0], redis_cluster=True) as server:
        assert not server.service.store.replicas.active
        _, ann = await one_racer(server)
        for text in WIN["moves"][:3]:
            assert isinstance(await ann.move(text), p.Ack)
    assert waits_by_node(empty_cluster) == before
