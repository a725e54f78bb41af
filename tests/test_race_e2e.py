"""Whole races over real sockets: players, spectators, standings, the reveal."""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
from pathlib import Path
from typing import Callable

import msgpack
import pytest
from redis_util import Client, LiveServer, create_race, create_short_race, eventually, live_server, start_race

from server.race.clock import now_ms
from shared import protocol as p
from shared.engine import Game
from shared.record import GameRecord, replay
from shared.variants import get_variant

WIN = json.loads((Path(__file__).parent / "data" / "race_win_line.json").read_text())
"""A winning line of forty-thieves deal 2 (checked by replay in the test)."""


async def _join(server: LiveServer, race: str, names: list[str]) -> tuple[list[Client], list[p.Welcome]]:
    clients, welcomes = [], []
    for name in names:
        c = await Client.connect(server)
        welcomes.append(await c.hello(race, name))
        clients.append(c)
    return clients, welcomes


async def _watch_until(watcher: Client, done: Callable[[dict[int, p.PlayerProgress]], bool]) -> dict[int, p.PlayerProgress]:
    seen: dict[int, p.PlayerProgress] = {}
    while not done(seen):
        msg = await watcher.recv()
        if isinstance(msg, p.Progress):
            seen.update({e.seat: e for e in msg.players})
    return seen


async def test_two_player_race_won_by_one_player(server: LiveServer) -> None:
    assert replay(GameRecord(WIN["variant"], WIN["deal"], tuple(WIN["moves"]))).game.is_won()
    created = await create_race(server, seats=2, deal_source="number", deal=WIN["deal"])
    race = created.race
    assert race.status == "lobby" and len(race.code) == 6 and race.deal_source == "number"
    (ann, bob), (w_ann, w_bob) = await _join(server, race.code, ["ann", "bob"])
    assert (w_ann.seat, w_bob.seat) == (0, 1)
    assert w_ann.view is None, "no board before the start"
    watcher = await Client.connect(server)
    w_spec = await watcher.hello(race.id, role="spectator")
    assert w_spec.seat is None and w_spec.token == "" and w_spec.view is None
    assert [e.name for e in w_spec.progress] == ["ann", "bob"]

    countdowns = await start_race(server, created.creator_token, [ann, bob])
    spec_countdown = await watcher.expect(p.Countdown)
    assert spec_countdown.view is None, "spectators never see a board during the race"
    start = Game.new(get_variant("forty-thieves"), WIN["deal"])
    assert countdowns[0].view == countdowns[1].view == p.View.from_player_view(start.view())
    assert countdowns[0].ends_at - countdowns[0].starts_at == race.time_limit * 1000

    for _ in range(3):
        ack = await bob.move("S")
        assert isinstance(ack, p.Ack) and ack.move == "S"
    mirror = start.copy()
    for text in WIN["moves"]:
        ack = await ann.move(text)
        assert isinstance(ack, p.Ack), ack
        mirror.push_text(text)
    assert ack.view == p.View.from_player_view(mirror.view()) and ack.view.home == 104
    assert ack.status == "finished"
    late = await ann.move("S")
    assert isinstance(late, p.Reject) and late.reason == "player_finished"

    seen = await _watch_until(watcher, lambda s: 0 in s and s[0].status == "finished" and 1 in s)
    assert seen[0].rank == 1 and seen[0].home == 104 and seen[0].finished_at is not None
    assert seen[1].rank == 2 and seen[1].moves == 3 and seen[1].status == "racing"

    await bob.give_up()
    finished = [await c.expect(p.Finished) for c in (ann, bob, watcher)]
    res = finished[2].results
    assert finished[0].results == finished[1].results == res

    assert hashlib.sha256(f"forty-thieves|{res.deal}|{res.salt}".encode()).hexdigest() == race.commitment
    assert res.deal == WIN["deal"] and res.commitment == race.commitment
    assert [(s.name, s.status, s.rank) for s in res.standings] == [("ann", "finished", 1), ("bob", "gave_up", 2)]
    assert [r.moves for r in res.records] == [WIN["moves"], ["S", "S", "S"]]
    for rec in res.records:
        replayed = replay(GameRecord("forty-thieves", res.deal, tuple(rec.moves)))
        assert replayed.ok and replayed.game.position() == rec.position
    assert res.records[0].position == mirror.position()

    status, body = await server.http("GET", f"/races/{race.id}/results")
    assert status == 200 and body["deal"] == WIN["deal"] and body["records"][1]["moves"] == ["S"] * 3
    status, body = await server.http("GET", f"/races/{race.id}")
    assert body["race"]["status"] == "finished"
    for c in (ann, bob, watcher):
        await c.close()


