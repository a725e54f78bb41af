"""The batcher's linger (``--commit-linger-ms``): on a busy process a round trip waits a moment for more
moves, which then share it; on a quiet process nothing waits. A real Redis runs the moves script: the
moves are of races that do not exist, so each is refused, which shows the script ran (server/store/batcher.py).
"""

from __future__ import annotations

import asyncio
from typing import Any

from redis_util import eventually

from server.store import UNAVAILABLE, redis_client
from server.store.batcher import MoveBatcher
from server.store.records import MoveCommit, StoreError
from server.store.scripts import register

MOVE = MoveCommit(seat=0, now=0, seq=1, expected_n=0, move="S", home=0, moves=1, status="racing")
"""A move (its race does not exist: the script refuses it)."""
LINGER = 1.0
"""Long, so that no loaded machine makes the test's few calls miss it (a server's is milliseconds)."""
WINDOW = 0.2


def _batcher(client: Any, linger: float, cluster: bool = False) -> tuple[MoveBatcher, list[str]]:
    """A batcher on ``client`` and the list its round trips of moves are counted in (its timer's calls)."""
    trips: list[str] = []
    batcher = MoveBatcher(client, register(client, "moves"), tick_ms=100, cluster=cluster,
                          timer=lambda op, _s: trips.append(op), linger=linger, rate_window=WINDOW)
    return batcher, trips


async def lingering_batch(client: Any, cluster: bool = False) -> None:
    """On a busy batcher, a move and four more made after its lane started go in one round trip (on a
    cluster: one flush of concurrent per-race calls, the five races spread over the nodes)."""
    batcher, trips = _batcher(client, LINGER, cluster)
    await _busy(batcher, 5)
    before = len(trips)
    results = await _move_then_more(batcher, 4)
    assert all(isinstance(r, StoreError) for r in results), results  # each ran through the script
    assert len(trips) - before == 1, f"five moves, {len(trips) - before} round trips: they did not wait together"


async def _move_then_more(batcher: MoveBatcher, more: int) -> list[Any]:
    """A move, then ``more`` moves, each once the round trip of the move before it has begun (a lane waits
    out its linger, or has taken what was pending): every result (each a refusal)."""
    calls = [batcher.call("lingerrace0", MOVE)]
    for i in range(1, more + 1):
        await eventually(lambda: batcher._lingering or not batcher._pending, "the last move's round trip to begin",
                         timeout=10)
        calls.append(batcher.call(f"lingerrace{i}", MOVE))
    return await asyncio.wait_for(asyncio.gather(*calls, return_exceptions=True), 30)


async def _busy(batcher: MoveBatcher, moves: int) -> None:
    """Moves that make the batcher's last count of arrivals fast enough to linger for: ``moves`` in one
    window, then the window over."""
    await asyncio.wait_for(asyncio.gather(*(batcher.call(f"warm{i}", MOVE) for i in range(moves)),
                                          return_exceptions=True), 30)
    loop = asyncio.get_running_loop()
    since = loop.time()
    await eventually(lambda: loop.time() - since >= WINDOW, "the counting window to end", timeout=10)


async def test_on_a_busy_process_the_moves_that_come_while_a_round_trip_lingers_go_with_it(redis_url: str) -> None:
    client = redis_client(redis_url)
    try:
        await lingering_batch(client)
    finally:
        await client.aclose()


async def test_on_a_quiet_process_a_move_does_not_wait(redis_url: str) -> None:
    """No moves came lately: the first goes out at once, alone, and the next takes a round trip of its own."""
    client = redis_client(redis_url)
    try:
        batcher, trips = _batcher(client, LINGER)
        results = await _move_then_more(batcher, 1)
        assert all(isinstance(r, StoreError) for r in results), results
        assert len(trips) == 2, trips
    finally:
        await client.aclose()


async def test_with_no_linger_a_busy_process_does_not_wait_either(redis_url: str) -> None:
    """``--commit-linger-ms 0``: as busy as the first test, and still a round trip at once."""
    client = redis_client(redis_url)
    try:
        batcher, trips = _batcher(client, 0.0)
        await _busy(batcher, 5)
        before = len(trips)
        results = await _move_then_more(batcher, 1)
        assert all(isinstance(r, StoreError) for r in results), results
        assert len(trips) - before == 2, trips
    finally:
        await client.aclose()


async def test_a_process_stopping_while_a_round_trip_lingers_answers_its_moves(redis_url: str) -> None:
    """The server stopping cancels the lane waiting out its linger: the moves it was to carry are answered
    (a connection error, which a connection tells its player as ``unavailable``), and the batcher goes on."""
    client = redis_client(redis_url)
    try:
        batcher, _trips = _batcher(client, LINGER)
        await _busy(batcher, 5)
        moves = [batcher.call("lingerstop0", MOVE)]
        await eventually(lambda: batcher._lingering, "the round trip to linger", timeout=10)
        moves.append(batcher.call("lingerstop1", MOVE))
        lanes = [lane.task for lane in batcher._lanes if lane.task is not None]
        assert len(lanes) == 1, "the lingering lane carries the second move too"
        lanes[0].cancel()
        await asyncio.wait(lanes, timeout=10)
        for fut in moves:
            assert fut.done() and isinstance(fut.exception(), UNAVAILABLE), fut
        assert not batcher._lingering
        again = await asyncio.wait_for(asyncio.gather(batcher.call("lingerstop2", MOVE),
                                                      return_exceptions=True), 30)
        assert isinstance(again[0], StoreError), again
    finally:
        await client.aclose()
