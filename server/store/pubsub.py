"""This process's one pub/sub subscription to the races it serves: typed notes to a callback (and, on
one channel every process hears, the accounts whose key was replaced).

Why one subscription: each process hears each event of a race it serves
once, however many of its connections watch it (the hub fans out). The
connection is the client's, with redis-py's own retry: after Redis comes
back it reconnects and subscribes again by itself; what was published in
between is lost (pub/sub is at most once), which the service's catch-up
covers.

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

from redis.exceptions import RedisError

from ..ops.log import log
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
        self._pubsub = redis.pubsub()
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
        await self._pubsub.subscribe(KEYS_REPLACED)

    async def subscribe(self, race: str, now: int) -> None:
        """Listen to ``race`` (``now``: the server clock, ms): entered in its listening set first, so that its
        moves are announced by the time the subscription hears them (the caller reads the race after this)."""
        self._races.add(race)
        await self._enter([race], now)
        await self._pubsub.subscribe(Keys(race).chan)

    async def unsubscribe(self, race: str) -> None:
        self._races.discard(race)
        await self._pubsub.unsubscribe(Keys(race).chan)
        if race not in self._races:  # (not listened to again meanwhile: its entry stays then)
            await self._redis.zrem(Keys(race).listening, self._instance)

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
        """Read messages for ever; a failure (Redis away) is logged and retried with backoff."""
        backoff = 0.1
        while True:
            try:
                if not self._pubsub.subscribed:
                    await asyncio.sleep(0.05)
                    continue
                msg = await self._pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
                backoff = 0.1
            except asyncio.CancelledError:
                raise
            except (RedisError, OSError) as exc:
                log("pubsub_failed", error=exc, retry_in=backoff)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 5.0)
                continue
            if msg is None or msg.get("type") != "message":
                continue
            if msg["channel"] in (KEYS_REPLACED, KEYS_REPLACED.encode()):
                data = msg["data"]
                account, _, old_hash = (data.decode() if isinstance(data, bytes) else data).partition(" ")
                if self._on_key_replaced is not None and old_hash:
                    self._on_key_replaced(account, old_hash)
                continue
            race = race_of_channel(msg["channel"])
            try:
                note = Note.decode(msg["data"])
            except ValueError:
                log("pubsub_bad_note", channel=msg["channel"], data=msg["data"])
                continue
            if race is not None:
                self._on_note(race, note)

    async def close(self) -> None:
        try:
            await self._pubsub.aclose()
        except RedisError:  # pragma: no cover - Redis already gone at shutdown
            pass
