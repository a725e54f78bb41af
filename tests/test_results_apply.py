"""A finished race applied to its accounts exactly once (server/accounts/recorder.py, server/store/history.py)
on a real Redis: twice, by two appliers at once, and after a crash halfway, the end state is the same."""

from __future__ import annotations

import asyncio
from typing import AsyncIterator

import msgspec
import pytest
import redis
from results_util import START, dump, put_account, put_finished_race, standing

from server.accounts import ratings
from server.accounts.recorder import Outcome, Recorder, parts
from server.store import RaceMeta, Store, redis_client
from server.store.history import History
from server.store.keys import RESULTS_PENDING, AccountKeys, leaderboard_key, rating_plan_key
from shared import protocol as p

VARIANT = "forty-thieves"


def recorder_on(client: object, history_max: int = 1000) -> Recorder:
    return Recorder(Store(client), History(client), history_max=history_max, retention=3600)


@pytest.fixture
async def recorder(redis_url: str) -> AsyncIterator[Recorder]:
    client = redis_client(redis_url)
    yield recorder_on(client)
    await client.aclose()


def three_player_race(sync: redis.Redis, race: str = "race1", rated: bool = True) -> p.Results:
    for name in ("Ann", "Bob", "Cy"):
        put_account(sync, name)
    res = put_finished_race(sync, race, [
        standing(0, "ann", "finished", 104, home_at=200_000, finished_at=200_000),
        standing(1, "bob", "racing", 1, home_at=250_000),
        standing(2, "cy", "gave_up", 1, home_at=1_000, finished_at=1_500, moves=2),
    ], rated=rated)
    sync.zadd(RESULTS_PENDING, {race: START})
    return res


async def test_a_rated_race_updates_totals_history_ratings_and_the_leaderboard(sync: redis.Redis,
                                                                            recorder: Recorder) -> None:
    three_player_race(sync)
    assert await recorder.apply("race1") is Outcome.APPLIED
    plan = await recorder.history.plan("race1")
    assert plan is not None and [c.account for c in plan.changes] == ["ann", "bob", "cy"]
    ann = {k.decode(): v.decode() for k, v in sync.hgetall(AccountKeys("ann").main).items()}
    assert (ann["races"], ann["wins"], ann[f"v:{VARIANT}:races"], ann[f"v:{VARIANT}:wins"]) == ("1", "1", "1", "1")
    assert ann[f"v:{VARIANT}:best_ms"] == "200000" and ann[f"v:{VARIANT}:rated"] == "1"
    assert float(ann[f"v:{VARIANT}:mu"]) == plan.changes[0].mu_after
    assert float(ann[f"v:{VARIANT}:sigma"]) == plan.changes[0].sigma_after
    bob = {k.decode(): v.decode() for k, v in sync.hgetall(AccountKeys("bob").main).items()}
    assert "wins" not in bob and f"v:{VARIANT}:best_ms" not in bob
    # Played on beats gave up at the same 1/104, however early the quitter got there.
    entries = {a: msgspec.json.decode(sync.hget(AccountKeys(a).entries, "race1"), type=p.HistoryEntry)
               for a in ("ann", "bob", "cy")}
    assert [entries[a].place for a in ("ann", "bob", "cy")] == [1, 2, 3]
    assert entries["ann"].time_ms == 200_000 and entries["bob"].time_ms is None
    assert entries["bob"].rated and entries["bob"].rating_before == 1000
    assert entries["ann"].rating_after == ratings.shown(plan.changes[0].mu_after, plan.changes[0].sigma_after)
    board = sync.zrevrange(leaderboard_key(VARIANT), 0, -1, withscores=True)
    assert [a.decode() for a, _ in board] == ["ann", "bob", "cy"]
    assert sync.zcard(RESULTS_PENDING) == 0


async def test_applying_the_same_race_twice_changes_nothing_the_second_time(sync: redis.Redis,
                                                                           recorder: Recorder) -> None:
    three_player_race(sync)
    assert await recorder.apply("race1") is Outcome.APPLIED
    once = dump(sync)
    sync.zadd(RESULTS_PENDING, {"race1": START})  # as if a second process had read the outbox before done()
    assert await recorder.apply("race1") is Outcome.APPLIED
    assert dump(sync) == once
    for part in parts(RaceMeta.from_hash(sync.hgetall("race:{race1}")), await _results(sync, "race1"),
                      await recorder.history.plan("race1")):
        applied = await recorder.history.apply_account(part, 1000)
        assert applied.exists and not applied.applied_now
    assert dump(sync) == once


