"""One WebSocket connection as a pump: frames in, one at a time in arrival order; frames out, in order.

What a frame does is elsewhere: taking a seat (:mod:`.seating`), the welcome (:mod:`.welcome`), a
joined race's frames (:mod:`.seat`, over the sans-I/O :mod:`.session`), the lobby's seeks (a
:class:`~.lobby.LobbyFrames` the composition root hands over). What is here: the read loop, the
outbox (:mod:`.outbox`: a frame goes straight to the transport while nothing is queued, with no task
switch per frame; once the transport pushes back, frames wait in the bounded outbox drained by a writer
task, and a reader too slow for it is cut loose), the rate limit, and the answer to a frame that
failed. Every frame is wrapped so that no input, and no Redis outage, can take the server down: the
worst a client gets is a typed error or a close code.
"""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable

from starlette.websockets import WebSocket, WebSocketDisconnect, WebSocketState

from shared import protocol as p

from ..ops.log import log
from ..ops.ratelimit import TokenBucket
from . import frames
from .frames import admit, answer_failure
from .lobby import LobbyFrames
from .seat import Joined, Stage
from .service import Service
from .session import Refused
from .writer import CLOSING, OPEN, PARKED, SocketWriter

HELLO = Stage.HELLO
"""(A module constant: an enum member's lookup costs some 200 ns, and the loop asks once a frame.)"""


