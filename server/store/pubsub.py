"""This process's one pub/sub subscription to the races it serves: typed notes to a callback (and, on
one channel every process hears, the accounts whose key was replaced).

Why one subscription: each process hears each event of a race it serves
once, however many of its connections watch it (the hub fans out). The
connection is the client's, with redis-py's own retry. When it fails for
good (Redis away longer than the retry; on a cluster, its node dead), the
subscriber drops it and :meth:`Subscriber.run` opens a new one with every
channel at once: to the same Redis (through Sentinel: to the master it
names now), or on a cluster to a live node the client knows after a
refresh of its topology (plain PUBLISH reaches every node, so any will do,
and no node named at start is special). What was published in between is
lost (pub/sub is at most once), which the service's catch-up covers; so a
subscription asked for while the connection is down is not refused: it is
made with the others when the connection comes back, and a ``hello``
meanwhile succeeds.

Who listens: a process listening to a race has an entry in the race's listening set (``Keys.listening``:
its instance, scored with a lease's expiry), added before it subscribes, renewed by its heartbeat, removed
after it unsubscribes. The moves script announces a move only when another process has a live entry: the
committing process learns its own moves from the script's replies, so a race played and watched on one
process publishes no note a move (about a tenth of a move's CPU at a human pace: bench/event_round.py).
A process that starts listening reads the race after it subscribed, so no move falls between; a dead
process's entry runs out with its lease (until then moves are announced to nobody, as before).
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable

from redis.asyncio.cluster import RedisCluster

from ..ops.log import log
from .client import NOT_READY, UNAVAILABLE
from .keys import KEYS_REPLACED, Keys, race_of_channel
from .records import Note

NoteHandler = Callable[[str, Note], None]
"""Called with the race id and the note of each message."""
AccountHandler = Callable[[str, str], None]
"""Called with the account (lower-case name) and the replaced key's hash of each key replacement."""


LISTEN_LEASE_MS = 60_000
"""How long an entry in a race's listening set lasts unless renewed (the heartbeat renews it every
``presence_lease / 3``, 5 s by default)."""