async def test_equal_cards_home_rank_by_who_got_there_first(server: LiveServer) -> None:
    created = await create_race(server, seats=3, deal_source="number", deal=WIN["deal"])
    (ann, bob, cy), _ = await _join(server, created.race.id, ["ann", "bob", "cy"])
    await start_race(server, created.creator_token, [ann, bob, cy])
    first_home = WIN["moves"][:2]  # "ba", "bF": one card home
    for text in first_home:
        assert isinstance(await bob.move(text), p.Ack)
    _, lines = await server.service.store.lines(created.race.id)
    bob_home_at = lines[1].home_at
    # Moves are stamped in milliseconds: ann's must come in a later one, or the two tie (and seat decides).
    await eventually(lambda: now_ms() > bob_home_at, "the clock passed bob's millisecond")
    for text in first_home:
        assert isinstance(await ann.move(text), p.Ack)
    assert isinstance(await cy.move("S"), p.Ack)
    for c in (ann, bob, cy):
        await c.give_up()
    res = (await ann.expect(p.Finished)).results
    assert [(s.name, s.home) for s in res.standings] == [("bob", 1), ("ann", 1), ("cy", 0)]
    assert res.standings[0].home_at is not None and res.standings[1].home_at is not None
    assert res.standings[0].home_at <= res.standings[1].home_at
    for c in (ann, bob, cy):
        await c.close()


async def test_the_time_limit_ends_the_race_for_everyone(server: LiveServer) -> None:
    created = await create_short_race(server, seats=2, time_limit=1, deal_source="number", deal=7)
    (ann, bob), _ = await _join(server, created.race.id, ["ann", "bob"])
    await start_race(server, created.creator_token, [ann, bob])
    assert isinstance(await ann.move("S"), p.Ack)
    finished = await bob.expect(p.Finished, timeout=5)
    assert (await ann.expect(p.Finished)) == finished
    res = finished.results
    assert [s.status for s in res.standings] == ["racing", "racing"]
    assert [s.moves for s in res.standings] == [1, 0]
    after = await ann.move("S")
    assert isinstance(after, p.Reject) and after.reason == "race_over"
    for c in (ann, bob):
        await c.close()


async def give_up_and_drop(servers: list[LiveServer], races: int) -> None:
    """``races`` two-seat races (their racers spread over ``servers``) where both racers send ``give_up`` and
    close their sockets at once, without waiting for an answer: every race ends at once all the same
    (docs/protocol.md: "the race ends when every player is done"), with its results readable, and no
    connection is left to end it. Why: the end was a task of the connection's hub, which the last
    connection's close cancelled; those races ran to their time limit."""
    created, pairs = [], []
    for i in range(races):
        made = await create_race(servers[i % len(servers)], seats=2, time_limit=3600)
        pair = []
        for j, name in enumerate(("ann", "bob")):
            c = await Client.connect(servers[(i + j) % len(servers)])
            await c.hello(made.race.id, name)
            pair.append(c)
        await start_race(servers[i % len(servers)], made.creator_token, pair)
        created.append(made.race.id)
        pairs.append(pair)

    async def give_up_and_close(c: Client) -> None:
        await c.send(p.GiveUp())
        await c.close()

    await asyncio.gather(*(give_up_and_close(c) for pair in pairs for c in pair))
    store = servers[0].service.store

    async def all_finished() -> bool:
        return all(m is not None and m.status == "finished" for m in await store.metas(created))

    await eventually(all_finished, f"all {races} races to end (their time limit is an hour away)")
    for i, race in enumerate(created):
        status, body = await servers[(i + 1) % len(servers)].http("GET", f"/races/{race}/results")
        assert status == 200, body
        assert [s["status"] for s in body["standings"]] == ["gave_up", "gave_up"]


async def test_a_race_ends_when_every_racer_gives_up_and_drops_at_once(server: LiveServer) -> None:
    await give_up_and_drop([server], 24)


