"""Racers are sent what their screen shows as it changes, at most ``racer_hz`` frames a second; a change
of a move count alone waits for their next frame, or for ``frames.RACER_LAG`` (server/race/frame_plan.py).
Spectators get every change at once.

The first move of the winning line (``ba``) changes only ann's move count; the second (``bF``) brings a
card home, which every racer sees.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from redis_util import Client, LiveServer, caught_up, create_race, eventually, live_server, start_race

from server.race import frame_plan
from server.race.ticker import DueTimer
from shared import protocol as p

WIN = json.loads((Path(__file__).parent / "data" / "race_win_line.json").read_text())


async def _race_of_two_and_a_spectator(server: LiveServer) -> tuple[str, Client, Client, Client, int]:
    created = await create_race(server, seats=2, deal_source="number", deal=WIN["deal"])
    ann, bob, watcher = [await Client.connect(server) for _ in range(3)]
    seat = (await ann.hello(created.race.id, "ann")).seat
    await bob.hello(created.race.id, "bob")
    await watcher.hello(created.race.id, role="spectator")
    while not isinstance(msg := await bob.recv(timeout=10), p.Progress) or not msg.full:
        pass  # bob has his first table (it follows the welcome): what follows comes to him as changes
    await start_race(server, created.creator_token, [ann, bob, watcher])
    assert seat is not None
    await _until_line(bob, seat, status="racing")  # the start's change reached bob: the moves come after it
    return created.race.id, ann, bob, watcher, seat


async def _until_line(client: Client, seat: int, **figures: object) -> list[p.Progress]:
    """Read until the client's table shows ``seat`` with these figures; the progress frames read (not full)."""
    frames = []
    while (line := client.table.lines.get(seat)) is None or any(getattr(line, k) != v for k, v in figures.items()):
        msg = await client.recv(timeout=10)
        if isinstance(msg, p.Progress) and not msg.full:
            frames.append(msg)
    return frames


async def test_a_move_count_alone_reaches_the_other_racers_with_their_next_visible_change(
        server: LiveServer, monkeypatch: pytest.MonkeyPatch) -> None:
    race, ann, bob, watcher, seat = await _race_of_two_and_a_spectator(server)
    monkeypatch.setattr(frame_plan, "RACER_LAG", 60.0)  # no catch-up frame from now on
    try:
        assert isinstance(await ann.move(WIN["moves"][0]), p.Ack)
        await _until_line(watcher, seat, moves=1)  # a flush read the table after ann's first move ...
        assert isinstance(await ann.move(WIN["moves"][1]), p.Ack)
        frames = await _until_line(bob, seat, home=1)
        # ... and sent bob nothing of it: his next frame about ann is the card home, with both moves.
        about_ann = [line for f in frames for line in f.players if line.seat == seat]
        assert [(line.moves, line.home) for line in about_ann] == [(2, 1)], "\n".join(map(repr, frames))
        await caught_up(bob, server, race)  # a racer's frames still carry the version: a resume diffs from it
    finally:
        for c in (ann, bob, watcher):
            await c.close()


