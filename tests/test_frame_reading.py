"""The server reads a race connection's binary frames itself (server/transport/websocket.py, ``Protocol._walk``):
whatever way the client's bytes are cut, every frame reaches the right reader, in order.

A raw TCP client (websockets' sans-I/O client protocol to build and read frames) writes a mix of frames,
cut into random chunks: binary protocol frames, a WebSocket ping, a text frame, a message in two fragments
and a close. The server must answer exactly as websockets' own parser would: a ``pong`` frame for each
``ping`` message in order, a WebSocket pong, a ``bad_frame`` error for the text, the fragmented message
joined, and the close answered.
"""

from __future__ import annotations

import array
import asyncio
import fcntl
import random
import termios
from typing import Any, Callable

import pytest
from websockets.client import ClientProtocol
from websockets.frames import Frame, Opcode
from websockets.http11 import Response
from websockets.uri import parse_uri

from server.transport.websocket import Protocol
from shared import protocol as p
from tests.redis_util import LiveServer


class ServerReads:
    """Every read the server's connections make (its HTTP protocol's, until the handshake, then its
    WebSocket protocol's), as an event a test can wait for: the server runs in the test's loop, and a
    piece written is read when the test lets the loop run."""

    def __init__(self, server: LiveServer, monkeypatch: pytest.MonkeyPatch) -> None:
        self.read = asyncio.Event()
        for cls in (server.server.config.http_protocol_class, Protocol):
            monkeypatch.setattr(cls, "data_received", self._heard(cls.data_received))

    def _heard(self, original: Callable[[Any, bytes], None]) -> Callable[[Any, bytes], None]:
        def heard(protocol: Any, data: bytes) -> None:
            original(protocol, data)
            self.read.set()
        return heard


@pytest.fixture
def reads(server: LiveServer, monkeypatch: pytest.MonkeyPatch) -> ServerReads:
    return ServerReads(server, monkeypatch)


class RawClient:
    """A client whose every written byte is chosen here: frames built by websockets, cut as the test says."""

    def __init__(self, server: LiveServer, reads: ServerReads) -> None:
        self.server = server
        self.reads = reads
        self.proto = ClientProtocol(parse_uri(server.ws_url))
        self.events: list[Any] = []

    async def open(self, request_cuts: list[int] | None = None) -> None:
        """Connect and handshake (the request written in pieces ending at ``request_cuts``)."""
        host, port = self.server.server.servers[0].sockets[0].getsockname()[:2]
        self.reader, self.writer = await asyncio.open_connection(host, port)
        self.proto.send_request(self.proto.connect())
        await self.write_cut(b"".join(self.proto.data_to_send()), request_cuts or [])
        while not any(isinstance(e, Response) for e in self.events):
            await self._read()

    def frames(self, build: Any) -> bytes:
        """The bytes ``build(proto)`` makes the client protocol send (masked, as a client's are)."""
        build(self.proto)
        return b"".join(self.proto.data_to_send())

    async def write_cut(self, data: bytes, cuts: list[int]) -> None:
        """Write ``data`` in pieces ending at ``cuts``, each piece a write of its own reaching the server."""
        start = 0
        for end in sorted(set(cuts)) + [len(data)]:
            if end > start:
                self.writer.write(data[start:end])
                await self.writer.drain()
                await self._read_by_server()  # so that the next piece comes in a read of its own
                start = end

    async def _read_by_server(self, timeout: float = 5.0) -> None:
        """Wait until the server has read every byte written to it (its sockets' receive queues empty),
        one server read at a time."""
        while any(_unread(conn) for conn in self.server.server.server_state.connections):
            self.reads.read.clear()
            try:
                await asyncio.wait_for(self.reads.read.wait(), timeout)
            except asyncio.TimeoutError:
                raise AssertionError("the server did not read what was written") from None

    async def _read(self) -> None:
        data = await asyncio.wait_for(self.reader.read(65536), 5)
        assert data, "the server closed the connection"
        self.proto.receive_data(data)
        self.events += self.proto.events_received()

    async def until(self, count: int) -> list[Frame]:
        """The first ``count`` frames received after the handshake."""
        while len([e for e in self.events if isinstance(e, Frame)]) < count:
            await self._read()
        return [e for e in self.events if isinstance(e, Frame)][:count]

    def close(self) -> None:
        self.writer.close()


def _ping(nonce: int) -> bytes:
    return p.encode(p.Ping(nonce=nonce))


LONG = p.encode(p.Move(seq=1, move="x" * 300))
"""A frame whose length takes the two-byte form (126 to 65,535 bytes)."""


def _mixed(client: RawClient) -> bytes:
    """A ping message, a WebSocket ping, a text frame, a ping message in two fragments, a ping message,
    and a long move before any hello."""
    fragment = _ping(2)
    return b"".join([
        client.frames(lambda c: c.send_binary(_ping(1))),
        client.frames(lambda c: c.send_ping(b"are you there")),
        client.frames(lambda c: c.send_text(b"not msgpack")),
        client.frames(lambda c: (c.send_binary(fragment[:3], fin=False), c.send_continuation(fragment[3:], fin=True))),
        client.frames(lambda c: c.send_binary(_ping(3))),
        client.frames(lambda c: c.send_binary(LONG)),
    ])


