"""Replica acknowledgements: a write a player is told succeeded is on a Redis replica first (Redis WAIT).

Why: Redis replicates asynchronously. A master that fails over (killed, or paused past its node timeout
and then demoted) drops whatever its replicas had not received, so a move acknowledged the moment the
master applied it can vanish (issue 37 measured 14 acknowledged moves lost in 5 pauses). ``WAIT 1
timeout`` after the write, on the same connection, returns how many replicas have everything that
connection's last command saw; only when one does is the write acknowledged. On a timeout the player
hears ``unavailable`` and resends under the same ``seq``: the stored move then answers as a duplicate,
acknowledged once the replica has it.

Redis 7.0 counts, for WAIT, the master's replication offset as of the connection's last command, read
or write (measured: a GET then WAIT on a fresh connection waits for every earlier write of any
connection). So a WAIT right after the write covers the write, and a PING then WAIT covers every write
stored before the PING: how a resend read back from the store is confirmed (:meth:`ReplicaAcks.confirm`).

``auto`` (the default) asks the master whether it has a connected replica (``INFO replication``) at
start and every :data:`REFRESH_SECONDS`: one Redis without replicas (``make run``'s embedded one) sends
no WAIT and pays nothing. On a cluster it asks each master, and only the writes of a master that has a
replica wait: after a failover the promoted replica is a master without one (its old master is dead),
and a WAIT there could only time out, which made every race of that node unavailable until someone
added a replica (the cluster failover test saw it).
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager, nullcontext
from typing import Any, Literal

import redis.asyncio as aioredis
from redis.exceptions import RedisError

ReplicaMode = Literal["auto", "on", "off"]

REFRESH_SECONDS = 5.0
"""How often ``auto`` asks Redis whether it has replicas (a replica added or lost is followed this fast)."""
REPLICAS_NEEDED = 1
"""Replicas that must have a write before it is acknowledged: one survives its master's failover (the
promoted replica is the one most up to date; Sentinel and the cluster pick it so)."""


class NotReplicated(RedisError):
    """No replica had the write within the timeout: whether it survives a failover is unknown, so the
    player is told ``unavailable`` (a ``RedisError``: the server answers it like a Redis outage)."""


class ReplicaAcks:
    """Whether writes wait for a replica (``--replica-acks``), and the WAIT that makes them."""

    def __init__(self, mode: ReplicaMode | str = "off", timeout_ms: int = 500) -> None:
        if mode not in ("auto", "on", "off"):
            raise ValueError(f"replica acks are auto, on or off, not {mode!r}")
        self.mode = mode
        self.timeout_ms = timeout_ms
        self.active = mode == "on"
        """WAIT after each acknowledged write (``on``; ``auto`` once :meth:`refresh` found a replica)."""
        self.masters_with_replicas: set[str] | None = None
        """``auto`` on a cluster: the masters (host:port) that had a connected replica at the last
        :meth:`refresh`; only their writes wait. None: not a cluster, or not asked yet."""
        self.wait_packed = _packed(b"WAIT", str(REPLICAS_NEEDED).encode(), str(timeout_ms).encode())
        """The WAIT command as RESP, appended to a round trip of moves (server/store/batcher.py)."""
        self.confirmed = 0
        """Writes (a round trip of moves, a join …) a replica confirmed (``/metrics``)."""
        self.unconfirmed = 0
        """Writes no replica confirmed in time (or whose master changed meanwhile): answered unavailable."""

    async def refresh(self, redis: Any) -> bool:
        """``auto``: turn on exactly while Redis reports a connected replica (on a cluster: any master
        does). Returns :attr:`active`. Raises what Redis raises (the caller logs and tries again)."""
        if self.mode != "auto":
            return self.active
        if isinstance(redis, aioredis.RedisCluster):
            infos = await redis.info("replication", target_nodes=aioredis.RedisCluster.PRIMARIES)
            self.masters_with_replicas = {name for name, info in _by_node(redis, infos)
                                          if int(info.get("connected_slaves", 0))}
            found = bool(self.masters_with_replicas)
        else:
            found = int((await redis.info("replication")).get("connected_slaves", 0)) > 0
        self.active = found
        return found

    def check(self, replicas: Any) -> None:
        """WAIT's reply: raises :class:`NotReplicated` when too few replicas have the write."""
        if isinstance(replicas, BaseException):
            raise replicas
        if int(replicas) < REPLICAS_NEEDED:
            self.unconfirmed += 1
            raise NotReplicated(f"no Redis replica confirmed the write within {self.timeout_ms} ms")
        self.confirmed += 1

    async def confirm(self, redis: Any, key: str, node: Any = None) -> None:
        """Return once a replica has every write stored so far on ``key``'s master (a PING then WAIT on
        one connection to it); raises :class:`NotReplicated` otherwise. Nothing when not :attr:`active`.

        ``node`` (a cluster): the node the write was sent to, by the slot table before it; a slot table
        that names another node now means the write may have gone to a master since replaced, so it
        is not confirmed."""
        if not self.active:
            return
        if isinstance(redis, aioredis.RedisCluster):
            now = redis.get_node_from_key(key)
            if now is None:  # no master known for the slot (a failover under way)
                raise NotReplicated(f"no Redis master is known for {key}")
            if not self.waits_on(now.name if node is None else node.name):
                return
            if node is not None and now.name != node.name:
                self.unconfirmed += 1
                raise NotReplicated(f"the master of {key} changed during the write ({node.name} -> {now.name})")
            async with _turn(redis):
                await self._confirm_on(now)
            return
        async with redis.pipeline(transaction=False) as pipe:
            pipe.ping()
            pipe.execute_command("WAIT", REPLICAS_NEEDED, self.timeout_ms)
            _, replicas = await pipe.execute()
        self.check(replicas)

    async def _confirm_on(self, node: Any) -> None:
        """PING then WAIT on one connection of a cluster node."""
        conn = node.acquire_connection()
        try:
            await conn.send_packed_command(_packed(b"PING") + self.wait_packed)
            await conn.read_response()
            replicas = await conn.read_response()
        except BaseException:
            await conn.disconnect()  # a reply may still be on its way: never hand it to the next command
            raise
        finally:
            node.release(conn)
        self.check(replicas)


    def waits_on(self, node: str) -> bool:
        """Whether a write to cluster master ``node`` (host:port) waits for a replica: always with
        ``on``; with ``auto``, when that master had one at the last :meth:`refresh`."""
        if not self.active:
            return False
        return self.mode == "on" or self.masters_with_replicas is None or node in self.masters_with_replicas


def _turn(redis: Any) -> AbstractAsyncContextManager[Any]:
    """One of a waiting cluster client's turns (server/store/client.py), so that this connection taken
    outside redis-py's commands counts against the node's pool; nothing for a plain cluster client."""
    turn = getattr(redis, "turn", None)
    return turn() if turn is not None else nullcontext()


def _by_node(redis: Any, infos: Any) -> list[tuple[str, dict[str, Any]]]:
    """redis-py's answer of a command sent to every master, as (node, answer) pairs: a dict by node
    name, or (one master) that master's answer alone."""
    if isinstance(infos, dict) and infos and all(isinstance(v, dict) for v in infos.values()):
        return list(infos.items())
    return [(node.name, infos) for node in redis.get_primaries()[:1]]


def _packed(*parts: bytes) -> bytes:
    """A command as RESP."""
    return b"*%d\r\n" % len(parts) + b"".join(b"$%d\r\n%s\r\n" % (len(part), part) for part in parts)