class Subscriber:
    """Subscribe and unsubscribe races; :meth:`run` delivers their notes until cancelled."""

    def __init__(self, redis: Any, on_note: NoteHandler, on_key_replaced: AccountHandler | None = None,
                 instance: str = "") -> None:
        self._redis = redis
        self._pubsub: Any = None
        """The pub/sub connection now, or None while there is none (then :meth:`run` opens one)."""
        self._opened = 0
        """How many pub/sub connections were opened (on a cluster, which node the next one tries)."""
        self._lock = asyncio.Lock()
        """One change of the subscription at a time: subscribes from concurrent hellos, and the replacing
        of a failed connection, each wait for the one under way (redis-py's pub/sub is not made to be
        reconnected by two tasks at once)."""
        self._channels: set[str] = set()
        """Every channel listened to: a new connection subscribes them all."""
        self._on_note = on_note
        self._on_key_replaced = on_key_replaced
        self._instance = instance
        self._races: set[str] = set()
        """The races subscribed to (their listening entries are renewed)."""

    async def listen_to_accounts(self) -> None:
        """Hear of every account key replaced (by any process) from now on."""
        # A cluster client learns its slots on its first command; a subscription made before that finds
        # none (KeyError in redis-py): have it learn them first. (A single Redis's initialize is cheap.)
        await self._redis.initialize()
        self._channels.add(KEYS_REPLACED)
        await self._change("subscribe", KEYS_REPLACED, strict=True)

    async def subscribe(self, race: str, now: int) -> None:
        """Listen to ``race`` (``now``: the server clock, ms): entered in its listening set first, so that its
        moves are announced by the time the subscription hears them (the caller reads the race after this)."""
        self._races.add(race)
        await self._enter([race], now)
        self._channels.add(Keys(race).chan)
        await self._change("subscribe", Keys(race).chan)

    async def unsubscribe(self, race: str) -> None:
        self._races.discard(race)
        self._channels.discard(Keys(race).chan)
        await self._change("unsubscribe", Keys(race).chan)
        if race not in self._races:  # (not listened to again meanwhile: its entry stays then)
            await self._redis.zrem(Keys(race).listening, self._instance)

    async def _change(self, verb: str, channel: str, strict: bool = False) -> None:
        """Subscribe or unsubscribe ``channel`` on the connection if there is one. If that fails, the
        connection is dropped for :meth:`run` to replace (with every channel of :attr:`_channels`), and
        the caller goes on (unless ``strict``: at start, a Redis that does not answer is the caller's
        to wait for)."""
        async with self._lock:
            if self._pubsub is None:
                if strict:
                    await self._open()
                return
            try:
                await getattr(self._pubsub, verb)(channel)
            except UNAVAILABLE as exc:
                log("pubsub_failed", error=exc, channel=channel)
                await self._drop()
                if strict:
                    raise

    async def _open(self) -> None:
        """A new pub/sub connection subscribed to every channel (called under :attr:`_lock`)."""
        self._opened += 1
        redis = self._redis
        if isinstance(redis, RedisCluster):
            # The client's nodes as the cluster sees them now (a failed-over master gone, its replica
            # promoted), found through any node that answers; each new connection tries the next.
            await redis.nodes_manager.initialize()
            nodes = redis.get_primaries() or redis.get_nodes()
            pubsub = redis.pubsub(node=nodes[self._opened % len(nodes)])
        else:
            pubsub = redis.pubsub()  # (through Sentinel: to the master it names now)
        try:
            if self._channels:
                await pubsub.subscribe(*self._channels)
        except BaseException:
            await _close(pubsub)
            raise
        self._pubsub = pubsub

    async def _drop(self) -> None:
        pubsub, self._pubsub = self._pubsub, None
        if pubsub is not None:
            await _close(pubsub)

    async def renew(self, now: int) -> None:
        """Renew this process's entries in the listening sets of the races it listens to (one round trip)."""
        await self._enter(list(self._races), now)

    async def _enter(self, races: list[str], now: int) -> None:
        if not races:
            return
        async with self._redis.pipeline(transaction=False) as pipe:
            for race in races:
                listening = Keys(race).listening
                pipe.zadd(listening, {self._instance: now + LISTEN_LEASE_MS})
                pipe.zremrangebyscore(listening, "-inf", now)  # dead processes' entries
                pipe.pexpire(listening, LISTEN_LEASE_MS)
            await pipe.execute()

    async def run(self) -> None:
        """Read messages for ever; a failure (Redis away, the node dead) is logged, and the connection
        replaced with backoff."""
        backoff = 0.1
        while True:
            try:
                pubsub = self._pubsub
                if pubsub is None:
                    async with self._lock:
                        if self._pubsub is None:
                            await self._open()
                            log("pubsub_reconnected", channels=len(self._channels))
                    continue
                if not pubsub.subscribed:
                    await asyncio.sleep(0.05)
                    continue
                msg = await pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
                backoff = 0.1
            except asyncio.CancelledError:
                raise
            except NOT_READY as exc:  # (also a cluster whose slots a failover has not yet given back)
                log("pubsub_failed", error=exc, retry_in=backoff)
                async with self._lock:
                    if self._pubsub is pubsub:
                        await self._drop()
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 5.0)
                continue
            if msg is not None and msg.get("type") == "message":
                self._deliver(msg)

    def _deliver(self, msg: dict[str, Any]) -> None:
        if msg["channel"] in (KEYS_REPLACED, KEYS_REPLACED.encode()):
            data = msg["data"]
            account, _, old_hash = (data.decode() if isinstance(data, bytes) else data).partition(" ")
            if self._on_key_replaced is not None and old_hash:
                self._on_key_replaced(account, old_hash)
            return
        race = race_of_channel(msg["channel"])
        try:
            note = Note.decode(msg["data"])
        except ValueError:
            log("pubsub_bad_note", channel=msg["channel"], data=msg["data"])
            return
        if race is not None:
            self._on_note(race, note)

    async def close(self) -> None:
        async with self._lock:
            await self._drop()


async def _close(pubsub: Any) -> None:
    try:
        await pubsub.aclose()
    except UNAVAILABLE:  # pragma: no cover - Redis already gone
        pass
