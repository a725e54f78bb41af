"""Replica acknowledgements (``--replica-acks``): nothing a player is told succeeded is only on a master.

Real processes: a redis-server master with a replica started by the test (tests/replica_util.py), the
replica paused with SIGSTOP to make WAIT time out, and the server in process over real sockets. The
promise: a move is acknowledged only once the replica has it; a move no replica confirmed is answered
``unavailable``, and its resend under the same ``seq`` is acknowledged exactly once, the game exact;
``off``, and ``auto`` on a Redis without replicas, send no WAIT at all.
"""

from __future__ import annotations

import asyncio
import json
import logging
import urllib.request
from pathlib import Path
from typing import Any, AsyncIterator, Iterator

import pytest
from redis_util import Client, LiveServer, create_race, eventually, live_server, start_race
from replica_util import RedisNode, Replicated

from server.store import Keys
from shared import protocol as p
from shared.engine import Game
from shared.variants import get_variant

WIN = json.loads((Path(__file__).parent / "data" / "race_win_line.json").read_text())
TIMEOUT_MS = 1500
"""The servers' ``--replica-ack-timeout`` here: a paused replica costs each move that long. Not shorter:
at 300 ms a live replica on a machine with every core busy missed it (a hello answered unavailable)."""


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[Replicated]:
    with Replicated(tmp_path) as replicated:
        yield replicated


@pytest.fixture
def lone(tmp_path: Path) -> Iterator[Replicated]:
    with Replicated(tmp_path, replica=False) as replicated:
        yield replicated


async def racing(server: LiveServer) -> tuple[str, Client, str]:
    """A one-seat race on the test deal, started: its id, its racer and the racer's token."""
    created = await create_race(server, seats=1, deal_source="number", deal=WIN["deal"])
    ann = await Client.connect(server)
    welcome = await ann.hello(created.race.id, "ann")
    await start_race(server, created.creator_token, [ann])
    return created.race.id, ann, welcome.token


def scrape(server: LiveServer) -> str:
    with urllib.request.urlopen(server.url + "/metrics", timeout=5) as resp:
        return resp.read().decode()


def board_after(moves: list[str]) -> p.View:
    game = Game.new(get_variant(WIN["variant"]), WIN["deal"])
    for text in moves:
        game.push_text(text)
    return p.View.from_player_view(game.view())


@pytest.fixture
async def acked(pair: Replicated) -> AsyncIterator[LiveServer]:
    """A server on the pair with the default ``--replica-acks auto``."""
    async with live_server(pair.url, replica_ack_timeout=TIMEOUT_MS) as server:
        yield server


async def test_moves_wait_for_the_replica_and_a_move_it_misses_is_unavailable_then_acked_once(
        pair: Replicated, acked: LiveServer) -> None:
    assert acked.service.store.replicas.active, "auto found the replica"
    race, ann, _ = await racing(acked)
    waits = pair.master.command_calls("wait")
    first = await ann.move(WIN["moves"][0])
    assert isinstance(first, p.Ack), first
    assert pair.master.command_calls("wait") > waits, "the ack waited for the replica"

    assert pair.replica is not None
    pair.replica.pause()
    try:
        second = await ann.move(WIN["moves"][1])
        assert isinstance(second, p.Reject) and second.reason == "unavailable", second
        # The move is on the master, unconfirmed: its resend is not acknowledged while no replica has it.
        again = await ann.move(WIN["moves"][1], seq=second.seq)
        assert isinstance(again, p.Reject) and again.reason == "unavailable", again
    finally:
        pair.replica.resume()
    await eventually(pair.in_sync, "the replica caught up")

    resent = await ann.move(WIN["moves"][1], seq=second.seq)
    assert isinstance(resent, p.Ack) and resent.duplicate and resent.seq == second.seq, resent
    assert resent.view == board_after(WIN["moves"][:2])
    third = await ann.move(WIN["moves"][2])
    assert isinstance(third, p.Ack) and not third.duplicate, third
    assert third.view == board_after(WIN["moves"][:3])
    # Exactly one acknowledgement of each move: frames are answered in order, so whatever comes before
    # the pong of a ping sent now holds any second answer (progress frames may come, and are fine).
    await ann.send(p.Ping(nonce=37))
    while not isinstance(frame := await ann.recv(), p.Pong):
        assert not isinstance(frame, (p.Ack, p.Reject)), f"a second answer: {frame}"
    assert pair.replica.client().lrange(Keys(race).log(0), 0, -1) == [m.encode() for m in WIN["moves"][:3]]
    metrics = await asyncio.to_thread(scrape, acked)
    assert "thieves_replica_acks 1" in metrics
    assert 'thieves_replica_writes_total{outcome="unconfirmed"} 2' in metrics, metrics


