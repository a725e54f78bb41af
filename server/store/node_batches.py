"""On a Redis Cluster, one move batcher a node: a node that stops answering holds up only its own races.

Why: a :class:`~server.store.batcher.MoveBatcher` sends what is pending in round trips, a lane at a
time, and on a cluster a round trip is every waiting race's call at once, done when the last one is. A
master killed or paused then held each lane until its calls failed (socket timeouts, retries: seconds),
and the moves of races on the healthy masters waited behind them (issue 37 measured 1.1-2.3 s). Here the
moves and reads of each node go to a batcher of that node's own, with its own lanes; the node is the
one serving the race's slot as the cluster client knows it now, so after a failover the promoted
replica's races get a batcher of their own too. On one Redis there is one node: :func:`move_batcher`
makes the plain batcher, and nothing changes on its path.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable, Protocol

import redis.asyncio as aioredis
from redis.exceptions import SlotNotCoveredError

from ..ops.metrics import Timer
from .batcher import MoveBatcher, Settled
from .keys import Keys
from .records import CommitResult, MoveCommit
from .replicas import ReplicaAcks


class Batcher(Protocol):
    """What the store asks of its batcher: a move to commit, a script to run in the next round trip."""

    def call(self, race: str, commit: MoveCommit, then: Settled | None = None) -> "asyncio.Future[CommitResult]": ...

    def script_call(self, script: Any, keys: list[str], args: list[Any] | None = None) -> "asyncio.Future[Any]": ...


class NodeBatchers:
    """A :class:`MoveBatcher` per cluster node (made on first use), each given the calls of the races
    its node serves."""

    def __init__(self, redis: aioredis.RedisCluster, make: Callable[[], MoveBatcher]) -> None:
        self._redis = redis
        self._make = make
        self.by_node: dict[str, MoveBatcher] = {}
        """Each node's batcher, by the node's name (host:port); "" while the slot's node is unknown."""

    def of(self, key: str) -> MoveBatcher:
        """The batcher of the node that serves ``key`` now."""
        try:
            node = self._redis.get_node_from_key(key)
            name = node.name if node is not None else ""
        except SlotNotCoveredError:  # slots not learnt yet, or lost in a failover: redis-py routes it
            name = ""
        batcher = self.by_node.get(name)
        if batcher is None:
            batcher = self.by_node[name] = self._make()
        return batcher

    def call(self, race: str, commit: MoveCommit, then: Settled | None = None) -> "asyncio.Future[CommitResult]":
        return self.of(Keys(race).meta).call(race, commit, then)

    def script_call(self, script: Any, keys: list[str], args: list[Any] | None = None) -> "asyncio.Future[Any]":
        return self.of(keys[0]).script_call(script, keys, args)


def move_batcher(redis: Any, script: Any, tick_ms: int, cluster: bool, timer: Timer | None = None,
                 instance: str = "", linger: float = 0.0, replicas: ReplicaAcks | None = None) -> Batcher:
    """The store's batcher: one :class:`MoveBatcher` on one Redis; one a node on a cluster. ``replicas``:
    when a round trip's moves must wait for a replica (each node's batcher waits on its own node)."""
    if cluster and isinstance(redis, aioredis.RedisCluster):
        return NodeBatchers(redis, lambda: MoveBatcher(redis, script, tick_ms, True, timer, instance, linger,
                                                       replicas=replicas))
    return MoveBatcher(redis, script, tick_ms, cluster, timer, instance, linger, replicas=replicas)
