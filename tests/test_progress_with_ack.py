"""A progress frame for a player whose move is in flight waits for that move's answer and goes out just
before it, in the same write (``Connection.hold``): one system call and one wake-up of the client, where
a player who keeps a move in flight used to get a write of its own ten times a second.

The client's reading is paused, so what the server wrote is in the kernel, to be counted and read from
there; the move's answer is held back by the test until it lets it go.
"""

from __future__ import annotations

import array
import asyncio
import fcntl
import socket
import termios
from typing import Any

import pytest
from redis_util import Client, LiveServer, caught_up, create_race, eventually, listen_as_another_process, start_race

from server.race import frame_plan
from server.store import MoveCommit
from shared import protocol as p


def _unread(sock: socket.socket) -> int:
    """Bytes in the socket's receive queue (FIONREAD)."""
    n = array.array("i", [0])
    fcntl.ioctl(sock.fileno(), termios.FIONREAD, n)
    return n[0]


def _frames(data: bytes) -> list[bytes]:
    """The payloads of the complete unmasked binary frames at the start of ``data`` (a server's frames)."""
    out = []
    while len(data) >= 2:
        size, start = data[1] & 0x7F, 2
        if size == 126:
            size, start = int.from_bytes(data[2:4], "big"), 4
        elif size == 127:
            size, start = int.from_bytes(data[2:10], "big"), 10
        if len(data) < start + size:
            break
        out.append(data[start:start + size])
        data = data[start + size:]
    return out


class _HeldAnswers:
    """The store's answers to one seat's moves held back until :meth:`let_go` (the move itself is
    stored at once, so the race's progress moves on and is announced)."""

    def __init__(self, server: LiveServer, seat: int, lose: bool) -> None:
        self.lose = lose
        """Answer with a lost connection instead (the move is stored, the server cannot know it)."""
        self.store = server.service.store
        self.real = self.store.commit_move
        self.seat = seat
        self.gate = asyncio.Event()
        self.waiting = 0
        self.store.commit_move = self._commit

    def _commit(self, race: str, commit: MoveCommit, *, then: Any = None) -> "asyncio.Future[Any]":
        if commit.seat != self.seat:
            return self.real(race, commit, then=then)
        stored = self.real(race, commit)
        self.waiting += 1
        answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        if then is not None:
            answer.add_done_callback(then)

        async def later() -> None:
            await self.gate.wait()
            try:
                result = await stored
                if self.lose:
                    raise ConnectionError("the answer was lost")
                answer.set_result(result)
            except Exception as exc:
                answer.set_exception(exc)

        asyncio.ensure_future(later())
        return answer

    def let_go(self) -> None:
        self.gate.set()

    def restore(self) -> None:
        self.store.commit_move = self.real


def _draws_of(msg: p.ServerMessage, seat: int) -> int | None:
    """The moves count of ``seat`` in a progress frame (None: not a progress frame, or not that seat)."""
    if not isinstance(msg, p.Progress):
        return None
    return next((line.moves for line in msg.players if line.seat == seat), None)


@pytest.mark.parametrize("lose", [False, True], ids=["acked", "answer_lost"])
async def test_a_progress_frame_waits_for_the_answer_to_the_move_in_flight_and_goes_just_before_it(
        server: LiveServer, lose: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """The answer is the ack, or (Redis's reply lost) a reject saying ``unavailable``: either takes the
    held frame along.

    A draw changes only a move count, which racers are sent within ``RACER_LAG``: made 0 here, so that
    ann's progress frame with her draw is made while her draw's answer is held back."""
    monkeypatch.setattr(frame_plan, "RACER_LAG", 0.0)
    created = await create_race(server, seats=2, deal_source="number", deal=2)
    ann, bob, watcher = [await Client.connect(server) for _ in range(3)]
    ann_welcome = await ann.hello(created.race.id, "ann")
    bob_welcome = await bob.hello(created.race.id, "bob")
    await watcher.hello(created.race.id, role="spectator")
    await start_race(server, created.creator_token, [ann, bob, watcher])
    seat = ann_welcome.seat
    assert seat is not None and bob_welcome.seat is not None
    await caught_up(ann, server, created.race.id)  # the start's frame is not the one held back below
    # Another process watches the race too, so ann's stored move is announced (as the scripts announce a
    # move only to other processes) and this process's hub hears of it before her move's answer comes.
    await listen_as_another_process(server.service.redis, created.race.id)
    held = _HeldAnswers(server, seat, lose)
    transport: Any = ann.ws.transport
    sock = transport.get_extra_info("socket")
    peek = socket.fromfd(sock.fileno(), sock.family, sock.type)  # a duplicate: same receive queue
    peek.setblocking(False)

    def in_kernel() -> list[p.ServerMessage]:
        return [p.decode_server(f) for f in _frames(peek.recv(1 << 16, socket.MSG_PEEK) if _unread(sock) else b"")]

    try:
        transport.pause_reading()  # what the server writes to ann stays in the kernel, to be looked at
        await ann.send(p.Move(seq=1, move="S"))
        await eventually(lambda: held.waiting == 1, "ann's move in flight")

        # ann's draw is stored, so the race's progress goes on: the spectator sees it ...
        async def watcher_saw_the_draw() -> bool:
            return _draws_of(await watcher.recv(), seat) == 1

        await eventually(watcher_saw_the_draw, "the spectator's progress frame with ann's draw")
        # ... and ann, whose move is in flight, not yet: her frame with it waits (a flush made it, with the
        # spectator's or, the racers' frames being at most racer_hz a second, just after it).
        conn = next(c for c in server.service.hubs[created.race.id].conns if c.seat == seat)
        await eventually(lambda: conn.held > 0, "ann's progress frame with her draw to be held back")
        assert 1 not in [_draws_of(m, seat) for m in in_kernel()], "ann's progress went before her move's answer"

        held.let_go()
        answer_type = p.Reject if lose else p.Ack
        await eventually(lambda: any(isinstance(m, answer_type) for m in in_kernel()), "the answer to ann's move")
        frames = in_kernel()
        # The answer, wherever it is: a later flush (the racers' table catching up) may follow it at once.
        at = next(i for i, m in enumerate(frames) if isinstance(m, answer_type))
        assert at > 0, f"no frame went before the answer: {frames}"
        answer, before = frames[at], frames[at - 1]
        assert isinstance(answer, answer_type) and answer.seq == 1, frames
        assert not lose or answer.reason == p.ErrorCode.UNAVAILABLE.value, answer  # type: ignore[union-attr]
        assert _draws_of(before, seat) == 1, f"the held progress frame goes just before the answer: {frames}"
        assert lose or before.version <= answer.version  # type: ignore[union-attr]
        transport.resume_reading()
        assert isinstance(await ann.expect(answer_type), answer_type)

        # With no move in flight a progress frame goes at once: bob's draw reaches ann, who does nothing.
        assert isinstance(await bob.move("S"), p.Ack)

        async def ann_saw_bobs_draw() -> bool:
            return _draws_of(await ann.recv(), bob_welcome.seat) == 1  # type: ignore[arg-type]

        await eventually(ann_saw_bobs_draw, "bob's draw in ann's progress")
    finally:
        peek.close()
        held.restore()
        for c in (ann, bob, watcher):
            await c.close()