async def test_a_race_whose_players_are_all_done_is_ended_by_the_janitor(redis_url: str) -> None:
    """The store says when the last player is done; should the process it told die before ending the race,
    any process's janitor ends it at its next sweep, not at the time limit."""
    async with live_server(redis_url, lobby_ttl=20) as server:  # a sweep every 5 s
        created = await create_race(server, seats=2, time_limit=3600)
        (ann, bob), _ = await _join(server, created.race.id, ["ann", "bob"])
        await start_race(server, created.creator_token, [ann, bob])
        store = server.service.store
        # Both give-ups stored as by a process that died before it could end the race: nobody ends it now.
        done = [(await store.give_up(created.race.id, seat, now_ms()))[1] for seat in (0, 1)]
        assert done == [False, True]
        finished = await ann.expect(p.Finished, timeout=30)
        assert [s.status for s in finished.results.standings] == ["gave_up", "gave_up"]
        for c in (ann, bob):
            await c.close()


async def test_a_failed_task_of_a_race_hub_is_logged_with_its_race(
        server: LiveServer, server_log: pytest.LogCaptureFixture) -> None:
    created = await create_race(server, seats=2)
    (ann,), _ = await _join(server, created.race.id, ["ann"])
    hub = server.service.hubs[created.race.id]

    async def fails() -> None:
        raise RuntimeError("the hub's task failed")

    hub.spawn(fails())

    def logged() -> bool:
        return any("event=hub_task_failed" in r.getMessage() and created.race.id in r.getMessage()
                   and "the hub's task failed" in r.getMessage() for r in server_log.records)

    await eventually(logged, "the failure in the log, with the race")
    await ann.close()


async def test_ten_players_move_concurrently_on_one_deal(server: LiveServer) -> None:
    deal = 4242
    created = await create_race(server, seats=10, start_mode="all-ready", deal_source="number", deal=deal)
    clients, welcomes = await _join(server, created.race.id, [f"p{i}" for i in range(10)])
    assert sorted(w.seat for w in welcomes) == list(range(10))
    for c in clients[:-1]:
        await c.send(p.Ready())

    async def nine_ready() -> bool:
        status, body = await server.http("GET", f"/races/{created.race.id}")
        assert body["race"]["status"] == "lobby", "not every seat is ready yet"
        return sum(e["status"] == "ready" for e in body["progress"]) == 9

    await eventually(nine_ready, "nine players to be ready")
    await clients[-1].send(p.Ready())
    countdowns = [await c.expect(p.Countdown) for c in clients]
    assert len({cd.starts_at for cd in countdowns}) == 1

    async def play(i: int, c: Client) -> list[str]:
        rng = random.Random(i)
        game = Game.new(get_variant("forty-thieves"), deal)
        played = []
        for _ in range(25):
            legal = game.legal_moves()
            if not legal:
                break
            move = rng.choice(legal)
            ack = await c.move(move.text())
            assert isinstance(ack, p.Ack), ack
            game.push(move)
            played.append(move.text())
            assert ack.view == p.View.from_player_view(game.view())
        return played

    played = await asyncio.gather(*(play(i, c) for i, c in enumerate(clients)))
    store = server.service.store
    for seat, moves in enumerate(played):
        state = await store.player(created.race.id, seat)
        assert state is not None and state.moves == moves and state.n == len(moves)
    meta = await store.meta(created.race.id)
    assert meta is not None
    # one version per join, ready, start and accepted move
    assert meta.version == 10 + 10 + 1 + sum(len(m) for m in played)
    for c in clients:
        await c.give_up()
    res = (await clients[0].expect(p.Finished)).results
    homes = [s.home for s in res.standings]
    assert homes == sorted(homes, reverse=True)
    for rec in res.records:
        assert replay(GameRecord("forty-thieves", deal, tuple(rec.moves))).game.position() == rec.position
    for c in clients:
        await c.close()


async def test_frames_from_the_server_decode_with_msgpack_python(server: LiveServer) -> None:
    """msgpack-python, the reference implementation, reads a real server frame unaided."""
    created = await create_race(server, seats=1)
    c = await Client.connect(server)
    await c.send(p.Hello(protocol=p.PROTOCOL_VERSION, race=created.race.id, name="ann"))
    raw = await c.ws.recv()
    assert isinstance(raw, bytes)
    plain = msgpack.unpackb(raw, raw=False, strict_map_key=True, max_bin_len=0, max_ext_len=0)
    assert plain["type"] == "welcome" and plain["seat"] == 0 and plain["race"]["id"] == created.race.id
    assert plain["progress"][0]["name"] == "ann"
    await c.close()
