"""The local Redis Cluster helper really forms a cluster, and hash tags decide what a script may touch.

These are the two facts the server's cluster support rests on: keys with one
hash tag (``race:{ID}:...``) share a slot, so one Lua script may write them
all; keys of two tags land in different slots and the same script is
refused with CROSSSLOT.
"""

from __future__ import annotations

from typing import AsyncIterator, Iterator

import pytest
import redis
import redis.asyncio as aioredis
from redis.exceptions import ClusterCrossSlotError

from cluster_util import LocalCluster

# Writes every key it is given and returns how many it wrote: a stand-in for
# the server's commit scripts, which touch several keys of one race at once.
SET_ALL = """
for i, key in ipairs(KEYS) do redis.call('SET', key, ARGV[1]) end
return #KEYS
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    with LocalCluster(base_dir=tmp_path_factory.mktemp("cluster")) as running:
        yield running


@pytest.fixture
async def rc(cluster: LocalCluster) -> AsyncIterator[aioredis.RedisCluster]:
    client = aioredis.RedisCluster.from_url(cluster.url)
    await client.flushall(target_nodes=aioredis.RedisCluster.PRIMARIES)
    try:
        yield client
    finally:
        await client.aclose()


def test_three_masters_cover_every_slot(cluster: LocalCluster) -> None:
    assert len(cluster.urls) == 3
    for port in cluster.ports:
        with redis.Redis(port=port) as node:
            info = node.execute_command("CLUSTER INFO")
            assert info["cluster_state"] == "ok"
            assert int(info["cluster_slots_assigned"]) == 16384
            assert int(info["cluster_known_nodes"]) == 3
            assert int(info["cluster_size"]) == 3


async def test_one_hash_tag_one_script(rc: aioredis.RedisCluster) -> None:
    keys = ["race:{abc}", "race:{abc}:p:0", "race:{abc}:log:0", "race:{abc}:events"]
    slots = {rc.keyslot(k) for k in keys}
    assert len(slots) == 1
    script = rc.register_script(SET_ALL)
    assert await script(keys=keys, args=["v1"]) == len(keys)
    for key in keys:
        assert await rc.get(key) == b"v1"


async def test_two_hash_tags_cross_slot(rc: aioredis.RedisCluster) -> None:
    keys = ["race:{abc}", "race:{xyz}"]
    assert rc.keyslot(keys[0]) != rc.keyslot(keys[1])
    # redis-py refuses before sending (the next test shows the node's own CROSSSLOT).
    with pytest.raises(redis.exceptions.RedisClusterException, match="same key slot"):
        await rc.eval(SET_ALL, len(keys), *keys, "v1")
    assert await rc.get(keys[0]) is None and await rc.get(keys[1]) is None


async def test_the_node_itself_refuses_cross_slot(rc: aioredis.RedisCluster) -> None:
    """Straight to the node owning the first key, past the client's check: Redis's CROSSSLOT, nothing written."""
    keys = ["race:{abc}", "race:{xyz}"]
    owner = rc.get_node_from_key(keys[0])
    with redis.Redis(host=owner.host, port=owner.port) as direct:
        # redis-py turns the reply "-CROSSSLOT Keys in request don't hash..." into this class.
        with pytest.raises(ClusterCrossSlotError, match="same slot"):
            direct.eval(SET_ALL, len(keys), *keys, "v1")
        assert direct.exists(keys[0]) == 0
