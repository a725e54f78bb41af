"""Ratings updated exactly once when the server applying a race is SIGKILLed halfway (issue 13).

Two real ``thieves-server`` processes on one Redis. The first applies a finished rated race, and dies
at an exact point of the work: its Redis traffic goes through a proxy (tests/freeze_proxy.py) that
holds everything after a chosen command, then the test SIGKILLs it. The second process's sweep
finishes the job: every account's rating changed once, by the plan the first stored.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Iterator
from urllib.parse import urlparse

import pytest
import redis
from freeze_proxy import FreezeProxy
from process_util import ServerProcess
from redis_util import PROCESS_ARGS, eventually
from results_util import START, put_account, put_finished_race, standing

from server.players import ratings
from server.store.history_records import RatingPlan
from server.store.keys import RESULTS_PENDING, AccountKeys, leaderboard_key, rating_plan_key
from server.store.scripts import source

VARIANT = "forty-thieves"
ACCOUNTS = ("ann", "bob", "cy")


@pytest.fixture
def sync(redis_url: str) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(redis_url)
    yield client
    client.close()


def _plan_set(race: str) -> bytes:
    key = rating_plan_key(race).encode()
    return b"SET\r\n$" + str(len(key)).encode() + b"\r\n" + key


def _applied(sync: redis.Redis, account: str, race: str) -> bool:
    return sync.zscore(AccountKeys(account).history, race) is not None


@pytest.mark.parametrize("dies_after", ["the plan", "one account"])
async def test_the_applying_server_killed_halfway_the_other_finishes_each_part_once(
        sync: redis.Redis, redis_url: str, tmp_path: Path, dies_after: str) -> None:
    race = "killed1"
    for name in ("Ann", "Bob", "Cy"):
        put_account(sync, name)
    # The script is loaded already, so the one call the proxy lets through is the apply itself
    # (not a NOSCRIPT answer followed by a load and a retry).
    sync.script_load(source("apply_account"))
    trigger = _plan_set(race) if dies_after == "the plan" else AccountKeys("ann").history.encode()
    target = urlparse(redis_url)
    proxy = FreezeProxy(target.hostname or "127.0.0.1", target.port or 6379, trigger)
    first = ServerProcess(proxy.url, args=PROCESS_ARGS, log_path=tmp_path / "first.log")
    second = ServerProcess(redis_url, args=PROCESS_ARGS, log_path=tmp_path / "second.log")
    try:
        await asyncio.to_thread(first.start)
        put_finished_race(sync, race, [
            standing(0, "ann", "finished", 104, home_at=200_000, finished_at=200_000),
            standing(1, "bob", "racing", 1, home_at=250_000),
            standing(2, "cy", "gave_up", 1, home_at=1_000, finished_at=1_500, moves=2),
        ])
        sync.zadd(RESULTS_PENDING, {race: START})  # as end_race leaves it: on the outbox, ended
        await eventually(proxy.frozen.is_set, "the first server to reach the point it dies at")
        stored = sync.get(rating_plan_key(race))
        assert stored is not None, "the plan went through before the freeze"
        await eventually(lambda: _applied(sync, "ann", race) == (dies_after == "one account"),
                         "the first server's last call to land")
        assert not _applied(sync, "bob", race) and not _applied(sync, "cy", race)
        assert first.kill() == -9

        await asyncio.to_thread(second.start)
        await eventually(lambda: sync.zcard(RESULTS_PENDING) == 0, "the second server's sweep to finish the race")
        assert sync.get(rating_plan_key(race)) == stored, "the first writer's plan is the one applied"
        plan = RatingPlan.decode(stored)
        for change in plan.changes:
            main = {k.decode(): v.decode() for k, v in sync.hgetall(AccountKeys(change.account).main).items()}
            assert float(main[f"v:{VARIANT}:mu"]) == change.mu_after, change.account
            assert float(main[f"v:{VARIANT}:sigma"]) == change.sigma_after, change.account
            assert (main[f"v:{VARIANT}:rated"], main["races"], main[f"v:{VARIANT}:races"]) == ("1", "1", "1")
            assert sync.zcard(AccountKeys(change.account).history) == 1
        board = sync.zrevrange(leaderboard_key(VARIANT), 0, -1, withscores=True)
        assert [(a.decode(), int(s)) for a, s in board] == [
            (c.account, ratings.shown(c.mu_after, c.sigma_after)) for c in plan.changes]
        status, body = await asyncio.to_thread(second.http, "GET", "/players/ann")
        assert status == 200 and body["variants"][VARIANT]["rated_races"] == 1 and body["wins"] == 1
    finally:
        first.close()
        second.close()
        proxy.close()
