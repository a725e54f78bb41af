"""Seeks on a real server and Redis: pools, waves, cancels, no-shows, bad input (docs/protocol.md "Seeks").

Seekers are light WebSocket clients (``seek`` frames); their races are joined with the token the
``matched`` frame carries, as ``thieves seek`` does.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import re
from typing import Any, AsyncIterator

import msgspec
import pytest
import redis.asyncio as aioredis

from redis_util import Client, LiveServer, eventually, live_server, register
from shared import protocol as p
from shared import seeks as rule
from server.store.keys import SeekKeys

FAST = dict(seek_wave=0.1, seek_join=2.0, seek_deals="random")
"""Short waves and join window: a test never waits long for a pairing or a no-show."""


async def seek(server: LiveServer, **fields: Any) -> tuple[Client, p.Seeking]:
    client = await Client.connect(server)
    await client.send(p.Seek(**fields))
    return client, await client.expect(p.Seeking)


async def matched(client: Client, timeout: float = 20.0) -> p.Matched:
    """The client's ``matched``, skipping ``seeking`` updates."""
    while True:
        msg = await client.recv(timeout)
        if isinstance(msg, p.Matched):
            return msg
        assert isinstance(msg, p.Seeking), msg


async def join(server: LiveServer, m: p.Matched) -> Client:
    """Join the race a seek was given, as the client does: hello with the token, then ready."""
    player = await Client.connect(server)
    welcome = await player.hello(m.race, token=m.token)
    assert welcome.seat == m.seat
    await player.send(p.Ready())
    return player


@pytest.fixture
async def fast(redis_url: str) -> AsyncIterator[LiveServer]:
    async with live_server(redis_url, **FAST) as live:
        yield live


async def test_two_seekers_are_given_one_race_and_it_starts_when_both_join(fast: LiveServer) -> None:
    ann, first = await seek(fast, name="ann", time_limit=60)
    assert first.pool == "forty-thieves/2/60/casual" and first.waiting == 1 and first.rating == 1000
    assert first.gap == rule.GAP_BASE
    bob, _ = await seek(fast, name="bob", time_limit=60)
    ma, mb = await matched(ann), await matched(bob)
    assert ma.race == mb.race and {ma.seat, mb.seat} == {0, 1} and sorted(ma.names) == ["ann", "bob"]
    a, b = await join(fast, ma), await join(fast, mb)
    countdown = await a.expect(p.Countdown)
    assert countdown.view is not None
    await b.expect(p.Countdown)
    # Once the race started the seek is over: its connection is closed, and the players may seek again.
    assert await ann.closed() == 1000
    assert await bob.closed() == 1000
    again, seeking = await seek(fast, name="ann", time_limit=60)
    assert seeking.waiting == 1
    await again.close()
