"""What a Redis outage leaves half done is finished: a join whose answer was lost is found again by its
retry, a race whose end failed is ended once Redis is back, and no background task fails unseen.

Real Redis processes, killed or cut off by the test (a proxy that hangs up right after a chosen
command ran: tests/freeze_proxy.py), and the server as a real process where its log is the point.
"""

from __future__ import annotations

import asyncio
import json
import secrets
from pathlib import Path
from urllib.parse import urlparse

import redis
from freeze_proxy import FreezeProxy
from redis_util import Client, create_race, eventually, live_server

from server.store import Keys
from shared import protocol as p

WIN = json.loads((Path(__file__).parent / "data" / "race_win_line.json").read_text())


async def test_a_join_whose_answer_was_lost_is_the_same_seat_on_its_retry(redis_url: str, sync: redis.Redis) -> None:
    """Redis stores the join and the process loses it before the welcome: the hello is answered
    ``unavailable``; sent again with its ``join_id`` it gets that seat (not ``name_taken``), and the
    race has no second seat for the player."""
    target = urlparse(redis_url)
    proxy = FreezeProxy(target.hostname or "127.0.0.1", target.port or 6379, cut=True)
    try:
        async with live_server(proxy.url) as server:
            created = await create_race(server, seats=3, deal_source="number", deal=WIN["deal"])
            race = created.race.id
            bob = await Client.connect(server)
            await bob.hello(race, "bob")  # (the join script is loaded: the cut call is the join itself)
            join_id = secrets.token_urlsafe(18)
            proxy.trigger = join_id.encode()
            ann = await Client.connect(server)
            await ann.send(p.Hello(protocol=p.PROTOCOL_VERSION, race=race, name="ann", join_id=join_id))
            assert (await ann.expect(p.Error, timeout=30)).code == p.ErrorCode.UNAVAILABLE.value
            assert await ann.closed() == p.CloseCode.TRY_AGAIN_LATER
            assert proxy.frozen.is_set()
            stored = sync.hget(Keys(race).names, "ann")
            assert stored is not None, "the join was stored before its answer was lost"

            proxy.thaw()
            again = await Client.connect(server)
            hello = p.Hello(protocol=p.PROTOCOL_VERSION, race=race, name="ann", join_id=join_id)

            got: list[p.Welcome] = []

            async def welcomed() -> bool:
                nonlocal again
                await again.send(hello)
                msg = await again.recv(timeout=10)
                if isinstance(msg, p.Error) and msg.code == p.ErrorCode.UNAVAILABLE.value:
                    await again.close()  # Redis not back for this process yet: reconnect, as a client does
                    again = await Client.connect(server)
                    return False
                assert isinstance(msg, p.Welcome), msg
                assert msg.seat == int(stored)
                got.append(msg)
                return True
            await eventually(welcomed, "the retried hello to be welcomed")
            assert sync.hget(Keys(race).meta, "players") == b"2", "no second seat for ann"

            # The token it got is the seat's; another attempt (another join id) cannot take the seat.
            back = await Client.connect(server)
            assert (await back.hello(race, token=got[0].token)).seat == int(stored)
            other = await Client.connect(server)
            await other.send(p.Hello(protocol=p.PROTOCOL_VERSION, race=race, name="ann",
                                     join_id=secrets.token_urlsafe(18)))
            assert (await other.error()).code == p.ErrorCode.NAME_TAKEN.value
            for c in (bob, ann, again, back, other):
                await c.close()
    finally:
        proxy.close()
