"""The connection to Redis: one client per process (a pool, or a cluster), with redis-py's own retry.

The rest of the server never names redis-py: it gets a client from
:func:`redis_client` and catches :data:`UNAVAILABLE`.
"""

from __future__ import annotations

from typing import Union

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialWithJitterBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

RedisClient = Union[aioredis.Redis, aioredis.RedisCluster]

UNAVAILABLE: tuple[type[Exception], ...] = (RedisError, OSError)
"""What a Redis that does not answer (or answers with an error) raises: the server answers ``unavailable``."""

POOL_SIZE = 64
"""Redis connections a process may open (ops/limits.py keeps that many descriptors spare)."""

REDIS_RETRIES = 5
"""How many times a command that met a dead or broken connection is sent again (reconnecting first)."""
REDIS_BACKOFF = ExponentialWithJitterBackoff(base=0.025, cap=0.25)
"""Waits between those tries: random up to 0.05, 0.1, 0.2, 0.25, 0.25 s (under 0.9 s in all, about
half that on average). Long enough for a blip or a quick restart; short, because the frames of one
connection are handled in turn, so during a real outage each queued frame waits this long for its
``unavailable``."""


def redis_retry() -> Retry:
    """redis-py's own retry policy for every command, pooled connection and pub/sub read.

    Why: when Redis restarts, every pooled connection is dead, and without a
    retry the first command on each fails even though Redis already answers
    again (``/health`` fine, the next ``hello`` ``unavailable``). With it a
    command that meets a dead connection reconnects and is sent again, with
    jittered backoff that rides out a blip; only a
    longer outage reaches the player as ``unavailable``. Sending a script
    again is safe: each checks its preconditions before its first write
    (a move already applied answers ``dup``, a join by the same connection
    finds its own seat).
    """
    return Retry(REDIS_BACKOFF, REDIS_RETRIES, supported_errors=(RedisConnectionError, RedisTimeoutError))


def redis_client(redis_url: str, cluster: bool = False, retry: bool = True) -> RedisClient:
    """A bytes client for the race store: one Redis, or a Redis Cluster found from one node.

    ``retry=False`` answers at once (the start-up wait logs each of its own tries).
    """
    policy = redis_retry() if retry else Retry(REDIS_BACKOFF, 0)
    if cluster:
        return aioredis.RedisCluster.from_url(redis_url, socket_timeout=5, socket_connect_timeout=5,
                                              max_connections=POOL_SIZE, retry=policy)
    # A blocking pool: under load a request waits for a free connection instead of failing.
    # health_check_interval: a connection idle that long is PINGed (and replaced) before use.
    pool = aioredis.BlockingConnectionPool.from_url(
        redis_url, max_connections=POOL_SIZE, timeout=5, socket_timeout=5, socket_connect_timeout=5,
        health_check_interval=10, retry=policy,
        retry_on_error=[RedisConnectionError, RedisTimeoutError],
    )
    return aioredis.Redis(connection_pool=pool)


async def hget_each(redis: RedisClient, keys: list[str], name: str) -> list[bytes | None]:
    """Field ``name`` of each hash in ``keys`` (None where absent), in one round trip: a pipeline
    rather than a script, since on a cluster the keys live in many slots."""
    if not keys:
        return []
    async with redis.pipeline(transaction=False) as pipe:
        for key in keys:
            pipe.hget(key, name)
        return list(await pipe.execute())
