"""A cluster node that stops answering holds up only its own races' moves (issue 37: "a failed node stalls
only its own races"). A real 3-master cluster; one master paused with SIGSTOP (a node timeout long enough
that it is not failed over meanwhile); the moves are of races that do not exist, so each is refused by the
moves script, which shows it ran (as tests/test_batcher_linger.py does)."""

from __future__ import annotations

import asyncio
import os
import signal
from typing import Any

import pytest
from cluster_util import LocalCluster
from redis_util import DEADLINE, eventually

from server.store import Keys, Store, redis_client
from server.store.records import MoveCommit, StoreError

MOVE = MoveCommit(seat=0, now=0, seq=1, expected_n=0, move="S", home=0, moves=1, status="racing")


def _races_on(client: Any, port: int, count: int, other: bool = False) -> list[str]:
    """``count`` race ids whose slot the node on ``port`` serves (``other``: that it does not)."""
    found = []
    for i in range(100_000):
        race = f"nodebatch{i}"
        if (client.get_node_from_key(Keys(race).meta).port == port) != other:
            found.append(race)
            if len(found) == count:
                return found
    raise AssertionError(f"no {count} races found for port {port}")


def _all_taken(store: Store) -> bool:
    """Every move handed to the batchers has gone out in a round trip (none waits for a lane)."""
    moves: Any = store._moves
    batchers = list(moves.by_node.values()) if hasattr(moves, "by_node") else [moves]
    return not any(b._pending for b in batchers)


async def test_a_paused_cluster_master_holds_up_only_its_own_races_moves() -> None:
    with LocalCluster(node_timeout_ms=60_000) as cluster:
        client = redis_client(cluster.url, cluster=True)
        try:
            await client.initialize()
            store = Store(client)
            paused = cluster.ports[0]
            stuck = _races_on(client, paused, 2)
            healthy = _races_on(client, paused, 1, other=True)[0]
            for race in (*stuck, healthy):  # every connection open before the pause
                with pytest.raises(StoreError):
                    await store.commit_move(race, MOVE)
            os.kill(cluster.processes[0].pid, signal.SIGSTOP)
            try:
                # Two round trips under way to the paused node: one a lane.
                first = store.commit_move(stuck[0], MOVE)
                await eventually(lambda: _all_taken(store), "the first move sent")
                second = store.commit_move(stuck[1], MOVE)
                await eventually(lambda: _all_taken(store), "the second move sent")
                moved = store.commit_move(healthy, MOVE)
                done, _ = await asyncio.wait([first, second, moved], timeout=DEADLINE,
                                             return_when=asyncio.FIRST_COMPLETED)
                assert moved in done and not first.done() and not second.done(), \
                    "the healthy node's move is answered while the paused node's still wait"
                assert isinstance(moved.exception(), StoreError), "the moves script ran on the healthy node"
            finally:
                os.kill(cluster.processes[0].pid, signal.SIGCONT)
            await asyncio.wait_for(asyncio.gather(first, second, return_exceptions=True), DEADLINE)
        finally:
            await client.aclose()
