"""This process's one pub/sub subscription to the races it serves: typed notes to a callback (and, on
one channel every process hears, the accounts whose key was replaced).

Why one subscription: each process hears each event of a race it serves
once, however many of its connections watch it (the hub fans out). The
connection is the client's, with redis-py's own retry: after Redis comes
back it reconnects and subscribes again by itself; what was published in
between is lost (pub/sub is at most once), which the service's catch-up
covers.
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


class Subscriber:
    """Subscribe and unsubscribe races; :meth:`run` delivers their notes until cancelled."""

    def __init__(self, redis: Any, on_note: NoteHandler, on_key_replaced: AccountHandler | None = None) -> None:
        self._redis = redis
        self._pubsub = redis.pubsub()
        self._on_note = on_note
        self._on_key_replaced = on_key_replaced

    async def listen_to_accounts(self) -> None:
        """Hear of every account key replaced (by any process) from now on."""
        # A cluster client learns its slots on its first command; a subscription made before that finds
        # none (KeyError in redis-py): have it learn them first. (A single Redis's initialize is cheap.)
        await self._redis.initialize()
        await self._pubsub.subscribe(KEYS_REPLACED)

    async def subscribe(self, race: str) -> None:
        await self._pubsub.subscribe(Keys(race).chan)

    async def unsubscribe(self, race: str) -> None:
        await self._pubsub.unsubscribe(Keys(race).chan)

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
