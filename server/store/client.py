"""The connection to Redis: one client per process (a pool, or a cluster), with redis-py's own retry.

The rest of the server never names redis-py: it gets a client from
:func:`redis_client` and catches :data:`UNAVAILABLE`.
"""

from __future__ import annotations

import asyncio
import hashlib
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, AsyncIterator, Union

import redis.asyncio as aioredis
from redis.asyncio.cluster import ClusterNode, ClusterPipeline
from redis.asyncio.connection import SSLConnection, parse_url
from redis.asyncio.retry import Retry
from redis.asyncio.sentinel import Sentinel, SentinelConnectionPool, SentinelManagedConnection
from redis.backoff import ExponentialWithJitterBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError
from redis.exceptions import RedisClusterException, RedisClusterUnreachableError, RedisError, SlotNotCoveredError
from redis.exceptions import TimeoutError as RedisTimeoutError

from ..ops.limits import POOL_SIZE
from .scripts import source

RedisClient = Union[aioredis.Redis, aioredis.RedisCluster]

UNAVAILABLE: tuple[type[Exception], ...] = (RedisError, OSError, RedisClusterUnreachableError, SlotNotCoveredError)
"""What a Redis that does not answer (or answers with an error) raises: the server answers ``unavailable``.
(A cluster none of whose known nodes answers, or whose slots a failover has not yet given back, raises
redis-py's cluster errors, which are no ``RedisError``.)"""

NOT_READY: tuple[type[Exception], ...] = (*UNAVAILABLE, RedisClusterException)
"""What a Redis not ready at start raises: also a cluster that does not cover all its slots yet (a plain
``RedisClusterException``, which later means a bug, such as keys of two slots in one script)."""

POOL_WAIT = 5.0
"""How long a command waits for a free pooled connection before it fails as unavailable."""
PUBSUB_HELD = 1
"""Connections of a node's pool a cluster client holds outside its commands: the pub/sub one."""

REDIS_RETRIES = 5
"""How many times a command that met a dead or broken connection is sent again (reconnecting first)."""
REDIS_BACKOFF = ExponentialWithJitterBackoff(base=0.025, cap=0.25)
"""Waits between those tries: random up to 0.05, 0.1, 0.2, 0.25, 0.25 s (under 0.9 s in all, about
half that on average). Long enough for a blip or a quick restart; short, because the frames of one
connection are handled in turn, so during a real outage each queued frame waits this long for its
``unavailable``."""


def outage_backoff() -> ExponentialWithJitterBackoff:
    """Waits between the tries of work that must be done once Redis is back (a race's end): random up to
    0.25, 0.5, 1, 2 s, then 2 s. Why capped so low: the work is one small call, and a race must not
    outlive its end by more than a few seconds after an outage; why jittered: every process of a
    deployment retries its own after the same outage."""
    return ExponentialWithJitterBackoff(base=0.125, cap=2.0)


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


_holding: ContextVar[bool] = ContextVar("holding_a_cluster_turn", default=False)
"""Set while a task runs a command under one of :class:`WaitingCluster`'s turns, and in the tasks
redis-py starts for it: a command redis-py sends from inside another (a multi-slot command's
pipeline, a pipeline's retry of one command) uses its caller's turn instead of waiting for a second."""


