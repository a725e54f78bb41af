"""Every kind of bad input gets its typed error (or documented close) and changes nothing in Redis."""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import os
import socket
import struct
from typing import Any, AsyncIterator

import msgpack
import pytest
import websockets
from redis_util import (TEST_SECRET, Client, LiveServer, create_race, create_short_race, eventually, live_server,
                        start_race)

from server.race.connection import Connection
from server.race.tokens import CREATOR, PLAYER, Signer
from shared import protocol as p
from shared.engine import Game
from shared.variants import get_variant


class Race:
    """A started two-seat race (deal 2) with ann and bob connected, and a spectator."""

    def __init__(self, server: LiveServer, created: p.Created, ann: Client, bob: Client, watcher: Client,
                 welcome: p.Welcome) -> None:
        self.server, self.created, self.ann, self.bob, self.watcher = server, created, ann, bob, watcher
        self.id = created.race.id
        self.ann_welcome = welcome
        self.start_view = p.View.from_player_view(Game.new(get_variant("forty-thieves"), 2).view())

    async def snapshot(self) -> dict[str, Any]:
        return await self.server.service.store.snapshot(self.id)


async def _race(server: LiveServer, start: bool = True, **fields: Any) -> Race:
    short = fields.get("time_limit", p.MIN_TIME_LIMIT) < p.MIN_TIME_LIMIT  # a race whose time runs out at once
    created = await (create_short_race if short else create_race)(server, seats=2, deal_source="number", deal=2,
                                                                  **fields)
    ann = await Client.connect(server)
    welcome = await ann.hello(created.race.id, "ann")
    bob = await Client.connect(server)
    await bob.hello(created.race.id, "bob")
    watcher = await Client.connect(server)
    await watcher.hello(created.race.id, role="spectator")
    if start:
        await start_race(server, created.creator_token, [ann, bob, watcher])
    return Race(server, created, ann, bob, watcher, welcome)


@pytest.fixture
async def race(server: LiveServer) -> AsyncIterator[Race]:
    r = await _race(server)
    yield r
    for c in (r.ann, r.bob, r.watcher):
        await c.close()


async def _unchanged_after(race: Race, action: Any) -> Any:
    await asyncio.sleep(0.02)
    before = await race.snapshot()
    out = await action()
    await asyncio.sleep(0.02)
    assert await race.snapshot() == before, "stored state changed"
    return out


# ---------------------------------------------------------------- frames
@pytest.mark.parametrize(
    "data, code",
    [
        (b"\xc1\xc1", "bad_frame"),
        (b"\x93\x01\x02\x03", "bad_frame"),
        (msgpack.packb({"move": "ab"}), "bad_frame"),
        (msgpack.packb({"type": "warp", "seq": 1}), "unknown_type"),
        (msgpack.packb({"type": "move", "seq": 1}), "bad_field"),
        (msgpack.packb({"type": "move", "seq": "one", "move": "S"}), "bad_field"),
        (msgpack.packb({"type": "move", "seq": 1, "move": "S", "seat": "me"}), "bad_field"),
        (msgpack.packb({"type": "move", "seq": p.MAX_SEQ + 1, "move": "S"}), "bad_field"),  # an error: no seq to echo
        ("a text frame", "bad_frame"),
    ],
)
async def test_malformed_frames_get_typed_errors(race: Race, data: bytes | str, code: str) -> None:
    async def act() -> p.Error:
        await race.ann.send_raw(data)
        return await race.ann.error()

    err = await _unchanged_after(race, act)
    assert err.code == code and err.message
    ack = await race.ann.move("S")  # the connection carries on
    assert isinstance(ack, p.Ack)


def _nested(inner: bytes, depth: int) -> bytes:
    """``inner`` inside ``depth`` one-element msgpack arrays (msgpack-python refuses to pack that deep)."""
    return b"\x91" * depth + inner