class Connection(SocketWriter):
    """A client's socket and what it has joined."""

    __slots__ = ("store", "lobby", "bucket", "budgets", "stage", "joined", "seat", "member", "gen", "in_flight")

    def __init__(self, ws: WebSocket, service: Service, lobby: LobbyFrames | None = None) -> None:
        super().__init__(ws, service)
        cfg = service.config.edge
        self.store = service.store
        self.lobby = lobby
        self.bucket = TokenBucket(cfg.rate, cfg.burst)
        self.budgets: tuple[TokenBucket, TokenBucket] | None = None
        """The error budget and the flood allowance (frames dropped by the rate limit, refilled one a second:
        used up, the connection closes 4005), made on the first frame that needs them."""
        self.stage = Stage.HELLO
        self.joined: Joined | None = None
        self.seat: int | None = None
        """The player's seat (None for a spectator, or before hello)."""
        self.member = ""
        """This connection's presence lease name (players only)."""
        self.gen = 0
        """The generation of the seat this connection holds (its session's: the hub reads it here)."""
        self.in_flight: asyncio.Future[Any] | None = None
        """The move being stored (the store's future, or the task of its slow path): the next frame waits."""

    @property
    def race(self) -> str | None:
        """The race joined (None before a hello, or seeking)."""
        return self.joined.race if self.joined is not None else None

    @property
    def held(self) -> int:
        """Frames waiting for the answer to the move in flight (:meth:`hold`)."""
        return len(self._held) if self._held is not None else 0

    def error_budgets(self) -> tuple[TokenBucket, TokenBucket]:
        if self.budgets is None:
            self.budgets = (TokenBucket(1.0, self.service.config.edge.max_errors),
                            TokenBucket(1.0, self.service.config.edge.burst))
        return self.budgets

    # ---------------------------------------------------------- sending
    def hold(self, data: bytes) -> None:
        """Send a frame that need not go out before the answer to the move in flight (a progress frame):
        it waits for that answer and goes out in the same write. Any other frame sent meanwhile takes it
        along, ahead of itself, so the order the client sees is the order of the calls.

        Why: a fast player almost always has a move in flight, and each progress frame (ten a second
        a race) cost a write here and a wake-up of the client of its own; the answer comes within the
        move's round trip, a few milliseconds.
        """
        session = self.joined.session if self.joined is not None else None
        if session is None or session.moving is None:
            self.send(data)
        elif self._held is None:
            self._held = [data]
        else:
            self._held.append(data)

    # ---------------------------------------------------------- reading
    async def run(self) -> None:
        receive: Callable[[], Awaitable[Any]] = self.ws.receive
        if self.backlog is not None:
            # Binary frames straight from the transport's reader (see transport/websocket.py), not through
            # websockets' parser and Starlette's receive; a player's move handled as it is read.
            self.backlog.read_frames(self.take_now)
            receive = self.backlog.receive
        await self.ws.accept()
        self.service.connections += 1
        self.service.metrics.connections_opened += 1
        loop = asyncio.get_running_loop()
        hello_deadline = loop.time() + self.service.config.edge.hello_timeout
        try:
            while not (self.link is CLOSING and self._writer is None):  # until this side has closed
                if self.stage is not HELLO:
                    # Joined (or seeking): no deadline, so a plain receive (wait_for's task and timer cost a few percent a move).
                    if self.link is OPEN:
                        self.link = PARKED
                    try:
                        message = await receive()
                    finally:
                        if self.link is PARKED:
                            self.link = OPEN
                else:
                    try:
                        message = await asyncio.wait_for(receive(), hello_deadline - loop.time())
                    except asyncio.TimeoutError:
                        self.refuse(p.ErrorCode.HELLO_REQUIRED, "no hello in time", close=p.CloseCode.HELLO_TIMEOUT)
                        if self._writer is not None:
                            await asyncio.wait_for(asyncio.shield(self._writer), 1.0)
                        break
                if self.in_flight is not None:
                    await self._settled()
                if type(message) is bytes:
                    await self.handle(message)
                    continue
                if message["type"] == "websocket.disconnect":
                    break
                data = message.get("bytes")
                if data is None:
                    self.refuse(p.ErrorCode.BAD_FRAME, "frames are binary msgpack, not text")
                    continue
                await self.handle(data)
        except (WebSocketDisconnect, RuntimeError, asyncio.TimeoutError):
            pass
        finally:
            if self.in_flight is not None:
                await self._settled()
            self.link = CLOSING
            writer = self._writer
            if writer is not None:
                writer.cancel()
                await asyncio.gather(writer, return_exceptions=True)
            await self._leave()
            self.service.connections -= 1
            if self.ws.application_state != WebSocketState.DISCONNECTED:
                try:
                    await self.ws.close(p.CloseCode.NORMAL)
                except (RuntimeError, OSError, WebSocketDisconnect):
                    pass

    async def _settled(self) -> None:
        """Wait until the move in flight is answered (its slow path included); raises only this task's
        own cancellation."""
        while self.in_flight is not None:
            waiting = self.in_flight
            try:
                await asyncio.shield(waiting)
            except asyncio.CancelledError:
                if not waiting.cancelled():  # this task was cancelled, not the move: stop waiting
                    raise
            except Exception:  # answered by the seat's commit callback or slow path, which saw the same outcome
                pass
            if self.in_flight is waiting:  # the callback has not run yet: let it
                await asyncio.sleep(0)

    async def _leave(self) -> None:
        if self.stage is Stage.SEEKING and self.lobby is not None:
            await self.lobby.gone(self)
        if self.joined is not None:
            await self.joined.left()
        log("left", race=self.race, seat=self.seat, peer=self.peer)

    async def handle(self, data: bytes) -> None:
        """One frame in; never raises."""
        if self.link is CLOSING:
            return
        msg: Any = None
        try:
            msg = p.decode_client(data)
            admit(self)
            if self.store.down:
                await self.store.check_up()
            await frames.dispatch(self, msg)
        except Exception as exc:
            self.failed(exc, msg)

    def take_now(self, data: bytes) -> bool:
        """Handle a frame as it is read, if it is a move that needs nothing awaited before it goes to the
        store (the common case: a player's next move, its race running, its game cached); False: the
        connection's task handles it, in order, as every other frame.

        Why: waking the task for each frame (the inbox's future, a task step, two coroutines) cost
        about a tenth of the server's CPU a move. Order holds: only while the task waits for a frame,
        with nothing queued before this one (the reader checks) and no move in flight. Never raises:
        it runs in the transport's read callback.
        """
        joined = self.joined
        if self.link is not PARKED or self.in_flight is not None or self.store.down or joined is None:
            return False
        session, meta = joined.session, joined.hub.meta
        if session is None or not session.loaded or meta is None or meta.status == "lobby":
            return False
        try:
            msg = p.decode_client(data)
        except Exception:  # the task's handle refuses it
            return False
        if type(msg) is not p.Move:
            return False
        try:
            admit(self)
            joined.play(msg, session, meta)
        except Exception as exc:
            self.failed(exc, msg)
        return True

    def apart(self, handling: Awaitable[None], msg: Any) -> None:
        """Put a frame's handling in flight as a task of its own, answering what it raises; the next
        frame waits until it is over."""
        task = asyncio.ensure_future(self._answer(handling, msg))
        self.in_flight = task
        task.add_done_callback(self._landed)

    async def _answer(self, handling: Awaitable[None], msg: Any) -> None:
        try:
            await handling
        except Exception as exc:
            self.failed(exc, msg)

    def _landed(self, task: "asyncio.Future[Any]") -> None:
        if self.in_flight is task:
            self.in_flight = None

    def failed(self, exc: Exception, msg: Any) -> None:
        """Answer a frame whose handling raised: a typed refusal, ``unavailable``, or ``internal``."""
        answer_failure(self, exc, msg)

    def countdown_ms(self) -> int:
        return int(self.service.config.races.countdown * 1000)

    def client(self) -> str:
        """The address this connection's creations (races, seeks) count against."""
        return self.service.client_of(self.ws.client.host if self.ws.client else None, self.ws.headers)

    refuse = frames.refuse
