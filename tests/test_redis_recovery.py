"""Redis comes back, and nothing fails: pooled connections that died are replaced, lost pub/sub is caught up.

These use a private redis-server that the test kills and starts again on
the same port (tests/process_util.py ``RedisProcess``) and the real app on
uvicorn in this process (``live_server``): the retry under test is
redis-py's own, configured in ``server.app.redis_client``.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

from process_util import RedisProcess
from redis_util import Client, LiveServer, create_race, eventually, live_server, start_race

from server.race import rules as races
from server.store import redis_client
from server.store import Keys, MoveCommit, Store
from shared import protocol as p

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))  # moves_script: a race made through the Store

WIN = json.loads((Path(__file__).parent / "data" / "race_win_line.json").read_text())


async def _many_gets(live: LiveServer, path: str, n: int) -> list[int]:
    """``n`` concurrent requests: the pool needs about as many Redis connections at once."""
    return [status for status, _ in await asyncio.gather(*(live.http("GET", path) for _ in range(n)))]


async def test_after_a_redis_restart_no_request_fails_on_a_dead_pooled_connection(tmp_path: Path) -> None:
    store = RedisProcess(tmp_path / "redis").start()
    try:
        async with live_server(store.url) as live:
            created = await create_race(live, seats=2)
            path = f"/races/{created.race.id}"
            assert set(await _many_gets(live, path, 24)) == {200}  # many pooled connections now open

            store.kill()
            store.start()  # same port, same append-only file

            async def healthy() -> bool:
                return (await live.http("GET", "/health"))[0] == 200

            await eventually(healthy, "/health to answer 200 again")
            # Every other pooled connection died with the old Redis: each request must still succeed.
            assert set(await _many_gets(live, path, 24)) == {200}
            ann = await Client.connect(live)
            welcome = await ann.hello(created.race.id, "ann")
            assert welcome.seat == 0
            await ann.close()
    finally:
        store.stop()


async def _started_with_a_spectator(server: LiveServer) -> tuple[str, Client, Client]:
    """A one-seat race under way on a winnable deal: its id, its player ann, and a spectator."""
    created = await create_race(server, seats=1, deal_source="number", deal=WIN["deal"])
    race = created.race.id
    ann, watcher = await Client.connect(server), await Client.connect(server)
    await ann.hello(race, "ann")
    await watcher.hello(race, role="spectator")
    await start_race(server, created.creator_token, [ann])
    await watcher.expect(p.Countdown)
    return race, ann, watcher


async def test_a_lost_pubsub_message_is_caught_up_from_the_stored_race(server: LiveServer) -> None:
    """With this process's subscription gone (as while Redis restarts), moves and the end still reach
    spectators: the stored version is compared with the hub's and the hub catches up."""
    race, ann, watcher = await _started_with_a_spectator(server)

    await server.service.served.subscriber.unsubscribe(race)  # every message of this race is now lost
    for text in WIN["moves"][:3]:
        assert isinstance(await ann.move(text), p.Ack)

    async def watcher_saw_three_moves() -> bool:
        try:
            await watcher.recv(timeout=0.2)
        except asyncio.TimeoutError:
            pass
        line = watcher.table.lines.get(0)
        return line is not None and line.moves == 3

    await eventually(watcher_saw_three_moves, "the spectator's progress to show three moves")
    await ann.give_up()
    finished = await watcher.expect(p.Finished, timeout=10)
    assert [s.status for s in finished.results.standings] == ["gave_up"]
    for c in (ann, watcher):
        await c.close()


async def test_an_end_read_by_a_progress_flush_before_its_lost_note_is_still_announced(server: LiveServer) -> None:
    """The hub's progress flush reads the table (and its version) after the end was stored, while the
    end's pub/sub message is lost: the catch-up must still announce the end, though the hub has seen
    that version already."""
    race, ann, watcher = await _started_with_a_spectator(server)
    await server.service.served.subscriber.unsubscribe(race)
    await ann.give_up()

    async def ended() -> bool:
        meta = await server.service.store.meta(race)
        return meta is not None and meta.status == "finished"

    await eventually(ended, "the race stored as finished")
    hub = server.service.hubs[race]
    stored = await server.service.store.meta(race)
    assert stored is not None
    hub.mark_dirty()  # the flush that reads the ended race's table first
    await eventually(lambda: hub.flushed_version >= stored.version, "a flush of the ended race's table")
    finished = await watcher.expect(p.Finished, timeout=10)
    assert [s.status for s in finished.results.standings] == ["gave_up"]
    for c in (ann, watcher):
        await c.close()


