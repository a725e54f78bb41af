"""Reconnection: a client that comes back with its token and last version gets what it missed.

Real server, real Redis, real sockets. The table a resumed client ends up
with (its old table merged with the replay) must equal the server's table
line for line, and the replay must carry only the lines that changed.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import redis.asyncio as aioredis
from starlette.websockets import WebSocketDisconnect, WebSocketState
from enginekit import blocking_line
from redis_util import Client, LiveServer, caught_up, create_race, eventually, live_server, start_race

from server.race.clock import now_ms
from server.race.connection import Connection
from server.store import Keys
from shared import protocol as p
from shared.engine import Game
from shared.variants import get_variant

WIN = json.loads((Path(__file__).parent / "data" / "race_win_line.json").read_text())


async def server_table(server: LiveServer, race: str) -> dict[int, p.PlayerProgress]:
    status, body = await server.http("GET", f"/races/{race}")
    assert status == 200
    return {e["seat"]: p.PlayerProgress(**e) for e in body["progress"]}


async def _three(server: LiveServer) -> tuple[p.Created, list[Client], list[p.Welcome]]:
    created = await create_race(server, seats=3, deal_source="number", deal=WIN["deal"])
    clients, welcomes = [], []
    for name in ("ann", "bob", "cy"):
        c = await Client.connect(server)
        welcomes.append(await c.hello(created.race.id, name))
        clients.append(c)
    return created, clients, welcomes


async def test_a_resumed_player_gets_only_the_lines_that_changed(server: LiveServer) -> None:
    created, (ann, bob, cy), (w_ann, _, _) = await _three(server)
    await start_race(server, created.creator_token, [ann, bob, cy])
    for text in WIN["moves"][:2]:
        assert isinstance(await ann.move(text), p.Ack)
    await caught_up(ann, server, created.race.id)
    table = ann.table
    assert table.lines == await server_table(server, created.race.id)
    last_version = table.version
    await ann.close()

    for text in WIN["moves"][:19]:  # bob gets a second card home and overtakes ann: both ranks change
        assert isinstance(await bob.move(text), p.Ack)

    back = await Client.connect(server, table)
    welcome = await back.hello(created.race.id, token=w_ann.token, last_version=last_version)
    assert welcome.resumed and welcome.version == last_version and welcome.progress == []
    assert welcome.seat == 0 and welcome.seq == 2
    game = Game.new(get_variant("forty-thieves"), WIN["deal"])
    for text in WIN["moves"][:2]:
        game.push_text(text)
    assert welcome.view == p.View.from_player_view(game.view()), "the board is the one last acknowledged"

    replay = await back.recv()
    assert isinstance(replay, p.Progress) and not replay.full
    assert replay.version > last_version
    assert {e.seat for e in replay.players} == {0, 1}, "cy's line did not change: it is not resent"
    await caught_up(back, server, created.race.id)
    assert table.lines == await server_table(server, created.race.id)
    assert table.lines[1].rank == 1 and table.lines[1].home == 2 and table.lines[0].status == "racing"

    ack = await back.move(WIN["moves"][2], seq=3)
    assert isinstance(ack, p.Ack) and not ack.duplicate
    for c in (back, bob, cy):
        await c.close()


async def test_a_spectator_that_missed_the_start_gets_the_countdown_then_the_table(server: LiveServer) -> None:
    created, (ann, bob, cy), _ = await _three(server)
    watcher = await Client.connect(server)
    await watcher.hello(created.race.id, role="spectator")
    await caught_up(watcher, server, created.race.id)
    table = watcher.table
    last_version = table.version
    await watcher.close()

    await start_race(server, created.creator_token, [ann, bob, cy])
    assert isinstance(await cy.move("S"), p.Ack)

    watcher = await Client.connect(server, table)
    welcome = await watcher.hello(created.race.id, role="spectator", last_version=last_version)
    assert welcome.resumed and welcome.view is None
    countdown = await watcher.recv()
    assert isinstance(countdown, p.Countdown) and countdown.view is None
    assert countdown.starts_at == welcome.race.starts_at
    replay = await watcher.recv()
    assert isinstance(replay, p.Progress)
    assert {e.seat for e in replay.players} == {0, 1, 2}, "every line went from waiting to racing"
    assert table.lines == await server_table(server, created.race.id)
    for c in (watcher, ann, bob, cy):
        await c.close()


async def test_a_gap_the_history_no_longer_covers_gets_a_full_snapshot(server: LiveServer, redis_url: str) -> None:
    created, (ann, bob, cy), (w_ann, _, _) = await _three(server)
    await start_race(server, created.creator_token, [ann, bob, cy])
    await ann.close()
    for _ in range(3):
        assert isinstance(await bob.move("S"), p.Ack)
    client = aioredis.Redis.from_url(redis_url)
    await client.xtrim(Keys(created.race.id).history, maxlen=2, approximate=False)  # the cap cut the gap
    await client.aclose()

    back = await Client.connect(server)
    welcome = await back.hello(created.race.id, token=w_ann.token, last_version=w_ann.version)
    assert not welcome.resumed and len(welcome.progress) == 3
    full = await back.expect(p.Progress)
    assert full.full and len(full.players) == 3

    # a version from the future (another race, a wiped store) is no basis for a replay either
    other = await Client.connect(server)
    future = await other.hello(created.race.id, role="spectator", last_version=10**9)
    assert not future.resumed and len(future.progress) == 3
    for c in (back, other, bob, cy):
        await c.close()


async def test_a_move_sent_just_before_the_drop_is_applied_once_and_the_welcome_says_so(server: LiveServer) -> None:
    created = await create_race(server, seats=1, deal_source="number", deal=WIN["deal"])
    ann = await Client.connect(server)
    w = await ann.hello(created.race.id, "ann")
    await start_race(server, created.creator_token, [ann])
    store = server.service.store

    # Sent, then the socket dies before the answer is read.
    await ann.send(p.Move(seq=1, move=WIN["moves"][0]))
    await ann.ws.close()

    async def stored() -> bool:
        state = await store.player(created.race.id, 0)
        return state is not None and state.n == 1

    await eventually(stored, "the move sent before the drop to be stored")
    back = await Client.connect(server)
    welcome = await back.hello(created.race.id, token=w.token, last_version=w.version)
    assert welcome.seq == 1, "the welcome says move 1 was played"
    again = await back.move(WIN["moves"][0], seq=1)  # a client that resends anyway
    assert isinstance(again, p.Ack) and again.duplicate

    # Lost on the way (never reached the server): the welcome says it was not played; the resend plays it.
    await back.close()
    back = await Client.connect(server)
    welcome = await back.hello(created.race.id, token=w.token, last_version=welcome.version)
    assert welcome.seq == 1
    ack = await back.move(WIN["moves"][1], seq=2)
    assert isinstance(ack, p.Ack) and not ack.duplicate
    state = await store.player(created.race.id, 0)
    assert state is not None and state.moves == WIN["moves"][:2] and state.seq == 2
    await back.close()


async def test_a_player_with_no_legal_move_is_blocked_until_an_undo(server: LiveServer) -> None:
    deal = 3
    line = blocking_line(deal)
    created = await create_race(server, seats=2, deal_source="number", deal=deal)
    ann, bob = await Client.connect(server), await Client.connect(server)
    await ann.hello(created.race.id, "ann")
    await bob.hello(created.race.id, "bob")
    await start_race(server, created.creator_token, [ann, bob])
    for text in line[:-1]:
        ack = await ann.move(text)
        assert isinstance(ack, p.Ack) and ack.status == "racing"
    ack = await ann.move(line[-1])
    assert isinstance(ack, p.Ack) and ack.status == "blocked" and ack.view.status == "blocked"
    table = await server_table(server, created.race.id)
    assert table[0].status == "blocked"
    undo = await ann.move(p.UNDO)
    assert isinstance(undo, p.Ack) and undo.status == "racing"
    assert (await server_table(server, created.race.id))[0].status == "racing"
    assert isinstance(await ann.move(line[-1]), p.Ack)
    gave_up = await ann.give_up()  # a blocked player may give up
    assert gave_up.version > ack.version
    assert (await server_table(server, created.race.id))[0].status == "gave_up"
    for c in (ann, bob):
        await c.close()


async def test_a_dead_process_lease_runs_out_and_the_player_shows_disconnected(redis_url: str) -> None:
    async with live_server(redis_url, presence_lease=0.6) as server:
        created = await create_race(server, seats=2, deal_source="number", deal=5)
        ann = await Client.connect(server)
        await ann.hello(created.race.id, "ann")
        bob = await Client.connect(server)
        await bob.hello(created.race.id, "bob")
        await start_race(server, created.creator_token, [ann, bob])
        store = server.service.store
        # A process that held a second connection of ann's seat and then died: its lease is never renewed.
        # (Its expiry is a few seconds off, so that a busy machine still sees it count before it runs out.)
        expiry = now_ms() + 4000
        await store.presence(created.race.id, 0, 0, "dead.1", True, expiry, now_ms())

        async def online(n: int) -> bool:
            state = await store.player(created.race.id, 0)
            return state is not None and state.line.online == n

        await eventually(lambda: online(2), "the dead process's lease to count")
        await ann.close()
        await eventually(lambda: online(1), "ann's own connection to be gone")
        if now_ms() < expiry:
            assert (await server_table(server, created.race.id))[0].status == "racing", "the dead lease still counts"

        async def shows_disconnected() -> bool:  # bob's process sweeps the expired lease
            return (await server_table(server, created.race.id))[0].status == "disconnected"

        await eventually(shows_disconnected, "ann to show as disconnected")
        state = await store.player(created.race.id, 0)
        assert state is not None and state.line.online == 0
        assert (await server_table(server, created.race.id))[1].status == "racing", "bob's lease is renewed"
        await bob.close()


async def test_a_lobby_nobody_starts_is_removed_with_its_keys(redis_url: str) -> None:
    async with live_server(redis_url, lobby_ttl=1) as server:
        created = await create_race(server, seats=2)
        ann = await Client.connect(server)
        await ann.hello(created.race.code, "ann")
        err = await ann.expect(p.Error, timeout=10)
        assert err.code == "race_not_found" and "1 s" in err.message
        assert await ann.closed() == p.CloseCode.NORMAL
        status, body = await server.http("GET", f"/races/{created.race.code}")
        assert (status, body["code"]) == (404, "race_not_found")
        client = aioredis.Redis.from_url(redis_url)
        try:
            assert [k async for k in client.scan_iter(match=f"race:{{{created.race.id}}}*")] == []
            assert await client.zscore("races:active", created.race.id) is None
            assert await client.exists(f"code:{created.race.code}") == 0
        finally:
            await client.aclose()


class _SocketThatDies:
    """The ASGI side of a WebSocket whose client went away: sends fail, the frames it sent before remain.

    Why not a real socket: whether a frame to the client fails before or after the client's last
    move is read is a matter of microseconds over a real socket; this fixes the order.
    """

    def __init__(self) -> None:
        self.scope: dict[str, object] = {"extensions": {}}
        self.client = None
        self.headers: dict[str, str] = {}
        self.application_state = WebSocketState.CONNECTED
        self.incoming: asyncio.Queue[dict[str, object]] = asyncio.Queue()
        self.sent: list[p.ServerMessage] = []
        self.dead = False

    async def accept(self) -> None:
        pass

    async def receive(self) -> dict[str, object]:
        return await self.incoming.get()

    async def send_bytes(self, data: bytes) -> None:
        if self.dead:
            raise WebSocketDisconnect(1006)
        self.sent.append(p.decode_server(data))

    async def close(self, code: int = 1000) -> None:
        self.application_state = WebSocketState.DISCONNECTED


async def test_a_move_that_arrived_before_the_client_vanished_is_applied_though_sending_failed(
    server: LiveServer,
) -> None:
    created = await create_race(server, seats=1, deal_source="number", deal=WIN["deal"])
    ws = _SocketThatDies()
    conn = Connection(ws, server.service)  # type: ignore[arg-type]
    running = asyncio.create_task(conn.run())
    ws.incoming.put_nowait({"type": "websocket.receive",
                            "bytes": p.encode(p.Hello(protocol=p.PROTOCOL_VERSION, race=created.race.id, name="ann"))})
    await eventually(lambda: any(isinstance(m, p.Welcome) for m in ws.sent), "ann's welcome")
    await start_race(server, created.creator_token, [])
    await eventually(lambda: any(isinstance(m, p.Countdown) for m in ws.sent), "ann's countdown")
    ws.dead = True
    conn.send(p.encode(p.Ping(nonce=1)))  # the next frame to the client fails: it is gone
    await eventually(lambda: not conn.open, "the failed send to be noticed")
    ws.incoming.put_nowait({"type": "websocket.receive", "bytes": p.encode(p.Move(seq=1, move=WIN["moves"][0]))})
    ws.incoming.put_nowait({"type": "websocket.disconnect", "code": 1006})
    await asyncio.wait_for(running, 10)
    state = await server.service.store.player(created.race.id, 0)
    assert state is not None and state.moves == [WIN["moves"][0]], "the move it sent before it went is stored"


async def test_two_connections_of_one_seat_take_turns_and_each_goes_on_after_a_conflict(server: LiveServer) -> None:
    """A connection of ann's seat moves on a game its cache has behind the store's (her other connection
    moved since): the store answers "conflict", the connection catches up, checks the move again and
    stores it; and both connections go on answering after that. Draws are legal on either game."""
    created, (ann, bob, cy), (w_ann, _, _) = await _three(server)
    await start_race(server, created.creator_token, [ann, bob, cy])
    assert isinstance(await ann.move("S", seq=1), p.Ack)  # ann's connection has the game cached
    second = await Client.connect(server)
    await second.hello(created.race.id, token=w_ann.token, last_version=w_ann.version)
    assert isinstance(await second.move("S", seq=2), p.Ack)
    # ann's cache has one move, the store two: a conflict, caught up, checked again and stored
    caught = await ann.move("S", seq=3)
    assert isinstance(caught, p.Ack) and not caught.duplicate, caught
    assert isinstance(await ann.move("S", seq=4), p.Ack), "the frame after a conflict is answered"
    assert isinstance(await second.move("S", seq=5), p.Ack)
    state = await server.service.store.player(created.race.id, w_ann.seat)  # type: ignore[arg-type]
    assert state is not None and state.moves == ["S"] * 5 and state.seq == 5
    for c in (ann, bob, cy, second):
        await c.close()