async def _results(sync: redis.Redis, race: str) -> p.Results:
    return msgspec.msgpack.decode(sync.get(f"race:{{{race}}}:results"), type=p.Results)


async def _reference(sync: redis.Redis, recorder: Recorder, setup: object) -> dict[str, object]:
    """The end state of an uninterrupted run of ``setup``'s races, then a clean Redis again."""
    setup()  # type: ignore[operator]
    for race in [r.decode() for r in sync.zrange(RESULTS_PENDING, 0, -1)]:
        assert await recorder.apply(race) is Outcome.APPLIED
    state = dump(sync)
    sync.flushall()
    return state


async def test_two_appliers_at_once_apply_each_part_once(sync: redis.Redis, recorder: Recorder,
                                                         redis_url: str) -> None:
    expected = await _reference(sync, recorder, lambda: three_player_race(sync))
    three_player_race(sync)
    clients = [redis_client(redis_url) for _ in range(4)]
    try:
        outcomes = await asyncio.gather(*(recorder_on(c).apply("race1") for c in clients))
    finally:
        for c in clients:
            await c.aclose()
    assert set(outcomes) == {Outcome.APPLIED}
    assert dump(sync) == expected


@pytest.mark.parametrize("applied_before_the_crash", [0, 1, 2, 3])
async def test_a_crash_halfway_then_a_fresh_recorder_gives_the_uninterrupted_end_state(
        sync: redis.Redis, recorder: Recorder, redis_url: str, applied_before_the_crash: int) -> None:
    expected = await _reference(sync, recorder, lambda: three_player_race(sync))
    three_player_race(sync)
    meta = RaceMeta.from_hash(sync.hgetall("race:{race1}"))
    results = await _results(sync, "race1")
    plan = await recorder.plan_of(meta, results)  # stored: what the dead process got done
    for part in parts(meta, results, plan)[:applied_before_the_crash]:
        assert (await recorder.history.apply_account(part, 1000)).applied_now  # (and died before its ZADD)
    # ann's rating has moved when one part is in: a recorder that made the plan again from the ratings
    # now would rate bob and cy against another ann, and the end state would differ.
    client = redis_client(redis_url)
    try:
        assert await recorder_on(client).apply("race1") is Outcome.APPLIED
    finally:
        await client.aclose()
    assert dump(sync) == expected


async def test_a_player_in_two_rated_races_at_once_gets_both_changes_added(sync: redis.Redis,
                                                                           recorder: Recorder) -> None:
    for name in ("Ann", "Bob", "Cy"):
        put_account(sync, name)
    put_finished_race(sync, "race1", [standing(0, "ann", "finished", 104, 9, 9), standing(1, "bob", home=3)])
    put_finished_race(sync, "race2", [standing(0, "ann", "finished", 104, 9, 9), standing(1, "cy", home=3)],
                      ended_after=300_001)
    meta1 = RaceMeta.from_hash(sync.hgetall("race:{race1}"))
    meta2 = RaceMeta.from_hash(sync.hgetall("race:{race2}"))
    plan1 = await recorder.plan_of(meta1, await _results(sync, "race1"))
    plan2 = await recorder.plan_of(meta2, await _results(sync, "race2"))  # both from ann's rating before either
    assert plan1.changes[0].mu_before == plan2.changes[0].mu_before == ratings.MU
    assert await recorder.apply("race1") is Outcome.APPLIED and await recorder.apply("race2") is Outcome.APPLIED
    mu = float(sync.hget(AccountKeys("ann").main, f"v:{VARIANT}:mu"))
    assert mu == pytest.approx(ratings.MU + 2 * (plan1.changes[0].mu_after - ratings.MU))
    assert sync.hget(AccountKeys("ann").main, f"v:{VARIANT}:rated") == b"2"


