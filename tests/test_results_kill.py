"""Ratings updated exactly once when the server applying a race is SIGKILLed halfway (issue 13).

Two real ``thieves-server`` processes on one Redis. A rated race ends through the first, which dies at
an exact point of the outbox, the end and the apply: its Redis traffic goes through a proxy (tests/freeze_proxy.py) that
holds everything after a chosen command, then the test SIGKILLs it. The second process's sweep
finishes the job: every account's rating changed once, by the plan the first stored.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from pathlib import Path
from urllib.parse import urlparse

import pytest
import redis
from freeze_proxy import FreezeProxy
from process_util import ServerProcess
from redis_util import PROCESS_ARGS, Client, create_race, eventually, start_race

from server.accounts import ratings
from server.store import Keys
from server.store.history_records import RatingPlan
from server.store.keys import RESULTS_PENDING, AccountKeys, leaderboard_key, rating_plan_key
from server.store.scripts import source
from shared import protocol as p

WIN = json.loads((Path(__file__).parent / "data" / "race_win_line.json").read_text())
VARIANT = "forty-thieves"
ACCOUNTS = ("ann", "bob", "cy")


def _plan_set(race: str) -> bytes:
    key = rating_plan_key(race).encode()
    return b"SET\r\n$" + str(len(key)).encode() + b"\r\n" + key


def _applied(sync: redis.Redis, account: str, race: str) -> bool:
    return sync.zscore(AccountKeys(account).history, race) is not None


TRIGGERS = {
    # ZADD results:pending: on the outbox, not ended (the other's sweep must end it, then apply it)
    "the outbox": lambda race: b"ZADD\r\n$15\r\n" + RESULTS_PENDING.encode(),
    "the plan": lambda race: _plan_set(race),
    "one account": lambda race: AccountKeys("ann").history.encode(),  # ann's part (she is first)
}


@pytest.mark.parametrize("dies_after", list(TRIGGERS))
async def test_the_server_ending_a_rated_race_killed_halfway_the_other_finishes_each_part_once(
        sync: redis.Redis, redis_url: str, tmp_path: Path, dies_after: str) -> None:
    # The script is loaded already, so the one call the proxy lets through is the apply itself
    # (not a NOSCRIPT answer followed by a load and a retry).
    sync.script_load(source("apply_account"))
    target = urlparse(redis_url)
    proxy = FreezeProxy(target.hostname or "127.0.0.1", target.port or 6379)
    first = ServerProcess(proxy.url, args=PROCESS_ARGS, log_path=tmp_path / "first.log")
    second = ServerProcess(redis_url, args=PROCESS_ARGS, log_path=tmp_path / "second.log")
    clients: list[Client] = []
    try:
        await asyncio.to_thread(first.start)
        keys = {}
        for name in ("Ann", "Bob", "Cy"):
            status, body = await asyncio.to_thread(first.http, "POST", "/players", {"name": name})
            assert status == 201, body
            keys[name] = body["key"]
        created = await create_race(first, seats=3, rated=True, deal_source="number", deal=WIN["deal"])
        race = created.race.id
        ann, bob, cy = clients = [await Client.connect(first) for _ in range(3)]  # type: ignore[arg-type]
        for client, name in zip(clients, keys):
            await client.hello(race, key=keys[name])
        await start_race(first, created.creator_token, clients)
        for text in WIN["moves"][:2]:  # one card home: ann is first
            assert isinstance(await ann.move(text), p.Ack)
        assert isinstance(await bob.move("S"), p.Ack)
        await ann.give_up()
        await bob.give_up()
        proxy.trigger = TRIGGERS[dies_after](race)  # armed: cy's give-up ends the race through the first server
        await cy.send(p.GiveUp())
        await eventually(proxy.frozen.is_set, "the first server to reach the point it dies at")
        ended = dies_after != "the outbox"
        await eventually(lambda: (sync.hget(Keys(race).meta, "status") == b"finished") == ended
                         and sync.zscore(RESULTS_PENDING, race) is not None, "the outbox entry and the end")
        if dies_after != "the outbox":
            await eventually(lambda: sync.exists(rating_plan_key(race)), "the plan to land")
        await eventually(lambda: _applied(sync, "ann", race) == (dies_after == "one account"),
                         "the first server's last call to land")
        assert not _applied(sync, "bob", race) and not _applied(sync, "cy", race)
        stored = sync.get(rating_plan_key(race))
        assert first.kill() == -9

        await asyncio.to_thread(second.start)
        await eventually(lambda: sync.zcard(RESULTS_PENDING) == 0, "the second server's sweep to finish the race")
        if stored is not None:
            assert sync.get(rating_plan_key(race)) == stored, "the first writer's plan is the one applied"
        plan = RatingPlan.decode(sync.get(rating_plan_key(race)))
        assert [(c.account, c.place) for c in plan.changes] == [("ann", 1), ("bob", 2), ("cy", 2)]
        for change in plan.changes:
            main = {k.decode(): v.decode() for k, v in sync.hgetall(AccountKeys(change.account).main).items()}
            assert float(main[f"v:{VARIANT}:mu"]) == change.mu_after, change.account
            assert float(main[f"v:{VARIANT}:sigma"]) == change.sigma_after, change.account
            assert (main[f"v:{VARIANT}:rated"], main["races"], main[f"v:{VARIANT}:races"]) == ("1", "1", "1")
            assert sync.zcard(AccountKeys(change.account).history) == 1
        board = sync.zrevrange(leaderboard_key(VARIANT), 0, -1, withscores=True)
        assert {a.decode(): int(s) for a, s in board} == {
            c.account: ratings.shown(c.mu_after, c.sigma_after) for c in plan.changes}
        assert board[0][0] == b"ann"
        status, body = await asyncio.to_thread(second.http, "GET", "/players/ann/races")
        assert status == 200 and [(e["race"], e["place"], e["rated"]) for e in body["races"]] == [(race, 1, True)]
        status, body = await asyncio.to_thread(second.http, "GET", f"/races/{race}/results")
        assert status == 200 and [s["account"] for s in body["standings"]] == ["ann", "bob", "cy"]
    finally:
        first.close()
        for client in clients:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(client.close(), 2)
        second.close()
        proxy.close()
