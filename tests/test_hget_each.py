"""One field of many hashes in one round trip (server/store/client.py ``hget_each``): the catch-up's race
versions, the heartbeat's key hashes. On a single Redis one script call reads them all; on a cluster,
whose keys live in many slots, a pipeline. Real Redis servers, both kinds."""

from __future__ import annotations

from cluster_util import LocalCluster

from server.store import redis_client
from server.store.client import RedisClient, hget_each

KEYS = [f"account:{{hget{i}}}" for i in range(40)]
"""Forty hashes, each in a slot of its own name (spread over every master of a cluster)."""


async def _fields_in_order(client: RedisClient) -> None:
    await client.hset(KEYS[0], mapping={"key_hash": "a0", "name": "Ann"})
    for i, key in enumerate(KEYS[1:-1], 1):
        await client.hset(key, "key_hash", f"a{i}")
    # The last hash does not exist; the first has other fields too.
    expected = [f"a{i}".encode() for i in range(len(KEYS) - 1)] + [None]
    assert await hget_each(client, KEYS, "key_hash") == expected
    assert await hget_each(client, KEYS[:1], "name") == [b"Ann"]
    assert await hget_each(client, [], "name") == []


async def test_each_hashs_field_in_order_on_one_redis_and_after_redis_forgot_its_scripts(redis_url: str) -> None:
    client = redis_client(redis_url)
    try:
        await client.delete(*KEYS)
        await _fields_in_order(client)
        await client.script_flush()  # a restarted Redis has no script: the call loads it again
        assert (await hget_each(client, KEYS[:2], "key_hash")) == [b"a0", b"a1"]
    finally:
        await client.delete(*KEYS)
        await client.aclose()


async def test_each_hashs_field_in_order_on_a_cluster(empty_cluster: LocalCluster) -> None:
    client = redis_client(empty_cluster.url, cluster=True)
    try:
        await _fields_in_order(client)
    finally:
        await client.aclose()
