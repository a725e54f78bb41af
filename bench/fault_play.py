"""The players of the fault harness (bench/faults.py): clients that log every acknowledged move, and the verdict.

A player plays a precomputed legal line (``race_load.playout``) at a steady
pace, one move in flight, and writes down every move the server
acknowledged: (race, seat, seq, move, when). Whatever goes wrong on the way
(``unavailable``, a closed socket, no answer for a long while) it does what
the terminal client does: reconnect, ``hello`` with its seat token, and go
on from the ``seq`` the welcome says was played (resending the rest under
the same ``seq``). A player whose welcome shows fewer moves than it was
acknowledged, or whose next legal move is refused, has seen its board jump
back: it notes that and stops moving (replaying the line would hide the
loss from the comparison at the end), as a person would stop trusting it.

After the run, :func:`verdict` compares each race's stored games (read from
Redis once everything settled) with the players' logs: why from Redis and not
from the server's answers: an acknowledged move is lost when the store no
longer has it, whatever a server still holds in memory.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

import msgspec
import websockets

from shared import protocol as p

RETRY_S = 0.25
"""Pause before a reconnection or a resend after ``unavailable``: short, so a stall measures the server."""
ANSWER_S = 15.0
"""A move unanswered this long: the connection is given up and made again (the stall is counted)."""
HELLO_SETTLE_S = 10.0
"""A hello still unanswered this long after Redis is back: the player never gets its seat (stranded)."""


class Retry(Exception):
    """The connection is no good any more (closed, ``unavailable`` on hello, no answer): make a new one."""


@dataclass
class Acked:
    race: str
    seat: int
    seq: int
    move: str
    at: float


@dataclass
class Player:
    """One seat wanted in one race: its line, its token, and the log of what the server acknowledged."""

    race: str
    name: str
    url: str
    line: list[str]
    pace: float
    join_ids: bool = False
    """The server knows ``hello.join_id``: a new-seat hello carries one, the same on every retry."""
    token: str | None = None
    seat: int | None = None
    acked: list[Acked] = field(default_factory=list)
    next: int = 0
    """Index in ``line`` of the next move to send (``seq`` is ``next + 1``)."""
    sent: int = 0
    """Highest ``seq`` sent so far (moves above ``len(acked)`` are those whose ack was lost or not yet come)."""
    refused: str | None = None
    """Why this player could not get its seat (a refused hello), if so."""
    regressed: int = 0
    """Acknowledged moves the server said it no longer had (a welcome with a lower ``seq``)."""
    halted: str | None = None
    """Why the player stopped moving before the end (its board jumped back, a legal move refused)."""
    gave_up: bool = False
    finished: bool = False
    hellos: int = 0
    join_id: str = field(default_factory=lambda: secrets.token_urlsafe(12))

    def __post_init__(self) -> None:
        self.started = asyncio.Event()
        """The race has started (a countdown or a welcome of a running race): moves may go."""
        self.stop = asyncio.Event()
        """Set to end the game: the player gives up (retrying until the server answers)."""
        self.starts_at = 0.0
        self.done = asyncio.Event()

    @property
    def seq(self) -> int:
        """The highest ``seq`` acknowledged (moves applied whose answer was lost are not in ``acked``)."""
        return self.acked[-1].seq if self.acked else 0

    def hello(self) -> bytes:
        """The hello frame: with the seat token once there is one, else the name (and the join's id, the
        same on every retry, where the server knows ``join_id``: added by hand, so that a harness whose own
        protocol module predates it still sends it)."""
        hello = p.Hello(protocol=p.PROTOCOL_VERSION, race=self.race, name=None if self.token else self.name,
                        token=self.token)
        if self.token is not None or not self.join_ids:
            return p.encode(hello)
        fields: dict[str, Any] = msgspec.to_builtins(hello)
        fields["join_id"] = self.join_id
        return msgspec.msgpack.encode(fields)

    async def run(self, give_up_by: float | None = None) -> None:
        """Hold the seat until the game is over: reconnect as often as it takes."""
        try:
            while not (self.gave_up or self.finished or self.refused):
                try:
                    async with websockets.connect(self.url, compression=None, max_queue=None,
                                                  open_timeout=5, close_timeout=1) as ws:
                        await self._session(ws)
                except (Retry, OSError, TimeoutError, websockets.ConnectionClosed, websockets.InvalidHandshake):
                    await asyncio.sleep(RETRY_S)
        finally:
            self.done.set()

    async def _recv(self, ws: websockets.ClientConnection, timeout: float = ANSWER_S) -> p.ServerMessage:
        try:
            data = await asyncio.wait_for(ws.recv(), timeout)
        except TimeoutError:
            raise Retry("no answer") from None
        msg = p.decode_server(data)  # type: ignore[arg-type]
        if isinstance(msg, p.Countdown):
            self.starts_at = time.monotonic() + max(0.0, (msg.starts_at - msg.server_time) / 1000) + 0.01
            self.started.set()
        elif isinstance(msg, p.Finished):
            self.finished = True
        return msg

    async def _session(self, ws: websockets.ClientConnection) -> None:
        self.hellos += 1
        await ws.send(self.hello())
        while not isinstance(msg := await self._recv(ws), (p.Welcome, p.Error)):
            pass
        if isinstance(msg, p.Error):
            if msg.code == "unavailable":
                raise Retry(msg.code)
            if self.token is None:
                self.refused = msg.code  # name_taken after a lost answer: the ghost seat's player
                return
            raise Retry(msg.code)
        self._welcomed(msg)
        if not self.started.is_set():
            await self._wait(ws, self.started)
        if self.finished:
            return
        await asyncio.sleep(max(0.0, self.starts_at - time.monotonic()))
        await self._play(ws)
        await self._wait(ws, self.stop)  # a line played out, a board that jumped back: wait to give up
        if not self.finished:
            await self._give_up(ws)

    def _welcomed(self, msg: p.Welcome) -> None:
        self.token, self.seat = msg.token, msg.seat
        if msg.race.status in ("countdown", "running"):  # a countdown frame sent before this welcome is not resent
            ahead = ((msg.race.starts_at or msg.server_time) - msg.server_time) / 1000
            self.starts_at = time.monotonic() + max(0.0, ahead) + 0.01
            self.started.set()
        elif msg.race.status == "finished":
            self.finished = True
        if msg.seq < self.seq and not self.regressed:
            self.regressed = self.seq - msg.seq
            self.halted = f"welcome seq {msg.seq} below {self.seq} acknowledged"
        self.next = min(max(self.next, msg.seq), len(self.line)) if not self.halted else self.next

    async def _wait(self, ws: websockets.ClientConnection, event: asyncio.Event) -> None:
        """Read (and fold) frames until ``event`` or the stop; a long silence is fine here (a lobby)."""
        while not event.is_set() and not self.stop.is_set() and not self.finished:
            try:
                await self._recv(ws, 1.0)
            except Retry:
                continue

    async def _play(self, ws: websockets.ClientConnection) -> None:
        next_at = time.monotonic()
        while not self.stop.is_set() and not self.halted and not self.finished and self.next < len(self.line):
            next_at = max(next_at + 1.0 / self.pace, time.monotonic() - 1.0 / self.pace)
            await asyncio.sleep(max(0.0, next_at - time.monotonic()))
            seq, text = self.next + 1, self.line[self.next]
            self.sent = max(self.sent, seq)
            await ws.send(p.encode(p.Move(seq=seq, move=text)))
            while not (isinstance(msg := await self._recv(ws), (p.Ack, p.Reject)) and msg.seq == seq):
                if self.finished:
                    return
            if isinstance(msg, p.Ack):
                self.next = seq
                if seq > self.seq:
                    self.acked.append(Acked(self.race, self.seat or 0, seq, text, time.monotonic()))
                if msg.status == "finished":  # won (a blocked player gives up at the end like the others)
                    self.finished = True
            elif msg.reason in ("unavailable", "rate_limited"):
                await asyncio.sleep(RETRY_S)
            elif msg.reason == "stale_sequence":
                raise Retry(msg.reason)  # the welcome says which of them were played
            else:
                self.halted = f"legal move {seq} refused: {msg.reason}"

    async def _give_up(self, ws: websockets.ClientConnection) -> None:
        await ws.send(p.encode(p.GiveUp()))
        while True:
            msg = await self._recv(ws)
            if isinstance(msg, p.GaveUp) or self.finished:
                self.gave_up = True
                return
            if isinstance(msg, p.Error):
                if msg.code == "unavailable":
                    raise Retry(msg.code)
                self.gave_up = True  # race_over, player_finished: the game is over already
                return


async def start_race(url: str, creator_token: str, deadline: float) -> str:
    """Start a race with its creator token, again after ``unavailable`` or a lost connection, until
    ``deadline`` (monotonic; tried once at least): ``"started"`` or the refusal's code."""
    while True:
        try:
            async with websockets.connect(url, compression=None, open_timeout=5, close_timeout=1) as ws:
                await ws.send(p.encode(p.Start(creator_token=creator_token)))
                while True:
                    msg = p.decode_server(await asyncio.wait_for(ws.recv(), ANSWER_S))  # type: ignore[arg-type]
                    if isinstance(msg, p.Countdown):
                        return "started"
                    if isinstance(msg, p.Error):
                        if msg.code != "unavailable":
                            return msg.code
                        break
        except (OSError, TimeoutError, websockets.ConnectionClosed, websockets.InvalidHandshake):
            pass
        if time.monotonic() >= deadline:
            return "timed out"
        await asyncio.sleep(RETRY_S)