async def test_unrated_races_go_into_history_without_ratings(sync: redis.Redis, recorder: Recorder) -> None:
    put_account(sync, "Ann")
    put_finished_race(sync, "race1", [standing(0, "ann", "finished", 104, 9, 9), standing(1, None, home=3)],
                      rated=False)
    assert await recorder.apply("race1") is Outcome.APPLIED
    entry = msgspec.json.decode(sync.hget(AccountKeys("ann").entries, "race1"), type=p.HistoryEntry)
    assert (entry.place, entry.players, entry.rated, entry.rating_before, entry.rating_after) == (1, 2, False, None, None)
    ann = sync.hgetall(AccountKeys("ann").main)
    assert ann[b"races"] == b"1" and f"v:{VARIANT}:mu".encode() not in ann
    assert not sync.exists(rating_plan_key("race1")) and not sync.exists(leaderboard_key(VARIANT))


async def test_running_races_wait_and_vanished_ones_leave_the_outbox(sync: redis.Redis, recorder: Recorder) -> None:
    put_account(sync, "Ann")
    put_finished_race(sync, "live", [standing(0, "ann", home=3), standing(1, None)], status="started")
    sync.zadd(RESULTS_PENDING, {"live": START, "gone": START})
    assert await recorder.apply("live") is Outcome.RUNNING
    assert await recorder.apply("gone") is Outcome.GONE
    assert [r.decode() for r in sync.zrange(RESULTS_PENDING, 0, -1)] == ["live"]
    assert not sync.exists(AccountKeys("ann").history)


async def test_history_keeps_the_newest_history_max(sync: redis.Redis, redis_url: str) -> None:
    put_account(sync, "Ann")
    client = redis_client(redis_url)
    try:
        rec = recorder_on(client, history_max=3)
        for i in range(5):
            put_finished_race(sync, f"race{i}", [standing(0, "ann", home=i), standing(1, None)], rated=False,
                              ended_after=1000 * i)
            assert await rec.apply(f"race{i}") is Outcome.APPLIED
        # A late race, older than all three kept: it stays (its entry guards against a second apply).
        put_finished_race(sync, "late", [standing(0, "ann", home=1), standing(1, None)], rated=False, ended_after=1)
        assert await rec.apply("late") is Outcome.APPLIED
        assert await rec.apply("late") is Outcome.APPLIED
    finally:
        await client.aclose()
    kept = [r.decode() for r in sync.zrevrange(AccountKeys("ann").history, 0, -1)]
    assert kept == ["race4", "race3", "late"]
    assert sorted(k.decode() for k in sync.hkeys(AccountKeys("ann").entries)) == ["late", "race3", "race4"]
    assert sync.hget(AccountKeys("ann").main, "races") == b"6"


async def test_only_a_finished_game_counts_as_a_win(sync: redis.Redis, recorder: Recorder) -> None:
    """Issue 23, item 6: first place counted as a win, so a player alone in a race who gave up twice had
    "2 races · 2 wins". A win is a finished game (shared.standings.win_ms), whatever the place: the
    second finisher won its game too, the first place that gave up did not."""
    for name in ("Ann", "Bob", "Cy"):
        put_account(sync, name)
    for race in ("alone1", "alone2"):
        put_finished_race(sync, race, [standing(0, "ann", "gave_up", 3, home_at=1_000, finished_at=2_000)],
                          rated=False)
        assert await recorder.apply(race) is Outcome.APPLIED
    put_finished_race(sync, "two", [standing(0, "bob", "finished", 104, 90_000, 90_000),
                                    standing(1, "cy", "finished", 104, 95_000, 95_000)], rated=False)
    assert await recorder.apply("two") is Outcome.APPLIED
    ann = {k.decode(): v.decode() for k, v in sync.hgetall(AccountKeys("ann").main).items()}
    assert ann["races"] == "2" and ann.get("wins", "0") == "0" and ann.get(f"v:{VARIANT}:wins", "0") == "0"
    for account in ("bob", "cy"):
        hash_ = {k.decode(): v.decode() for k, v in sync.hgetall(AccountKeys(account).main).items()}
        assert (hash_["races"], hash_["wins"]) == ("1", "1"), account