async def test_a_join_or_a_create_sent_twice_by_a_retry_applies_once(redis_url: str) -> None:
    """The retry may resend a script whose first run went through (the reply was lost): the join finds
    its own seat instead of ``name_taken``, the create its own race instead of a collision."""
    client = redis_client(redis_url)
    try:
        store = Store(client)
        meta = races.new_race(p.Create(seats=3), int(time.time() * 1000), None)
        assert await store.create_race(meta)
        k = Keys(meta.id)
        fields: list[object] = [meta.code]
        for key, value in vars(meta).items():
            fields += [key, int(value) if isinstance(value, bool) else value]
        assert (await store._create(keys=[k.meta], args=fields))[0] == b"ok", "the same create again"

        now = int(time.time() * 1000)
        args = ["ann", "ann", 0, k.chan, "conn.1", now + 15_000, "", now, ""]
        first = await store._join(keys=k.seats(), args=args)
        again = await store._join(keys=k.seats(), args=args)
        assert first[0] == again[0] == b"ok" and first[1:4] == again[1:4] and again[4] == b"again"
        assert int(await client.hget(k.meta, "players")) == 1
        other = await store._join(keys=k.seats(), args=["ann", "ann", 0, k.chan, "conn.2", now + 15_000, "", now, ""])
        assert other == [b"err", b"name_taken"], "another connection's join under the name is a new join"
    finally:
        await client.aclose()


async def test_moves_of_two_races_in_one_pipeline_run_after_redis_forgot_the_script(redis_url: str) -> None:
    """A Redis that lost its scripts (restarted, flushed) still runs the moves of a batch, several races in
    one pipeline or one race alone (a guard for whoever drops redis-py's SCRIPT EXISTS before each flush:
    measured, that alone made flushes smaller and cost more CPU per move under full load)."""
    from server.store.batcher import LANES, MoveBatcher
    from server.store.records import StoreError
    from server.store.scripts import register

    client = redis_client(redis_url)
    try:
        batcher = MoveBatcher(client, register(client, "moves"), tick_ms=100)
        for _ in range(2):  # once with the script unknown to Redis, once known
            await client.script_flush()
            # Two races waiting together: one pipeline. Neither race exists, so the script refuses both
            # moves: what matters is that it ran (a refusal), where a lost script would be NOSCRIPT.
            fields = MoveCommit(seat=0, now=0, seq=1, expected_n=0, move="S", home=0, moves=1, status="racing")
            results = await asyncio.gather(batcher.call("nosuchrace1", fields),
                                           batcher.call("nosuchrace2", fields), return_exceptions=True)
            assert all(isinstance(r, StoreError) for r in results), results
            # And one race alone: the plain script call.
            await client.script_flush()
            alone = await asyncio.gather(batcher.call("nosuchrace3", fields), return_exceptions=True)
            assert isinstance(alone[0], StoreError), alone
    finally:
        await client.aclose()


async def test_reads_ride_with_the_moves_and_each_gets_its_own_reply_or_error(redis_url: str) -> None:
    """A read given to the batcher (the hubs' progress tables) goes in the moves' round trip: each read
    gets its own script's reply, a read Redis refuses (a key of the wrong type) fails alone, and a
    Redis that forgot the read's script still answers it."""
    from redis.exceptions import ResponseError

    from server.store.batcher import MoveBatcher
    from server.store.records import StoreError
    from server.store.scripts import register

    client = redis_client(redis_url)
    try:
        read_lines = register(client, "read_lines")
        batcher = MoveBatcher(client, register(client, "moves"), tick_ms=100)
        k, wrong = Keys("readsride1"), Keys("readsride2")
        await client.hset(k.meta, "version", 7)
        await client.hset(k.progress, mapping={"0": b"line0", "1": b"line1"})
        await client.set(wrong.progress, "not a hash")
        fields = MoveCommit(seat=0, now=0, seq=1, expected_n=0, move="S", home=0, moves=1, status="racing")
        for flushed in (False, True):
            if flushed:
                await client.script_flush()
            got = await asyncio.gather(batcher.call("nosuchrace9", fields),
                                       batcher.script_call(read_lines, [k.meta, k.progress]),
                                       batcher.script_call(read_lines, [wrong.meta, wrong.progress]),
                                       batcher.script_call(read_lines, [k.meta, k.progress]), return_exceptions=True)
            assert isinstance(got[0], StoreError), got  # the move still answered by moves.lua
            for table in (got[1], got[3]):
                assert isinstance(table, list), table
                assert int(table[0]) == 7 and dict(zip(table[1][::2], table[1][1::2])) == {
                    b"0": b"line0", b"1": b"line1"}, table
            assert isinstance(got[2], ResponseError) and "WRONGTYPE" in str(got[2]), got[2]
            # a read alone, no move waiting
            alone = await batcher.script_call(read_lines, [k.meta, k.progress])
            assert int(alone[0]) == 7
    finally:
        await client.delete(k.meta, k.progress, wrong.progress)
        await client.aclose()


