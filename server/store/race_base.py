"""The races' store's common part: its Redis clients, its registered scripts, its move batcher, and the
process's own ties to Redis (the subscription, the PING that says Redis is back, the shared secret).

Why a part of its own: the races' :class:`~server.store.races.Store` is made of parts by job (reads,
life cycle, play, checked deals: each a module), and each part uses these. The scripts are registered
here, once per client, so each part calls them by the same attribute.
"""

from __future__ import annotations

import secrets
import time
from typing import Any

import redis.asyncio as aioredis

from ..ops.metrics import Timer
from .keys import SECRET, Keys
from .node_batches import move_batcher
from .pubsub import AccountHandler, NoteHandler, Subscriber
from .replicas import ReplicaAcks
from .scripts import register


class RaceStoreBase:
    """Async access to races in one Redis, or a Redis Cluster (one slot per race): what every part shares."""

    def __init__(self, redis: Any, tick_ms: int = 100, timer: Timer | None = None, probe: Any = None,
                 instance: str = "", linger: float = 0.0, replicas: ReplicaAcks | None = None) -> None:
        self.redis = redis
        self.instance = instance
        """This process (its subscription's entries in the races' listening sets: server/store/pubsub.py)."""
        self.probe = probe if probe is not None else redis
        """A client that does not retry: one quick PING says whether Redis answers now."""
        self._down = False
        self.outages = 0
        """How many times :attr:`down` was set (from clear): work that an outage may have left half done
        (a race's end) is looked for again after each (server/race/janitor.py)."""
        self.tick_ms = tick_ms
        self.cluster = isinstance(redis, aioredis.RedisCluster)
        self.timer = timer
        self.replicas = replicas if replicas is not None else ReplicaAcks("off")
        """Whether a write a player is told succeeded waits for a replica first (``--replica-acks``)."""
        self._create = register(redis, "create")
        self._join = register(redis, "join")
        self._ready = register(redis, "ready")
        self._start = register(redis, "start")
        self._give_up = register(redis, "give_up")
        self._hint_take = register(redis, "hint_take")
        self._hint_give = register(redis, "hint_give")
        self._presence = register(redis, "presence")
        self._welcomed = register(redis, "welcomed")
        self._heartbeat = register(redis, "heartbeat")
        self._end = register(redis, "end")
        self._abandon = register(redis, "abandon")
        self._read_lines = register(redis, "read_lines")
        self._announce = register(redis, "announce")
        self._read_player = register(redis, "read_player")
        self._checked_push = register(redis, "checked_push")
        self._leave = register(redis, "leave")
        self._free_stale = register(redis, "free_stale")
        self._unseal = register(redis, "unseal")
        # (one batcher a node on a cluster: a node that stops answering holds up only its own races)
        self._moves = move_batcher(redis, register(redis, "moves"), tick_ms, self.cluster, timer, instance, linger,
                                   replicas=self.replicas)

    @property
    def down(self) -> bool:
        """Set when a command failed through all its retries; cleared by the next PING that answers."""
        return self._down

    @down.setter
    def down(self, value: bool) -> None:
        if value and not self._down:
            self.outages += 1
        self._down = value

    def subscriber(self, on_note: NoteHandler, on_key_replaced: AccountHandler | None = None) -> Subscriber:
        """This process's pub/sub subscription; ``on_note(race, note)`` for each event heard,
        ``on_key_replaced(account, old_hash)`` for each account key replaced (once :meth:`Subscriber.listen_to_accounts`)."""
        return Subscriber(self.redis, on_note, on_key_replaced, self.instance)

    async def ping(self) -> bool:
        """One PING without retries (raises when Redis does not answer); an answer clears :attr:`down`."""
        started = time.perf_counter()
        ok = bool(await self.probe.ping())
        if self.timer is not None:
            self.timer("ping", time.perf_counter() - started)
        self.down = False
        return ok

    async def check_up(self) -> None:
        """While Redis is known to be down, fail at once unless a quick PING now answers.

        Why: every command retries with backoff for most of a second, and a
        connection's frames are handled in turn, so during an outage each
        queued frame would wait that long for its ``unavailable``. The PING
        costs nothing while Redis is up (it is skipped) and the first frame
        after Redis is back goes through normally.
        """
        if self.down:
            await self.ping()

    async def replicated(self, race: str) -> None:
        """Return once a replica has every write of ``race`` stored so far (replica acks on; else at
        once); raises :class:`~server.store.replicas.NotReplicated`. For an answer read back from the
        store rather than written now: a resent move's acknowledgement."""
        await self.replicas.confirm(self.redis, Keys(race).meta)

    async def token_secret(self) -> bytes:
        """The shared HMAC secret: the first process to ask creates it."""
        await self.redis.set(SECRET, secrets.token_hex(32), nx=True)
        value = await self.redis.get(SECRET)
        assert value is not None
        return bytes(value)