class WaitingCluster(aioredis.RedisCluster):
    """A cluster client whose commands and pipelines wait for a free connection instead of failing.

    Why: redis-py's async cluster client raises ``MaxConnectionsError`` ("Too many connections")
    the moment a node's pool is exhausted (``ClusterNode.acquire_connection`` in redis 8.2; it has
    no waiting mode), where the single Redis's BlockingConnectionPool waits. When a round's hundreds
    of heats ended at once, their end-of-race calls went past the pool and the event never finished.
    Here each command and each pipeline first takes one of ``turns`` (a FIFO semaphore; at most
    :data:`POOL_WAIT`, then a ``ConnectionError``, which the server answers ``unavailable`` like a
    Redis outage). A command, or a pipeline, holds at most one connection of each node at a time, so
    with ``turns`` no more than a node's pool less the pub/sub connection, no node's pool runs out.
    One semaphore for the client rather than one a node: the node is only known deep inside
    redis-py, after routing and redirections; a process keeps ``turns`` commands in flight in all,
    as it does on one Redis.
    """

    __slots__ = ("_turns", "_turn_wait")

    def __init__(self, *args: Any, turns: int, turn_wait: float = POOL_WAIT, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._turns = asyncio.Semaphore(turns)
        self._turn_wait = turn_wait

    @asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        """Hold one of the client's turns (the caller's, if it holds one already)."""
        if _holding.get():
            yield
            return
        if not self._turns.locked():
            await self._turns.acquire()  # (free: returns at once, no timer needed)
        else:
            try:
                async with asyncio.timeout(self._turn_wait):
                    await self._turns.acquire()
            except TimeoutError:
                raise RedisConnectionError(f"no Redis connection free within {self._turn_wait:g} s") from None
        held = _holding.set(True)
        try:
            yield
        finally:
            _holding.reset(held)
            self._turns.release()

    async def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        async with self.turn():
            return await super().execute_command(*args, **kwargs)

    def pipeline(self, transaction: Any = None, shard_hint: Any = None) -> ClusterPipeline:
        if shard_hint:
            return super().pipeline(transaction, shard_hint)  # (redis-py refuses it)
        # redis-py declares _event_dispatcher abstract on its client bases and sets it in __init__ (its own
        # pipeline() builds ClusterPipeline the same way)
        return _WaitingPipeline(self, transaction)  # type: ignore[abstract]


class _WaitingPipeline(ClusterPipeline):
    """A pipeline of a :class:`WaitingCluster`: sent under one of its turns."""

    __slots__ = ()

    async def execute(self, raise_on_error: bool = True, allow_redirections: bool = True) -> list[Any]:
        client = self.cluster_client
        assert isinstance(client, WaitingCluster)
        async with client.turn():
            return await super().execute(raise_on_error, allow_redirections)


@dataclass(frozen=True)
class RedisTarget:
    """Where the store's Redis is: one Redis (one URL), a Redis Cluster (any of its nodes' URLs), or one
    Redis with replicas whose master ``sentinels`` find by its ``master`` name.

    Why a value of its own rather than a URL: neither a cluster found through any of several nodes nor a
    master that Sentinel finds (again after each failover) is one address.
    """

    urls: tuple[str, ...] = ()
    cluster: bool = False
    sentinels: tuple[tuple[str, int], ...] = ()
    master: str = ""

    @classmethod
    def of(cls, target: "str | RedisTarget", cluster: bool = False) -> "RedisTarget":
        """``target`` itself, or the target of a URL (a cluster's nodes comma-separated)."""
        if isinstance(target, RedisTarget):
            return target
        return cls(tuple(url.strip() for url in target.split(",") if url.strip()), cluster)

    @property
    def where(self) -> str:
        """Where, for a log line (no password)."""
        if self.sentinels:
            return f"{self.master} via Sentinel " + ",".join(f"{host}:{port}" for host, port in self.sentinels)
        return ",".join(url.split("@")[-1] for url in self.urls)


class SentinelBlockingPool(SentinelConnectionPool, aioredis.BlockingConnectionPool):
    """redis-py's Sentinel pool (each new connection asks the Sentinels where the master is now), waiting
    for a free connection under load as the single Redis's pool does, instead of failing at once."""


class MasterConnection(SentinelManagedConnection):
    """A connection to the master Sentinel names, which asks again however it reconnects.

    Why: redis-py's Sentinel connection asks the Sentinels where the master is only in ``connect()``
    (what its pool calls); a connection written to while closed (``send_packed_command``, as the move
    batcher's own connections are after a failure) reconnects to the address it had, which after a
    failover is the dead or demoted master: every round trip of moves failed until a restart.
    """

    _asked = False
    """Set while ``connect_to`` connects to the address just asked for (no second question)."""

    async def connect_to(self, address: Any) -> None:
        self._asked = True
        try:
            await super().connect_to(address)  # type: ignore[no-untyped-call]
        finally:
            self._asked = False

    async def connect_check_health(self, check_health: bool = True, retry_socket_connect: bool = True) -> None:
        if not self.is_connected and not self._asked and self.connection_pool.is_master:
            self.host, self.port = await self.connection_pool.get_master_address()
        await super().connect_check_health(check_health=check_health, retry_socket_connect=retry_socket_connect)


class SentinelMaster(aioredis.Redis):
    """The master's client, which closes its connections to the Sentinels too when it is closed (redis-py
    leaves them to the garbage collector)."""

    async def aclose(self, close_connection_pool: bool | None = None) -> None:
        await super().aclose(close_connection_pool)
        pool = self.connection_pool
        if isinstance(pool, SentinelConnectionPool):
            for sentinel in pool.sentinel_manager.sentinels:
                await sentinel.aclose()


_COMMON: dict[str, Any] = {"socket_timeout": 5, "socket_connect_timeout": 5}
"""Connection settings of every client: a Redis that stops answering fails a command in 5 s."""


def redis_client(target: "str | RedisTarget", cluster: bool = False, retry: bool = True,
                 pool_size: int = POOL_SIZE, pool_wait: float = POOL_WAIT) -> RedisClient:
    """A bytes client for the race store: one Redis, a Redis Cluster found from any of its start nodes, or
    the master of one Redis that Sentinel finds (a string target: a URL, ``cluster`` as it says).

    ``retry=False`` answers at once (the start-up wait logs each of its own tries). ``pool_size``:
    the connections it may open (to each node of a cluster); under load a command waits up to
    ``pool_wait`` seconds for one of them, then fails as unavailable.
    """
    where = RedisTarget.of(target, cluster)
    policy = redis_retry() if retry else Retry(REDIS_BACKOFF, 0)
    if where.cluster:
        if pool_size <= PUBSUB_HELD:
            raise ValueError(f"a cluster client needs a pool of more than {PUBSUB_HELD} connections")
        # The first URL's settings (password, TLS ...) for every node; each URL a start node: the client
        # learns the cluster from the first that answers (redis-py's startup_nodes).
        # (as RedisCluster.from_url reads a URL)
        options = {k: v for k, v in parse_url(where.urls[0]).items() if k not in ("host", "port")}
        if options.pop("connection_class", None) is SSLConnection:
            options["ssl"] = True
        nodes = [_node(url) for url in where.urls]
        return WaitingCluster(startup_nodes=nodes, **options, **_COMMON, max_connections=pool_size,
                              retry=policy, turns=pool_size - PUBSUB_HELD, turn_wait=pool_wait)
    # A blocking pool: under load a request waits for a free connection instead of failing.
    # health_check_interval: a connection idle that long is PINGed (and replaced) before use.
    pooled: dict[str, Any] = {"max_connections": pool_size, "timeout": pool_wait, **_COMMON,
                              "health_check_interval": 10, "retry": policy,
                              "retry_on_error": [RedisConnectionError, RedisTimeoutError]}
    if where.sentinels:
        # redis-py's own Sentinel client: a connection (pooled or pub/sub) that meets a dead or demoted
        # master reconnects to the master the Sentinels name now, so a failover needs no restart.
        sentinel = Sentinel(list(where.sentinels), sentinel_kwargs=dict(_COMMON))
        master: aioredis.Redis = sentinel.master_for(where.master, redis_class=SentinelMaster,
                                                     connection_pool_class=SentinelBlockingPool,
                                                     connection_class=MasterConnection, **pooled)
        return master
    pool = aioredis.BlockingConnectionPool.from_url(where.urls[0], **pooled)
    return aioredis.Redis(connection_pool=pool)


def _node(url: str) -> ClusterNode:
    """A cluster start node of a ``redis://host:port`` URL."""
    parts = parse_url(url)
    return ClusterNode(str(parts.get("host", "localhost")), int(str(parts.get("port", 6379))))


_HGET_EACH = source("hget_each")
_HGET_EACH_SHA = hashlib.sha1(_HGET_EACH.encode()).hexdigest()


async def hget_each(redis: RedisClient, keys: list[str], name: str) -> list[bytes | None]:
    """Field ``name`` of each hash in ``keys`` (None where absent), in one round trip.

    On a single Redis one script call reads them all (scripts/hget_each.lua); on a cluster, where the keys
    live in many slots, a pipeline. Why not a pipeline everywhere: redis-py packs, queues and parses each
    command of a pipeline in Python, about 9 µs of CPU a key here against 0.7 µs for the script's one
    command (measured with 125 and 1,000 keys), and the server reads every race's version each second
    (its catch-up) and every connected account's key hash every heartbeat."""
    if not keys:
        return []
    if isinstance(redis, aioredis.RedisCluster):
        async with redis.pipeline(transaction=False) as pipe:
            for key in keys:
                pipe.hget(key, name)
            return list(await pipe.execute())
    try:
        return list(await redis.evalsha(_HGET_EACH_SHA, len(keys), *keys, name))
    except NoScriptError:  # not loaded yet, or Redis forgot it (SCRIPT FLUSH, a restart): EVAL loads it
        return list(await redis.eval(_HGET_EACH, len(keys), *keys, name))