# ------------------------------------------------------------------ the verdict
@dataclass
class Stored:
    """One race as Redis has it at the end: its status, and each seat's game (its move log)."""

    status: str
    logs: list[list[str]]


@dataclass
class RaceVerdict:
    lost: int = 0
    diverged: bool = False
    stranded: int = 0
    notes: list[str] = field(default_factory=list)


def common_prefix(a: list[str], b: list[str]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def verdict(players: list[Player], stored: Stored | None, wanted_to_move: bool) -> RaceVerdict:
    """One race: acknowledged moves missing from its stored games, whether a stored game is anything but
    the acknowledged moves plus some of those whose answer was lost, and its stranded seats.

    Stranded: a player who never got a seat token, or a stored seat no player holds (its join was stored
    and answered as a failure: the ghost seat), counted once per such join; and a seat whose player had
    it and wanted to move, but never got a move acknowledged (``wanted_to_move``: the race was to be played).
    """
    out = RaceVerdict()
    if stored is None:
        out.lost = sum(len(pl.acked) for pl in players)
        out.diverged = out.lost > 0
        out.notes.append("race missing from Redis")
        return out
    held = {pl.seat for pl in players if pl.token is not None}
    for pl in players:
        if pl.seat is None or pl.seat >= len(stored.logs):
            out.lost += len(pl.acked)
            continue
        log = stored.logs[pl.seat]
        same = common_prefix(log, pl.line)
        out.lost += sum(1 for a in pl.acked if a.seq > same)
        # the stored game is the line's first moves: every acknowledged one, and no more than were sent
        if same < len(log) or len(log) < pl.seq or len(log) > pl.sent:
            out.diverged = True
            out.notes.append(f"seat {pl.seat}: stored {len(log)} moves ({same} as sent), {pl.seq} acked, "
                             f"{pl.sent} sent")
    ghosts = sum(1 for seat, log in enumerate(stored.logs) if seat not in held and not log)
    no_seat = sum(1 for pl in players if pl.token is None)
    idle = sum(1 for pl in players if wanted_to_move and pl.token is not None and not pl.acked
               and not pl.halted and pl.line)
    out.stranded = max(ghosts, no_seat) + idle
    if ghosts or no_seat or idle:
        out.notes.append(f"{ghosts} ghost seats, {no_seat} players without a seat "
                         f"({', '.join(sorted({pl.refused or 'no answer' for pl in players if pl.token is None}))}), "
                         f"{idle} seats never moved"
                         + "".join(f"; {pl.name}: {pl.hellos} hellos, "
                                   + ("started" if pl.started.is_set() else "never saw the start")
                                   for pl in players if pl.token is not None and not pl.acked))
    return out


def longest_gap(times: list[float], start: float, end: float, last: float) -> tuple[float, float]:
    """The longest time without an acknowledgement while a fault lasted (``start`` to ``end``): between
    two acks, from the last one before the fault, up to the first one after it (or to ``last``, when
    play stopped, if none came); and when it began."""
    points = sorted(times)
    before = [t for t in points if t <= start]
    marks = [before[-1] if before else start]
    for t in (t for t in points if t > start):
        marks.append(t)
        if t > end:
            break
    else:
        marks.append(last)
    return max((b - a, a) for a, b in zip(marks, marks[1:]))