async def test_a_racer_whose_rivals_only_move_is_caught_up_within_the_lag(
        server: LiveServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing visible follows ann's first move: bob's table (its move count, its version) still catches up."""
    monkeypatch.setattr(frame_plan, "RACER_LAG", 0.3)
    race, ann, bob, watcher, seat = await _race_of_two_and_a_spectator(server)
    try:
        assert isinstance(await ann.move(WIN["moves"][0]), p.Ack)
        frames = await _until_line(bob, seat, moves=1, home=0)
        assert bob.table.lines[seat] in frames[-1].players
        await caught_up(bob, server, race)
    finally:
        for c in (ann, bob, watcher):
            await c.close()


async def test_racers_get_at_most_racer_hz_frames_spectators_every_change(redis_url: str) -> None:
    """At one racers' frame every 4 s, ann's moves up to her second card home (two visible changes, the
    spectator shown the first before the second is made) reach bob as one frame with all of them; his
    table is then exact."""
    async with live_server(redis_url, racer_hz=0.25) as server:
        race, ann, bob, watcher, seat = await _race_of_two_and_a_spectator(server)  # bob's last frame: the start
        try:
            home = played = 0
            while home < 2:
                ack = await ann.move(WIN["moves"][played])
                assert isinstance(ack, p.Ack)
                played += 1
                home = sum("A23456789TJQK".index(card[0]) + 1 for card in ack.view.foundations if card)
                if home == 1:  # the spectator's flush of the first card home (racers unpaced would get it too)
                    await _until_line(watcher, seat, moves=played, home=1)
            await _until_line(watcher, seat, moves=played, home=2)
            frames = await _until_line(bob, seat, moves=played, home=2)
            about_ann = [line for f in frames for line in f.players if line.seat == seat]
            assert [(line.moves, line.home) for line in about_ann] == [(played, 2)], "\n".join(map(repr, frames))
            await caught_up(bob, server, race)
        finally:
            for c in (ann, bob, watcher):
                await c.close()


def test_the_racers_timer_is_armed_again_and_brought_forward_on_uvloop() -> None:
    """The server runs on uvloop, whose ``call_later(0)`` is a plain ``Handle`` without ``when()``: a move
    that asked for the racers' frame again while such a timer was armed failed with ``internal`` (seen
    in the edge soak under load; the tests' own asyncio loop always gave a ``TimerHandle``). Unit level,
    on a uvloop loop: asked at once twice, then later, then sooner, the hub's racers' timer
    (server/race/ticker.py ``DueTimer``) fires once each time, never later than asked."""
    uvloop = pytest.importorskip("uvloop")

    marks: asyncio.Queue[float] = asyncio.Queue()

    async def main() -> None:
        loop = asyncio.get_running_loop()
        timer = DueTimer(lambda: marks.put_nowait(loop.time()))
        timer.within(0)
        timer.within(0)  # raised AttributeError ('Handle' object has no attribute 'when')
        timer.within(5)  # later than the timer armed: it stays
        await asyncio.wait_for(marks.get(), 5)
        assert marks.empty()
        timer.within(60)
        asked = loop.time()
        timer.within(0.05)  # sooner than the one armed: brought forward
        assert await asyncio.wait_for(marks.get(), 5) - asked < 5 and marks.empty()

    loop = uvloop.new_event_loop()
    try:
        loop.run_until_complete(main())
    finally:
        loop.close()


async def test_a_spectator_who_comes_mid_race_is_sent_a_move_count_at_once(
        server: LiveServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """While only racers are connected, a change of a move count alone waits for their next frame; once a
    spectator has come, every change goes out at once again (the hub looks again at who is connected
    when a connection comes: it keeps its answer between moves)."""
    monkeypatch.setattr(frame_plan, "RACER_LAG", 60.0)  # no catch-up frame from now on
    created = await create_race(server, seats=2, deal_source="number", deal=WIN["deal"])
    ann, bob = await Client.connect(server), await Client.connect(server)
    watcher = None
    try:
        seat = (await ann.hello(created.race.id, "ann")).seat
        await bob.hello(created.race.id, "bob")
        await start_race(server, created.creator_token, [ann, bob])
        assert seat is not None
        await _until_line(bob, seat, status="racing")
        assert isinstance(await ann.move("S"), p.Ack)  # a draw: ann's move count alone; only racers here
        watcher = await Client.connect(server)
        await watcher.hello(created.race.id, role="spectator")
        while not isinstance(msg := await watcher.recv(timeout=10), p.Progress) or not msg.full:
            pass  # the watcher's first table (it follows the welcome): what follows comes to it as changes
        assert watcher.table.lines[seat].moves == 1
        assert isinstance(await ann.move("S"), p.Ack)
        await _until_line(watcher, seat, moves=2)  # at once: not held for the racers' lag (a minute here)
    finally:
        for c in (ann, bob, watcher):
            if c is not None:
                await c.close()


async def test_the_start_shows_as_racing_though_a_flush_read_the_table_before_the_hub_read_the_start(
        server: LiveServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """The hub hears of the start, reads the race's meta (to announce it) and flushes its table, in either
    order. A flush that read the table first made it with the lobby's statuses; the racers must still be
    shown racing at once, not after the next move (here: none)."""
    created = await create_race(server, seats=2, deal_source="number", deal=WIN["deal"])
    ann, bob = await Client.connect(server), await Client.connect(server)
    try:
        seat = (await ann.hello(created.race.id, "ann")).seat
        await bob.hello(created.race.id, "bob")
        assert seat is not None
        await _until_line(bob, seat, status="waiting")
        store = server.service.store
        real_meta = store.meta

        async def late_meta(race: str) -> object:
            meta = await real_meta(race)
            if race == created.race.id and meta is not None and meta.started:
                # The start's announcement gets the meta only once a flush has made the table at the start.
                hub = server.service.hubs[race]
                await eventually(lambda: hub.flushed_version >= meta.version, "a flush of the started table")
            return meta

        monkeypatch.setattr(store, "meta", late_meta)
        await start_race(server, created.creator_token, [ann, bob])
        await _until_line(bob, seat, status="racing")
    finally:
        for c in (ann, bob):
            await c.close()
