"""Test shortcuts into an event's stored state that the server's own caches see.

Every process's runner and feed keep an event as they last read it and read it whole again only when
its ``version`` moved (server/events/runner.py, server/events/feed.py): a test that writes a field of
the event's hash (a start brought near, an arena's clock run out) moves the version in the same
transaction, as every write of the server does, or a runner that read the event before the write
never sees it."""

from __future__ import annotations

from typing import Any

from server.store.keys import EventKeys


def write_event_fields(client: Any, event: str, **fields: Any) -> Any:
    """Set ``fields`` of ``event``'s hash and move its version, at once (MULTI/EXEC). ``client`` is a
    redis-py client, sync or asyncio: the answer is the pipeline's (to await for an asyncio one)."""
    key = EventKeys(event).meta
    pipe = client.pipeline(transaction=True)
    pipe.hset(key, mapping=fields)
    pipe.hincrby(key, "version", 1)
    return pipe.execute()