def _check_mixed(frames: list[Frame]) -> None:
    answers = [f for f in frames if f.opcode is Opcode.BINARY]
    assert [f.opcode for f in frames if f.opcode is not Opcode.BINARY] == [Opcode.PONG]
    assert frames[[f.opcode for f in frames].index(Opcode.PONG)].data == b"are you there"
    decoded = [p.decode_server(bytes(f.data)) for f in answers]
    assert [type(m) for m in decoded] == [p.Pong, p.Error, p.Pong, p.Pong, p.Error], decoded
    assert [m.nonce for m in decoded if isinstance(m, p.Pong)] == [1, 2, 3]
    text, long = decoded[1], decoded[4]
    assert isinstance(text, p.Error) and text.code == p.ErrorCode.BAD_FRAME.value
    assert isinstance(long, p.Error) and long.ref == "move", long


def _unread(conn: Any) -> int:
    """Bytes waiting in the kernel for one of the server's connections to read (FIONREAD)."""
    sock = conn.transport.get_extra_info("socket") if conn.transport is not None else None
    if sock is None or sock.fileno() < 0:
        return 0
    count = array.array("i", [0])
    fcntl.ioctl(sock.fileno(), termios.FIONREAD, count)
    return count[0]


def _walking(server: LiveServer) -> list[bool]:
    """Whether each open WebSocket connection of the server reads its frames itself."""
    return [conn.walking for conn in server.server.server_state.connections if isinstance(conn, Protocol)]


async def _mixed_answered(server: LiveServer, reads: ServerReads, cuts: Callable[[int], list[int]],
                          request_cuts: list[int]) -> None:
    """Open a connection (its request written cut at ``request_cuts``), write :func:`_mixed` cut at
    ``cuts(its length)``, and check the answers; the connection reads its frames itself throughout."""
    client = RawClient(server, reads)
    await client.open(request_cuts)
    try:
        assert _walking(server) == [True], "the race connection reads its frames itself"
        data = _mixed(client)
        await client.write_cut(data, cuts(len(data)))
        _check_mixed(await client.until(6))
        assert _walking(server) == [True], "the control, text and fragmented frames kept the walk"
    finally:
        client.close()


@pytest.mark.parametrize("seed", range(12))
async def test_frames_cut_anywhere_reach_their_readers_in_order(server: LiveServer, reads: ServerReads,
                                                                seed: int) -> None:
    rng = random.Random(seed)
    await _mixed_answered(server, reads, lambda n: rng.sample(range(1, n), rng.randint(1, 12)), [])


async def test_frames_written_a_byte_at_a_time(server: LiveServer, reads: ServerReads) -> None:
    await _mixed_answered(server, reads, lambda n: list(range(1, n)), [])


async def test_a_handshake_request_written_in_pieces(server: LiveServer, reads: ServerReads) -> None:
    """The request cut into pieces (uvicorn's HTTP reader joins them and hands the request on whole):
    the frames after it are still read by the server itself."""
    await _mixed_answered(server, reads, lambda n: [1, 7, 30], [5, 40, 100])


async def test_a_close_frame_is_answered_while_walking(server: LiveServer, reads: ServerReads) -> None:
    client = RawClient(server, reads)
    await client.open()
    try:
        ping = client.frames(lambda c: c.send_binary(_ping(1)))
        await client.write_cut(ping, [3])
        (answer,) = await client.until(1)
        assert isinstance(p.decode_server(bytes(answer.data)), p.Pong)
        close = client.frames(lambda c: c.send_close(1000))
        await client.write_cut(close, [1, 4])
        closed = (await client.until(2))[1]
        assert closed.opcode is Opcode.CLOSE and closed.data[:2] == (1000).to_bytes(2, "big")
    finally:
        client.close()


async def test_a_move_is_handled_as_it_is_read_and_the_frames_around_it_keep_their_order(
        server: LiveServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """A player's move goes to the store from the read itself (``Connection.take_now``), with no task
    woken; a frame behind it in the same read waits for its answer, and a move behind another frame
    waits its turn. Each pair is written at once, so that the server reads it in one piece."""
    from server.race.connection import Connection
    from tests.redis_util import Client, create_race, start_race

    offered: list[bool] = []
    take_now = Connection.take_now

    def spied(self: Connection, data: bytes) -> bool:
        offered.append(take_now(self, data))
        return offered[-1]

    monkeypatch.setattr(Connection, "take_now", spied)
    created = await create_race(server, seats=1, deal_source="number", deal=2)
    ann = await Client.connect(server)
    await ann.hello(created.race.id, "ann")
    await start_race(server, created.creator_token, [ann])
    transport: Any = ann.ws.transport

    async def both(first: Any, second: Any) -> list[Any]:
        """``first`` and ``second`` in one write; their two answers (progress frames left out)."""
        offered.clear()
        transport.write(b"".join(Frame(Opcode.BINARY, p.encode(m)).serialize(mask=True, extensions=[])
                                 for m in (first, second)))
        answers: list[Any] = []
        while len(answers) < 2:
            msg = await ann.recv()
            if not isinstance(msg, p.Progress):
                answers.append(msg)
        return answers

    ack, pong = await both(p.Move(seq=1, move="S"), p.Ping(nonce=7))
    assert isinstance(ack, p.Ack) and ack.seq == 1 and isinstance(pong, p.Pong) and pong.nonce == 7
    assert offered[0] is True, "the move was handled as it was read"
    pong, ack = await both(p.Ping(nonce=8), p.Move(seq=2, move="S"))
    assert isinstance(pong, p.Pong) and pong.nonce == 8 and isinstance(ack, p.Ack) and ack.seq == 2
    assert offered[:1] == [False], "a ping goes to the connection's task, and the move behind it too"
    await ann.close()