def _map(*items: bytes) -> bytes:
    """A msgpack map of already packed keys and values."""
    assert len(items) % 2 == 0 and len(items) < 32
    return bytes([0x80 | len(items) // 2]) + b"".join(items)


_P = msgpack.packb
DEEP_FRAMES = {
    "seq": _map(_P("type"), _P("move"), _P("move"), _P("S"), _P("seq"), _nested(_P(1), 3000)),
    "unknown field": _map(_P("type"), _P("ping"), _P("junk"), _nested(_P(1), 3000)),
    "type": _map(_P("type"), _nested(_P("move"), 3000)),
    "whole frame": _nested(_P({"type": "ping"}), 3000),
    "maps": _map(_P("type"), _P("ping"), _P("x"), b"\x81\xa1x" * 1300 + _P(1)),
}


@pytest.mark.parametrize("name", DEEP_FRAMES)
async def test_deeply_nested_frames_are_bad_frames(race: Race, name: str, caplog: pytest.LogCaptureFixture) -> None:
    """Under 4 KB, but deeper than a recursive decoder goes: a typed error, one log line, no traceback."""
    data = DEEP_FRAMES[name]
    assert len(data) < p.MAX_FRAME_BYTES

    async def act() -> p.Error:
        await race.ann.send_raw(data)
        return await race.ann.error()

    err = await _unchanged_after(race, act)
    assert err.code == "bad_frame" and str(p.MAX_NESTING) in err.message
    assert isinstance(await race.ann.move("S"), p.Ack), "the connection carries on"
    assert "Traceback" not in caplog.text and "RecursionError" not in caplog.text


async def test_deeply_nested_frames_use_up_the_error_budget(race: Race) -> None:
    for _ in range(race.server.service.config.max_errors + 1):
        await race.watcher.send_raw(DEEP_FRAMES["seq"])
    assert await race.watcher.closed() == p.CloseCode.TOO_MANY_ERRORS


async def test_a_frame_the_server_fails_on_is_counted_and_logged_in_one_line(
        race: Race, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """A server bug a client can trigger again and again: answered ``internal``, one line each, then closed."""
    from server.race import frames

    async def broken(conn: object, msg: p.Ping) -> None:
        raise ValueError("a bug")

    monkeypatch.setattr(frames, "on_ping", broken)
    c = await Client.connect(race.server)  # its handlers are bound when it connects
    budget = race.server.service.config.max_errors
    for nonce in range(budget + 1):
        await c.send(p.Ping(nonce=nonce))
    assert (await c.error()).code == "internal"
    assert await c.closed() == p.CloseCode.TOO_MANY_ERRORS
    failures = [r for r in caplog.records if "event=frame_failed" in r.getMessage()]
    assert len(failures) == budget + 1
    assert sum(r.exc_info is not None for r in failures) <= 1, "a traceback per frame"


async def test_a_frame_over_the_size_limit_closes_with_1009(race: Race) -> None:
    # the spectator sends it: a player's disconnect is itself an event (presence), not the frame's doing
    async def act() -> int:
        await race.watcher.send_raw(msgpack.packb({"type": "move", "seq": 1, "move": "x" * p.MAX_FRAME_BYTES}))
        return await race.watcher.closed()

    assert await _unchanged_after(race, act) == p.CloseCode.MESSAGE_TOO_BIG


async def _raw_frame_then_close_code(server: LiveServer, payload_size: int) -> int | str:
    """Like a plain client in another language: handshake, write one whole binary frame, only then read.

    Returns the close code the server sent, or what went wrong instead.
    """
    host, port = server.server.servers[0].sockets[0].getsockname()[:2]
    reader, writer = await asyncio.open_connection(host, port)
    key = base64.b64encode(os.urandom(16)).decode()
    writer.write(f"GET /ws HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                 f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode())
    assert b" 101 " in await reader.readuntil(b"\r\n\r\n")
    mask = os.urandom(4)  # the payload stays all zero bytes: masked, it is the mask repeated
    writer.write(bytes([0x82, 0xFF]) + struct.pack("!Q", payload_size) + mask)
    chunk = (mask * 16384)[:65536]
    try:
        for start in range(0, payload_size, len(chunk)):
            writer.write(chunk[:payload_size - start])
            await writer.drain()
        data = await asyncio.wait_for(reader.read(), 20)
    except OSError as exc:
        return repr(exc)
    finally:
        writer.close()
    if len(data) < 4 or data[0] != 0x88:
        return f"no close frame: {data[:8]!r}"
    return int(struct.unpack("!H", data[2:4])[0])


@pytest.mark.parametrize("size", [p.MAX_FRAME_BYTES + 1, 65_536, 1 << 20, 4 << 20])
async def test_every_frame_over_the_size_limit_gets_1009_even_when_written_whole(server: LiveServer, size: int) -> None:
    assert await _raw_frame_then_close_code(server, size) == p.CloseCode.MESSAGE_TOO_BIG
    await eventually(lambda: server.service.connections == 0, "the refused connection to be gone")


async def test_many_bad_frames_close_the_connection(race: Race) -> None:
    budget = race.server.service.config.max_errors
    for _ in range(budget + 1):
        await race.ann.send_raw(b"\xc1")
    assert await race.ann.closed() == p.CloseCode.TOO_MANY_ERRORS


# ---------------------------------------------------------------- moves
@pytest.mark.parametrize(
    "who, move, reason",
    [
        ("ann", p.Move(seq=1, move="S", seat=1), "not_your_seat"),
        ("watcher", p.Move(seq=1, move="S"), "spectator_cannot_move"),
        ("ann", p.Move(seq=1, move="zz"), "bad_move"),
        ("ann", p.Move(seq=1, move="aF"), "foundation_not_ready"),
        ("ann", p.Move(seq=1, move="be"), "wrong_suit"),
        ("ann", p.Move(seq=1, move="ab"), "not_one_rank_lower"),
        ("ann", p.Move(seq=1, move="ka"), "no_such_column"),
        ("ann", p.Move(seq=1, move="Wa"), "source_empty"),
        ("ann", p.Move(seq=1, move="aW"), "not_a_target"),
        ("ann", p.Move(seq=1, move="aa"), "same_column"),
        ("ann", p.Move(seq=1, move="2ab"), "group_move_not_allowed"),
        ("ann", p.Move(seq=1, move="Fa"), "foundation_cards_never_move"),
        ("ann", p.Move(seq=1, move="R"), "stock_not_empty"),
        ("ann", p.Move(seq=1, move="U"), "nothing_to_undo"),
        ("ann", p.Move(seq=0, move="S"), "stale_sequence"),
    ],
)
async def test_refused_moves_are_rejected_with_their_reason(race: Race, who: str, move: p.Move, reason: str) -> None:
    client = getattr(race, who)

    async def act() -> p.Reject:
        await client.send(move)
        return await client.expect(p.Reject)

    rej = await _unchanged_after(race, act)
    assert (rej.seq, rej.reason) == (move.seq, reason)
    assert rej.message


async def test_refusals_are_logged_summed_up_per_code_not_one_line_each(
        race: Race, server_log: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    """A client repeating an illegal move as fast as the rate limit lets it must not fill the log: each
    code's first refusal of a window is logged at once (a kind not seen before still shows at once), the
    rest in one line with their count at the window's end."""
    from server.race import service

    monkeypatch.setattr(service, "REFUSED_LOG_SECONDS", 3.0)  # the moves come well within it
    server_log.set_level(logging.INFO, logger="thieves")

    def lines() -> list[str]:
        records = {id(r): r for r in server_log.records}  # a record can reach the capture twice (root and own)
        return [r.getMessage() for r in records.values() if r.getMessage().startswith("event=refused ")]

    for seq in range(1, 6):
        await race.ann.send(p.Move(seq=seq, move="aa"))
        assert (await race.ann.expect(p.Reject)).reason == "same_column"
    await race.ann.send(p.Move(seq=6, move="U"))
    assert (await race.ann.expect(p.Reject)).reason == "nothing_to_undo"
    assert [line.split(" peer=")[0] for line in lines()] == [
        "event=refused count=1 code=same_column", "event=refused count=1 code=nothing_to_undo"]
    await eventually(lambda: len(lines()) == 3, what="the window's line")
    assert lines()[2].startswith("event=refused count=4 code=same_column peer=")
    assert "ref=move" in lines()[2] and "next_in_s=3" in lines()[2]


async def test_the_engine_reason_matches_the_rules(race: Race) -> None:
    """Every syntactic column, waste and foundation move on deal 2: the server says what the engine says."""
    from shared.moves import Move

    game = Game.new(get_variant("forty-thieves"), 2)
    places = "abcdefghijWF"
    for text in (a + b for a in places for b in places):
        answer = await race.ann.move(text)
        expected = game.reason(Move.parse(text))
        if expected is None:
            assert isinstance(answer, p.Ack), text
            game.push(Move.parse(text))
        else:
            assert isinstance(answer, p.Reject) and answer.reason == expected.value, text


async def test_moves_before_the_start_are_refused(server: LiveServer) -> None:
    r = await _race(server, start=False)
    rej = await _unchanged_after(r, lambda: r.ann.move("S"))
    assert isinstance(rej, p.Reject) and rej.reason == "race_not_started"


async def test_moves_during_the_countdown_are_refused(redis_url: str) -> None:
    async with live_server(redis_url, countdown=30.0) as server:
        r = await _race(server)
        rej = await _unchanged_after(r, lambda: r.ann.move("S"))
        assert isinstance(rej, p.Reject) and rej.reason == "race_not_started"
        for c in (r.ann, r.bob, r.watcher):
            await c.close()


async def test_moves_after_giving_up_and_after_the_end_are_refused(race: Race) -> None:
    answer = await race.ann.give_up()
    assert answer.version > 0
    rej = await _unchanged_after(race, lambda: race.ann.move("S"))
    assert isinstance(rej, p.Reject) and rej.reason == "player_finished"
    again = await race.ann.give_up()  # a give-up sent again (its answer lost) is answered as the first
    assert again.version == answer.version
    await race.bob.give_up()
    await race.bob.expect(p.Finished)
    rej = await _unchanged_after(race, lambda: race.bob.move("S"))
    assert isinstance(rej, p.Reject) and rej.reason == "race_over"


async def test_a_resent_move_applies_once_and_an_old_seq_is_stale(race: Race) -> None:
    first = await race.ann.move("S", seq=5)
    assert isinstance(first, p.Ack) and not first.duplicate
    again = await _unchanged_after(race, lambda: race.ann.move("S", seq=5))
    assert isinstance(again, p.Ack) and again.duplicate and again.view == first.view
    other = await _unchanged_after(race, lambda: race.ann.move("ba", seq=5))
    assert isinstance(other, p.Reject) and other.reason == "stale_sequence"
    old = await _unchanged_after(race, lambda: race.ann.move("S", seq=4))
    assert isinstance(old, p.Reject) and old.reason == "stale_sequence"
    state = await race.server.service.store.player(race.id, 0)
    assert state is not None and state.moves == ["S"] and state.seq == 5


async def test_resending_an_earlier_applied_move_is_stale_and_changes_nothing(race: Race) -> None:
    """Only the last applied seq is acknowledged again; earlier ones are refused, never played twice."""
    assert isinstance(await race.ann.move("S", seq=1), p.Ack)
    assert isinstance(await race.ann.move("S", seq=2), p.Ack)
    old = await _unchanged_after(race, lambda: race.ann.move("S", seq=1))
    assert isinstance(old, p.Reject) and old.reason == "stale_sequence"
    last = await _unchanged_after(race, lambda: race.ann.move("S", seq=2))
    assert isinstance(last, p.Ack) and last.duplicate


async def test_a_body_that_is_not_json_is_a_bad_frame(server: LiveServer) -> None:
    import urllib.request

    def post() -> tuple[int, dict[str, Any]]:
        req = urllib.request.Request(server.url + "/races", data=b"\xc1 not json", method="POST",
                                     headers={"content-type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                return resp.status, json.loads(resp.read())
        except urllib.error.HTTPError as err:
            return err.code, json.loads(err.read())

    status, body = await asyncio.to_thread(post)
    assert (status, body["code"]) == (400, "bad_frame")


async def test_a_second_connection_of_the_same_player_continues_the_game(race: Race) -> None:
    """Another connection (another process would do the same) carries on from Redis."""
    assert isinstance(await race.ann.move("ba", seq=1), p.Ack)
    twin = await Client.connect(race.server)
    w = await twin.hello(race.id, token=race.ann_welcome.token)
    assert w.seat == 0 and w.seq == 1 and w.view is not None and w.view.moves == 1
    assert isinstance(await twin.move("bF", seq=2), p.Ack)
    # the first connection's cached game is stale: it reloads and goes on
    ack = await race.ann.move("hg", seq=3)
    assert isinstance(ack, p.Ack) and ack.view.moves == 3 and ack.view.home == 1
    state = await race.server.service.store.player(race.id, 0)
    assert state is not None and state.moves == ["ba", "bF", "hg"]
    await twin.close()


# ---------------------------------------------------------------- undo
async def test_undo_takes_back_a_move_but_never_a_draw(race: Race) -> None:
    ack = await race.ann.move("ba")
    assert isinstance(ack, p.Ack)
    undo = await race.ann.move("U")
    assert isinstance(undo, p.Ack) and undo.move == "U" and undo.view.moves == 0
    assert undo.view == race.start_view and ack.view != race.start_view
    assert isinstance(await race.ann.move("S"), p.Ack)
    rej = await _unchanged_after(race, lambda: race.ann.move("U"))
    assert isinstance(rej, p.Reject) and rej.reason == "undo_not_allowed" and "stock" in rej.message
    state = await race.server.service.store.player(race.id, 0)
    assert state is not None and state.moves == ["ba", "U", "S"]


async def test_undo_is_refused_when_the_race_forbids_it(server: LiveServer) -> None:
    r = await _race(server, undo=False)
    assert isinstance(await r.ann.move("ba"), p.Ack)
    rej = await _unchanged_after(r, lambda: r.ann.move("U"))
    assert isinstance(rej, p.Reject) and rej.reason == "undo_disabled"


# ---------------------------------------------------------------- hello and tokens
async def _hello_refused(server: LiveServer, hello: p.Hello) -> tuple[p.Error, int]:
    c = await Client.connect(server)
    await c.send(hello)
    err = await c.error()
    return err, await c.closed()


def _hello(race: str, **kw: Any) -> p.Hello:
    return p.Hello(protocol=p.PROTOCOL_VERSION, race=race, **kw)


async def test_hello_refusals(race: Race) -> None:
    server = race.server
    signer = Signer(TEST_SECRET.encode())
    far = 2**50
    other = await create_race(server, seats=1)
    cases = [
        (p.Hello(protocol=p.PROTOCOL_VERSION + 1, race=race.id, name="x"), "version_mismatch",
         p.CloseCode.VERSION_MISMATCH),
        (_hello("nosuchrace", name="x"), "race_not_found", p.CloseCode.HELLO_REFUSED),
        (_hello("race:{x}", name="x"), "race_not_found", p.CloseCode.HELLO_REFUSED),
        (_hello(race.id, name="late"), "race_closed", p.CloseCode.HELLO_REFUSED),
        (_hello(race.id, token="garbage"), "bad_token", p.CloseCode.BAD_TOKEN),
        (_hello(race.id, token=race.ann_welcome.token[:-3] + "AAA"), "bad_token", p.CloseCode.BAD_TOKEN),
        (_hello(race.id, token=Signer(b"another-secret-0123456789").sign(PLAYER, race.id, 0, far)),
         "bad_token", p.CloseCode.BAD_TOKEN),
        (_hello(race.id, token=signer.sign(PLAYER, other.race.id, 0, far)), "bad_token", p.CloseCode.BAD_TOKEN),
        (_hello(race.id, token=signer.sign(CREATOR, race.id, 0, far)), "bad_token", p.CloseCode.BAD_TOKEN),
        (_hello(race.id, token=signer.sign(PLAYER, race.id, 7, far)), "bad_token", p.CloseCode.BAD_TOKEN),
        (_hello(race.id, token=signer.sign(PLAYER, race.id, 0, 1000)), "token_expired", p.CloseCode.BAD_TOKEN),
    ]
    for hello, code, close in cases:
        err, closed = await _unchanged_after(race, lambda h=hello: _hello_refused(server, h))
        assert (err.code, closed) == (code, close), hello


@pytest.mark.parametrize("fields", [{"name": "n" * 33}, {"name": 7}, {"role": "referee", "name": "x"}, {}])
async def test_a_hello_failing_its_field_checks_is_refused_and_closed(server: LiveServer, fields: dict[str, Any]) -> None:
    created = await create_race(server, seats=2)
    before = await server.service.store.snapshot(created.race.id)
    c = await Client.connect(server)
    frame: dict[str, Any] = {"type": "hello", "protocol": p.PROTOCOL_VERSION, "race": created.race.id, **fields}
    if not fields:
        del frame["protocol"]
    await c.send_raw(msgpack.packb(frame))
    err = await c.error()
    assert (err.code, err.ref) == ("bad_field", "hello")
    assert await c.closed() == p.CloseCode.HELLO_REFUSED
    assert await server.service.store.snapshot(created.race.id) == before


async def test_a_rejoin_renews_the_token_for_the_same_seat(redis_url: str) -> None:
    """A seat must outlive ``token_ttl`` after the first join: each rejoin hands out a fresh token."""
    from server.race.clock import now_ms

    async with live_server(redis_url, token_ttl=3600) as server:
        signer = Signer(TEST_SECRET.encode())
        created = await create_race(server, seats=2)
        ann = await Client.connect(server)
        first = await ann.hello(created.race.id, "ann")
        soon = now_ms() + 1500
        short = signer.sign(PLAYER, created.race.id, first.seat, soon)  # as if issued an hour ago
        again = await Client.connect(server)
        renewed = await again.hello(created.race.id, token=short)
        claim = signer.verify(PLAYER, renewed.token, created.race.id, now_ms())
        assert (claim.race, claim.seat, renewed.seat) == (created.race.id, first.seat, first.seat)
        assert claim.expires >= now_ms() + 3500 * 1000 - 60_000
        await eventually(lambda: now_ms() > soon, "the old token to run out")  # the old token runs out...
        err, closed = await _hello_refused(server, _hello(created.race.id, token=short))
        assert (err.code, closed) == ("token_expired", p.CloseCode.BAD_TOKEN)
        third = await Client.connect(server)  # ...the renewed one still holds the seat
        assert (await third.hello(created.race.id, token=renewed.token)).seat == first.seat
        for c in (ann, again, third):
            await c.close()


async def _lobby_with_ann(server: LiveServer) -> tuple[p.Created, Client]:
    """A two-seat lobby that ann joined, once the progress frame of her join is out (the lobby is quiet)."""
    created = await create_race(server, seats=2)
    ann = await Client.connect(server)
    await ann.hello(created.race.id, "ann")
    assert (await ann.expect(p.Progress)).full
    return created, ann


async def test_a_snapshot_welcome_is_followed_by_a_full_progress_in_a_quiet_lobby(server: LiveServer) -> None:
    created, ann = await _lobby_with_ann(server)
    watcher = await Client.connect(server)
    welcome = await watcher.hello(created.race.id, role="spectator")
    progress = await watcher.recv()
    assert isinstance(progress, p.Progress) and progress.full
    assert progress.players == welcome.progress and progress.version >= welcome.version
    for c in (ann, watcher):
        await c.close()


async def test_start_before_hello_is_answered_with_the_countdown(server: LiveServer) -> None:
    created, ann = await _lobby_with_ann(server)
    starter = await Client.connect(server)
    await starter.send(p.Start(creator_token=created.creator_token))
    mine = await starter.expect(p.Countdown)
    theirs = await ann.expect(p.Countdown)
    assert mine.view is None and (mine.starts_at, mine.ends_at, mine.version) == (
        theirs.starts_at, theirs.ends_at, theirs.version)
    for c in (ann, starter):
        await c.close()


async def test_lobby_refusals(server: LiveServer) -> None:
    created = await create_race(server, seats=2)
    ann = await Client.connect(server)
    await ann.hello(created.race.code.lower(), "Ann")
    err, closed = await _hello_refused(server, _hello(created.race.id, name="ANN"))
    assert (err.code, closed) == ("name_taken", p.CloseCode.HELLO_REFUSED)
    err, closed = await _hello_refused(server, _hello(created.race.id, name="  "))
    assert (err.code, closed) == ("bad_field", p.CloseCode.HELLO_REFUSED)
    bob = await Client.connect(server)
    await bob.hello(created.race.id, "bob")
    err, closed = await _hello_refused(server, _hello(created.race.id, name="cy"))
    assert (err.code, closed) == ("race_full", p.CloseCode.HELLO_REFUSED)
    await ann.send(_hello(created.race.id, name="again"))
    assert (await ann.error()).code == "already_joined"
    # start: only with the creator's token (a player token signed for the race is not one)
    player_token = Signer(TEST_SECRET.encode()).sign(PLAYER, created.race.id, 0, 2**50)
    await ann.send(p.Start(creator_token=player_token))
    assert (await ann.error()).code == "forbidden"
    await ann.send(p.Start(creator_token="x.y.z.w"))
    assert (await ann.error()).code == "forbidden"
    watcher = await Client.connect(server)
    await watcher.hello(created.race.id, role="spectator")
    await watcher.send(p.Ready())
    assert (await watcher.error()).code == "forbidden"
    await ann.send(p.Start(creator_token=created.creator_token))
    await ann.expect(p.Countdown)
    await ann.send(p.Start(creator_token=created.creator_token))
    assert (await ann.error()).code == "race_closed"
    await ann.send(p.Ready())
    assert (await ann.error()).code == "race_closed"
    for c in (ann, bob, watcher):
        await c.close()


async def test_frames_before_hello(server: LiveServer) -> None:
    c = await Client.connect(server)
    await c.send(p.Move(seq=1, move="S"))
    rej = await c.expect(p.Reject)
    assert rej.reason == "hello_required"
    await c.send(p.Ready())
    assert (await c.error()).code == "hello_required"
    await c.send(p.HintRequest())
    assert (await c.error()).code == "hello_required"
    await c.send(p.Ping(nonce=42))
    assert (await c.expect(p.Pong)).nonce == 42
    await c.close()


async def test_no_hello_in_time_closes(redis_url: str) -> None:
    async with live_server(redis_url, hello_timeout=0.2) as server:
        c = await Client.connect(server)
        assert (await c.error()).code == "hello_required"
        assert await c.closed() == p.CloseCode.HELLO_TIMEOUT


# ---------------------------------------------------------------- hints
async def _hint_refused(race: Race, client: Client) -> p.Error:
    async def act() -> p.Error:
        await client.send(p.HintRequest())
        return await client.error()

    err = await _unchanged_after(race, act)
    assert err.ref == "hint" and err.message
    return err


async def test_a_race_without_hints_refuses_them(race: Race) -> None:
    assert race.created.race.hints is False
    assert (await _hint_refused(race, race.ann)).code == "hints_not_allowed"
    assert isinstance(await race.ann.move("S"), p.Ack), "the connection carries on"


async def test_hints_are_for_racers_whose_game_is_under_way(server: LiveServer) -> None:
    r = await _race(server, start=False, hints=True)
    assert (await _hint_refused(r, r.ann)).code == "race_not_started"
    await start_race(server, r.created.creator_token, [r.ann, r.bob, r.watcher])
    assert (await _hint_refused(r, r.watcher)).code == "forbidden"
    await r.bob.give_up()
    assert (await _hint_refused(r, r.bob)).code == "player_finished"
    await r.ann.send(p.HintRequest())
    assert (await r.ann.expect(p.HintAnswer)).winning
    for c in (r.ann, r.bob, r.watcher):
        await c.close()


async def test_one_hint_per_interval_per_player_over_all_its_connections(redis_url: str) -> None:
    async with live_server(redis_url, hint_interval=60.0) as server:
        r = await _race(server, hints=True)
        await r.ann.send(p.HintRequest())
        await r.ann.expect(p.HintAnswer)
        err = await _hint_refused(r, r.ann)
        assert err.code == "hint_too_soon" and "60 s" in err.message
        second = await Client.connect(server)
        await second.hello(r.id, token=r.ann_welcome.token)
        assert (await _hint_refused(r, second)).code == "hint_too_soon"
        await r.bob.send(p.HintRequest())
        assert isinstance(await r.bob.expect(p.HintAnswer), p.HintAnswer), "another player has its own allowance"
        for c in (r.ann, r.bob, r.watcher, second):
            await c.close()


async def test_no_hint_once_the_race_is_over(server: LiveServer) -> None:
    r = await _race(server, hints=True, time_limit=1)
    await r.ann.expect(p.Finished, timeout=5)
    assert (await _hint_refused(r, r.ann)).code == "race_over"
    for c in (r.ann, r.bob, r.watcher):
        await c.close()


# ---------------------------------------------------------------- floods and slow readers
def _flood_frame(kind: str, seq: int) -> p.Move | p.Ping:
    return p.Move(seq=seq, move="S") if kind == "move" else p.Ping(nonce=seq)


@pytest.mark.parametrize("kind", ["ping", "move"])
async def test_a_flood_of_any_type_closes_with_4005_and_spares_the_error_budget(redis_url: str, kind: str) -> None:
    """One rule: rate-limited frames use the flood allowance (``burst``), never the error budget."""
    async with live_server(redis_url, rate=0.5, burst=20, max_errors=5) as server:
        r = await _race(server)
        before = await r.snapshot()
        sent = 35  # the watcher's hello took one of the 20 tokens: about 15 dropped, of an allowance of 20
        for seq in range(1, sent + 1):
            await r.watcher.send(_flood_frame(kind, seq))
        answers = [await r.watcher.expect((p.Reject, p.Error, p.Pong)) for _ in range(sent)]  # type: ignore[arg-type]
        limited = [a for a in answers if getattr(a, "reason", getattr(a, "code", None)) == "rate_limited"]
        assert len(limited) > 5, "more than the error budget was dropped"
        await r.watcher.send_raw(b"\xc1")  # still open, the error budget untouched
        assert (await r.watcher.error()).code == "bad_frame"
        for seq in range(100, 300):
            await r.watcher.send(_flood_frame(kind, seq))
        assert await r.watcher.closed() == p.CloseCode.FLOODING
        assert await r.snapshot() == before
        for c in (r.ann, r.bob):
            await c.close()


async def test_rate_limit_rejects_then_closes_a_flood(redis_url: str) -> None:
    async with live_server(redis_url, rate=5.0, burst=5) as server:
        r = await _race(server)
        before = await r.snapshot()
        for seq in range(1, 8):
            await r.ann.send(p.Move(seq=seq, move="ZZ"))
        answers = [await r.ann.expect(p.Reject) for _ in range(7)]
        assert [a.reason for a in answers].count("rate_limited") >= 2
        assert await r.snapshot() == before
        for seq in range(100):
            await r.ann.send(p.Ping(nonce=seq))
        assert await r.ann.closed() == p.CloseCode.FLOODING


async def _spectator_that_reads_slowly(server: LiveServer) -> websockets.ClientConnection:
    """A spectator whose socket takes little (a tiny receive buffer) and whose client reads only when asked."""
    created = await create_race(server, seats=1)
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
    sock.connect(server.server.servers[0].sockets[0].getsockname()[:2])
    ws = await websockets.connect(server.ws_url, sock=sock, compression=None, max_queue=1)
    await ws.send(p.encode(_hello(created.race.id, role="spectator")))
    return ws


class _SocketThatStalls:
    """The ASGI side of a WebSocket whose sends never complete (a transport that stays paused)."""

    def __init__(self) -> None:
        self.scope: dict[str, object] = {"extensions": {}}
        self.client = None
        self.headers: dict[str, str] = {}
        self.sends = 0
        self.closed: int | None = None

    async def send_bytes(self, data: bytes) -> None:
        self.sends += 1
        await asyncio.Event().wait()

    async def close(self, code: int = 1000) -> None:
        self.closed = code


async def test_frames_queued_behind_a_stalled_send_cut_the_reader_at_send_queue(
        redis_url: str, caplog: pytest.LogCaptureFixture) -> None:
    """The frame bound: what waits behind a send the transport does not take counts, one frame too many cuts."""
    async with live_server(redis_url, send_queue=4) as server:
        ws = _SocketThatStalls()
        conn = Connection(ws, server.service)  # type: ignore[arg-type]
        conn.send(p.encode(p.Pong(nonce=0, server_time=0)))
        await eventually(lambda: ws.sends == 1, "the first frame's send to start")
        for nonce in range(1, 5):  # four queued behind it
            conn.send(p.encode(p.Pong(nonce=nonce, server_time=0)))
        assert conn.open and "event=slow_reader" not in caplog.text
        conn.send(p.encode(p.Pong(nonce=5, server_time=0)))
        assert not conn.open and "event=slow_reader" in caplog.text
        assert len(conn.outbox) == 0 and conn.outbox.close_code is p.CloseCode.SLOW_READER, \
            "the queued frames are dropped for the close"


async def test_a_client_that_stops_reading_gets_4006_after_the_byte_bound(
        redis_url: str, caplog: pytest.LogCaptureFixture) -> None:
    """The frame queue never fills (its frames go to the kernel at once): the bytes not acknowledged do."""
    bound = 32_768
    async with live_server(redis_url, send_queue=1_000_000, send_bytes=bound) as server:
        ws = await _spectator_that_reads_slowly(server)
        sent = 0

        async def flooded_off() -> bool:
            """Fifty more pings a poll (never read: the pongs pile up) until the server cuts the reader."""
            nonlocal sent
            if server.service.connections:
                for _ in range(50):
                    await ws.send(p.encode(p.Ping(nonce=2**60 + sent)))
                    sent += 1
            return server.service.connections == 0

        await eventually(flooded_off, "the slow reader cut loose", timeout=60)
        assert "event=slow_reader" in caplog.text
        assert sent * 30 < 20 * bound, f"{sent} pongs were sent before the cut"
        code = None
        try:  # reading again, the client finds the close code behind the frames it left
            while True:
                await asyncio.wait_for(ws.recv(), 20)
        except websockets.ConnectionClosed as exc:
            code = exc.rcvd.code if exc.rcvd else None
        assert code == p.CloseCode.SLOW_READER


async def test_a_slow_reader_is_cut_loose(redis_url: str, caplog: pytest.LogCaptureFixture) -> None:
    # No rate limit: the pongs go straight to the kernel until it holds the bound, which takes more
    # frames than the flood allowance would let through.
    async with live_server(redis_url, send_queue=4, rate=1e9, burst=10**9) as server:
        ws = await _spectator_that_reads_slowly(server)
        code = None
        for nonce in range(200_000):  # never read: the pongs pile up until the server gives up
            try:
                await ws.send(p.encode(p.Ping(nonce=2**60 + nonce)))
            except websockets.ConnectionClosed as exc:
                code = exc.rcvd.code if exc.rcvd else None
                break
            if nonce % 500 == 0:
                await asyncio.sleep(0.001)
                if ws.state is websockets.State.CLOSED or server.service.connections == 0:
                    break
        await eventually(lambda: server.service.connections == 0, "the slow reader cut loose")
        assert "event=slow_reader" in caplog.text
        assert code in (None, p.CloseCode.SLOW_READER)  # its close frame may be stuck behind the unread pongs
        # the server still serves others
        ok = await Client.connect(server)
        await ok.send(p.Ping(nonce=1))
        assert (await ok.expect(p.Pong)).nonce == 1
        await ok.close()


async def test_each_move_logs_the_progress_line_it_replaced(race: Race) -> None:
    """The moves script builds the line a move replaces from the player hash instead of reading the
    progress hash: the two must agree, byte for byte, for every move (a card home, a draw, a plain move),
    or a resumed client would be sent a wrong table."""
    from server.store import Keys

    redis = race.server.service.store.redis
    k = Keys(race.id)
    for seq, move in enumerate(["ba", "bF", "hg"], 1):
        before = await redis.hget(k.progress, "0")
        assert isinstance(await race.ann.move(move, seq=seq), p.Ack)
        (_, fields), = await redis.xrevrange(k.history, count=1)
        assert fields[b"k"] == b"move" and fields[b"d"] == move.encode()
        assert fields[b"o"] == before, move