async def test_a_give_up_the_replica_misses_is_unavailable_and_its_resend_answered(pair: Replicated,
                                                                                   acked: LiveServer) -> None:
    _, ann, _ = await racing(acked)
    assert pair.replica is not None
    pair.replica.pause()
    try:
        await ann.send(p.GiveUp())
        error = await ann.expect(p.Error)
        assert error.code == "unavailable", error
    finally:
        pair.replica.resume()
    await eventually(pair.in_sync, "the replica caught up")
    await ann.give_up()  # answered gave_up, not refused for the give-up it asked for
    late = await ann.move(WIN["moves"][0])
    assert isinstance(late, p.Reject) and late.reason == "player_finished", late


async def plays_without_wait(redis: Replicated, **settings: Any) -> None:
    """A race played (three moves, a give-up) on a server with ``settings``, and no WAIT sent."""
    async with live_server(redis.url, **settings) as server:
        assert not server.service.store.replicas.active
        _, ann, _ = await racing(server)
        for text in WIN["moves"][:3]:
            assert isinstance(await ann.move(text), p.Ack)
        await ann.give_up()
    assert redis.master.command_calls("wait") == 0


async def test_off_sends_no_wait(pair: Replicated) -> None:
    await plays_without_wait(pair, replica_acks="off")


async def test_auto_on_a_redis_without_replicas_sends_no_wait(lone: Replicated) -> None:
    await plays_without_wait(lone)


async def test_moves_lost_in_a_failover_make_the_player_reconnect_to_the_stored_board(
        pair: Replicated, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Without replica acks, a failover loses what the replica had not received: the player is told and
    reconnects to the board as stored, rather than playing on from a board the store no longer has.

    The failover by hand, with real processes: the replica cut off and promoted, moves acknowledged by
    the master alone, the master SIGKILLed, then a new master on its address made from the replica's data."""
    assert pair.replica is not None
    async with live_server(pair.url, replica_acks="off") as server:
        race, ann, token = await racing(server)
        first = await ann.move(WIN["moves"][0])
        assert isinstance(first, p.Ack)
        await eventually(pair.in_sync, "the replica has the first move")
        with pair.replica.client() as client:
            client.replicaof("NO", "ONE")  # cut off (a partition), with what it had: the first move only
        for text in WIN["moves"][1:3]:
            assert isinstance(await ann.move(text), p.Ack)
        pair.master.kill()
        pair.master = RedisNode(tmp_path / "master-again", pair.replica.port, port=pair.master.port)
        await eventually(lambda: pair.master.answers() and pair.master.link_up(), "the new master copied the replica")
        with pair.master.client() as client:
            client.replicaof("NO", "ONE")

        lost = await ann.move(WIN["moves"][3])
        assert isinstance(lost, p.Reject) and lost.reason == "unavailable", lost
        assert "2 moves" in lost.message, lost.message
        assert await ann.closed() == p.CloseCode.TRY_AGAIN_LATER
        warned = [r for r in caplog.records if "event=moves_lost" in r.getMessage()]
        assert len(warned) == 1 and warned[0].levelno == logging.WARNING, caplog.text
        assert f"race={race}" in warned[0].getMessage() and "lost=2" in warned[0].getMessage()
        back = await Client.connect(server)
        welcome = await back.hello(race, token=token)
        assert welcome.seq == first.seq and welcome.view == board_after(WIN["moves"][:1])
        again = await back.move(WIN["moves"][1], seq=welcome.seq + 1)
        assert isinstance(again, p.Ack) and again.view == board_after(WIN["moves"][:2]), again


async def test_auto_follows_a_replica_that_comes_and_goes(lone: Replicated, tmp_path: Path) -> None:
    async with live_server(lone.url) as server:
        replicas = server.service.store.replicas
        assert not replicas.active
        lone.replica = RedisNode(tmp_path / "late-replica", lone.master.port)
        try:
            await eventually(lambda: replicas.active, "auto noticed the new replica")
            await eventually(lone.in_sync, "the replica is in sync")
            _, ann, _ = await racing(server)
            waits = lone.master.command_calls("wait")
            assert isinstance(await ann.move(WIN["moves"][0]), p.Ack)
            assert lone.master.command_calls("wait") > waits
        finally:
            lone.replica.stop()
        await eventually(lambda: not replicas.active, "auto noticed the replica gone")
        assert isinstance(await ann.move(WIN["moves"][1]), p.Ack)
