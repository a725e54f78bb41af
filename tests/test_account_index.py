"""The account names' look index is rebuilt at a start only when it was not built by this process's look
version (server/store/accounts.py): on one Redis and on a Redis Cluster, with the real store.

The end-to-end case (an account made before the index is indexed when a server starts) is
tests/test_edge_input.py's ``test_accounts_made_before_the_index_are_indexed_at_start``.
"""

from __future__ import annotations

from typing import Any, AsyncIterator

import pytest

from cluster_util import LocalCluster
from server.store import accounts
from server.store.accounts import AccountStore
from server.store.client import redis_client
from server.store.keys import NAMES_INDEXED, name_index_key
from server.store.limits import Bucket
from shared.names import LOOK_VERSION, name_key

CAROL = name_index_key(name_key("Carol"))


@pytest.fixture(params=["one Redis", "cluster"])
async def redis(request: pytest.FixtureRequest) -> AsyncIterator[Any]:
    if request.param == "cluster":
        cluster: LocalCluster = request.getfixturevalue("cluster")  # (the module's: emptied here)
        client = redis_client(cluster.url, cluster=True)
        await client.flushall(target_nodes=client.PRIMARIES)
    else:
        client = redis_client(request.getfixturevalue("redis_url"))
    try:
        yield client
    finally:
        await client.aclose()


async def _old_account(redis: Any, name: str) -> None:
    """An account as one made before the index (or under another look) is stored: no index key of its look."""
    await redis.hset(f"account:{{{name.casefold()}}}", mapping={"name": name, "key_hash": "0" * 64, "created_at": 1})


async def test_a_start_indexes_once_then_trusts_its_own_mark(redis: Any) -> None:
    store = AccountStore(redis)
    await _old_account(redis, "Carol")
    assert await store.reindex() == 1
    assert await redis.get(CAROL) == b"carol"
    assert await redis.get(NAMES_INDEXED) == LOOK_VERSION.encode()

    # The next start finds its own mark and reads nothing: an account that lacks its index now (only one
    # written around the store could) stays without it.
    await _old_account(redis, "Dave")
    assert await store.reindex() == 0
    assert await redis.get(name_index_key(name_key("Dave"))) is None

    # A mark of another look version (a new ICU, a changed name_key) has the whole index read again.
    await redis.set(NAMES_INDEXED, "icu 1.0, unicode 1.0/1.0, key 0")
    assert await store.reindex() == 1
    assert await redis.get(name_index_key(name_key("Dave"))) == b"dave"
    assert await redis.get(NAMES_INDEXED) == LOOK_VERSION.encode()


async def test_a_registration_under_another_look_version_has_the_next_start_reindex(redis: Any) -> None:
    store = AccountStore(redis)
    limit = Bucket(redis, burst=10, interval_ms=1000)
    assert await store.reindex() == 0  # nothing to index; the mark is set
    await store.create("Erin", "1" * 64, "127.0.0.1", limit)
    assert await redis.get(NAMES_INDEXED) == LOOK_VERSION.encode()  # the same version: kept

    # A process of another version built the index (a rolling upgrade): a registration here, whose look
    # that index may not have, clears the mark.
    await redis.set(NAMES_INDEXED, "icu 99.0, unicode 99.0/99.0, key 9")
    await store.create("Finn", "2" * 64, "127.0.0.1", limit)
    assert await redis.get(NAMES_INDEXED) is None
    await redis.delete(name_index_key(name_key("Finn")))  # as the other look would lack it
    assert await store.reindex() == 1
    assert await redis.get(name_index_key(name_key("Finn"))) == b"finn"


@pytest.mark.parametrize("registering_version, marked", [("icu 99.0, unicode 99.0/99.0, key 9", False),
                                                         (LOOK_VERSION, True)])
async def test_a_registration_during_the_scan_under_another_look_version_leaves_the_index_unmarked(
        redis: Any, monkeypatch: pytest.MonkeyPatch, registering_version: str, marked: bool) -> None:
    """A process of another look version registers while this one scans (a rolling upgrade): the scan may
    have passed that account's key, so the index is left unmarked and the next start scans again. A
    registration by a process of this very version indexes its own look: the scan still marks."""
    store = AccountStore(redis)
    limit = Bucket(redis, burst=10, interval_ms=1000)
    await _old_account(redis, "Carol")
    index = store._index

    async def index_while_another_process_registers(mains: list[str]) -> int:
        added = await index(mains)
        with monkeypatch.context() as other_process:
            other_process.setattr(accounts, "LOOK_VERSION", registering_version)
            await store.create("Gwen", "3" * 64, "127.0.0.1", limit)
        return added

    monkeypatch.setattr(store, "_index", index_while_another_process_registers)
    assert await store.reindex() == 1
    assert await redis.get(CAROL) == b"carol"
    assert await redis.get(NAMES_INDEXED) == (LOOK_VERSION.encode() if marked else None)