async def test_a_moves_then_is_called_once_with_its_done_future_and_one_that_raises_spoils_nothing(
        redis_url: str) -> None:
    """``then`` runs as the batcher settles the move (the future already done); a ``then`` that raises is
    reported to the loop's exception handler and the other moves of the round trip are answered."""
    from server.store.batcher import MoveBatcher
    from server.store.records import StoreError
    from server.store.scripts import register

    client = redis_client(redis_url)
    loop = asyncio.get_running_loop()
    reported: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _loop, context: reported.append(context))
    try:
        batcher = MoveBatcher(client, register(client, "moves"), tick_ms=100)
        seen: list[tuple[asyncio.Future[Any], bool]] = []

        def broken(fut: asyncio.Future[Any]) -> None:
            raise RuntimeError("a broken callback")

        fields = MoveCommit(seat=0, now=0, seq=1, expected_n=0, move="S", home=0, moves=1, status="racing")
        futures = [batcher.call("thenrace1", fields, broken),
                   batcher.call("thenrace2", fields, lambda fut: seen.append((fut, fut.done())))]
        results = await asyncio.gather(*futures, return_exceptions=True)
        assert all(isinstance(r, StoreError) for r in results), results  # neither race exists: both refused
        assert seen == [(futures[1], True)], "called once, with its own future, already done"
        assert [str(c["exception"]) for c in reported] == ["a broken callback"]
    finally:
        loop.set_exception_handler(None)
        await client.aclose()


async def test_moves_of_a_batcher_cancelled_before_it_ran_are_answered_not_lost_in_silence(redis_url: str) -> None:
    """The server stopping cancels every task at once, a batcher lane that has not run yet among them:
    the moves (and the reads) it was to send still get an answer (a connection error: the connection answers
    ``unavailable``), none waits forever."""
    from server.store import UNAVAILABLE
    from server.store.batcher import LANES, MoveBatcher
    from server.store.records import StoreError
    from server.store.scripts import register

    client = redis_client(redis_url)
    try:
        batcher = MoveBatcher(client, register(client, "moves"), tick_ms=100)
        fields = MoveCommit(seat=0, now=0, seq=1, expected_n=0, move="S", home=0, moves=1, status="racing")
        told: list[asyncio.Future[Any]] = []
        moves = [batcher.call(f"race{i}", fields, told.append) for i in range(LANES + 1)]
        moves.append(batcher.script_call(register(client, "read_lines"), [Keys("race0").meta, Keys("race0").progress]))
        lanes = [lane.task for lane in batcher._lanes if lane.task is not None]
        assert len(lanes) == LANES, "every lane started for the moves waiting"
        for task in lanes:
            task.cancel()  # before it ever ran
        await asyncio.wait(lanes, timeout=5)
        for fut in moves:
            assert fut.done() and isinstance(fut.exception(), UNAVAILABLE), fut
        assert told == moves[:-1], "each move's then, once"
        # and the batcher goes on: its lanes are free again
        again = await asyncio.gather(batcher.call("race3", fields), return_exceptions=True)
        assert isinstance(again[0], StoreError), again
    finally:
        await client.aclose()


async def test_a_races_history_keeps_about_its_cap_and_says_when_it_no_longer_reaches_back(redis_url: str) -> None:
    """Past EVENTS_MAX events a race's history is trimmed (approximately: whole stream nodes), so that a
    long race's stream stays bounded; a resume from before what is kept gets None (a full table), one
    from within it gets every event after it, in order."""
    from moves_script import commit_round, started_race

    from server.store import EVENTS_MAX

    client = redis_client(redis_url)
    try:
        store = Store(client)
        race, now = "historycap1", int(time.time() * 1000)
        await started_race(store, race, 2, now)
        n = [0, 0]
        for _ in range(EVENTS_MAX // 40 + 5):  # batches of 40 moves, as the batcher sends them
            await commit_round(store, race, n, 20, now)
        version = (await store.meta(race)).version  # type: ignore[union-attr]
        assert version > EVENTS_MAX + 100
        kept = int(await client.xlen(Keys(race).history))
        assert EVENTS_MAX <= kept <= EVENTS_MAX + 200, kept
        assert await store.history(race, 0, version) is None, "the start is trimmed away"
        recent = await store.history(race, version - 50, version)
        assert recent is not None and [e.version for e in recent] == list(range(version - 49, version + 1))
        assert all(e.kind == "move" for e in recent)
    finally:
        await client.aclose()
