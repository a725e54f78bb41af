"""Scale-out: two ``thieves-server`` processes on one Redis serve one race together.

A race created through one process is joinable through the other, its
players are spread over both, a spectator on one sees the moves made
through the other, and a player can move its seat from one process to the
other mid-race (what a load balancer does after a replica dies).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Iterator

import pytest
from process_util import ServerProcess
from redis_util import PROCESS_ARGS, Client, create_race, start_race

from shared import protocol as p
from shared.record import GameRecord, replay

WIN = json.loads((Path(__file__).parent / "data" / "race_win_line.json").read_text())


@pytest.fixture
def two_servers(redis_url: str, tmp_path: Path) -> Iterator[tuple[ServerProcess, ServerProcess]]:
    a = ServerProcess(redis_url, args=PROCESS_ARGS, log_path=tmp_path / "a.log")
    b = ServerProcess(redis_url, args=PROCESS_ARGS, log_path=tmp_path / "b.log")
    try:
        a.start()
        b.start()
        yield a, b
    finally:
        a.close()
        b.close()


async def _seen(watcher: Client, seat: int, moves: int) -> p.PlayerProgress:
    """Read until the watcher's table shows ``seat`` with ``moves`` moves."""
    while True:
        line = watcher.table.lines.get(seat)
        if line is not None and line.moves == moves:
            return line
        await watcher.recv()


async def test_one_race_over_two_processes(two_servers: tuple[ServerProcess, ServerProcess]) -> None:
    a, b = two_servers
    created = await create_race(a, seats=2, deal_source="number", deal=WIN["deal"])
    status, body = b.http("GET", f"/races/{created.race.code}")
    assert status == 200 and body["race"]["id"] == created.race.id, "created on A, known on B"

    ann = await Client.connect(a)
    w_ann = await ann.hello(created.race.code, "ann")
    bob = await Client.connect(b)
    w_bob = await bob.hello(created.race.code, "bob")
    assert (w_ann.seat, w_bob.seat) == (0, 1)
    watcher = await Client.connect(b)
    await watcher.hello(created.race.id, role="spectator")
    await start_race(b, created.creator_token, [ann, bob])  # started through B: A's player hears it
    await watcher.expect(p.Countdown)

    for text in WIN["moves"][:20]:
        assert isinstance(await ann.move(text), p.Ack)
    line = await _seen(watcher, 0, 20)  # moves made through A, seen by a spectator on B
    assert line.home == 2 and line.rank == 1
    for text in WIN["moves"][:3]:
        assert isinstance(await bob.move(text), p.Ack)
    assert (await _seen(ann, 1, 3)).home == 1, "and B's moves reach A's players"

    # A's player moves its seat to B mid-race.
    await ann.close()
    ann = await Client.connect(b, ann.table)
    welcome = await ann.hello(created.race.id, token=w_ann.token, last_version=ann.table.version)
    assert welcome.resumed and welcome.seq == 20
    for seq, text in enumerate(WIN["moves"][20:], start=21):
        ack = await ann.move(text, seq=seq)
        assert isinstance(ack, p.Ack), ack
    assert ack.status == "finished"
    await bob.give_up()
    finished = [await c.expect(p.Finished) for c in (ann, bob, watcher)]
    res = finished[0].results
    assert finished[1].results == finished[2].results == res
    assert [(s.name, s.status) for s in res.standings] == [("ann", "finished"), ("bob", "gave_up")]
    assert res.records[0].moves == WIN["moves"]
    for rec in res.records:
        assert replay(GameRecord("forty-thieves", res.deal, tuple(rec.moves))).game.position() == rec.position
    status, body = a.http("GET", f"/races/{created.race.id}/results")
    assert status == 200 and body["standings"][0]["name"] == "ann"
    for c in (ann, bob, watcher):
        await c.close()


async def test_players_join_through_either_process_concurrently(two_servers: tuple[ServerProcess, ServerProcess]) -> None:
    a, b = two_servers
    created = await create_race(b, seats=8, deal_source="number", deal=7)

    async def join(i: int) -> tuple[Client, p.Welcome]:
        c = await Client.connect(a if i % 2 else b)
        return c, await c.hello(created.race.id, f"p{i}")

    joined = await asyncio.gather(*(join(i) for i in range(8)))
    assert sorted(w.seat for _, w in joined) == list(range(8)), "no seat given twice across processes"
    late = await Client.connect(a)
    await late.send(p.Hello(protocol=p.PROTOCOL_VERSION, race=created.race.id, name="late"))
    assert (await late.error()).code == "race_full"
    for c, _ in joined:
        await c.close()
    await late.close()
