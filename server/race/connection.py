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
import enum
import logging
from typing import Any, Awaitable, Callable

import msgspec
from starlette.websockets import WebSocket, WebSocketDisconnect, WebSocketState

from shared import protocol as p

from ..ops.log import log
from ..ops.ratelimit import TokenBucket
from ..ops.websocket import BACKLOG, Backlog
from ..store import UNAVAILABLE, StoreError
from .clock import now_ms
from . import frames
from .frames import HANDLERS, admit, answer_failure
from .lobby import LobbyFrames
from .outbox import Outbox
from .seat import Joined
from .seating import take_seat
from .service import Service
from .session import Refused, SeatSession
from .welcome import welcome

SLOW_READER_GRACE = 10.0
"""Seconds a slow reader has to read up to its close frame before its socket is dropped."""


class Link(enum.IntEnum):
    """Where the socket stands; sending goes on below :attr:`GONE`."""

    OPEN = 0
    PARKED = 1
    """Open, and the task waits for the next frame having handled every earlier one: a frame read now may
    be handled as it is read (:meth:`Connection.take_now`)."""
    GONE = 2
    """Sending failed (the client went away): frames it sent before are still handled."""
    CLOSING = 3
    """This side decided to close: frames still arriving are not handled."""


class Stage(enum.Enum):
    """What the connection is for: nothing yet (a hello is due), a seek, or a race (:attr:`Connection.joined`)."""

    HELLO = "hello"
    SEEKING = "seeking"
    JOINED = "joined"


class Connection:
    """A client's socket and what it has joined."""

    __slots__ = ("ws", "service", "store", "lobby", "outbox", "backlog", "bucket", "budgets", "peer", "link",
                 "stage", "joined", "seat", "member", "gen", "in_flight", "_writer", "_held", "__weakref__")

    def __init__(self, ws: WebSocket, service: Service, lobby: LobbyFrames | None = None) -> None:
        cfg = service.config
        self.ws = ws
        self.service = service
        self.store = service.store
        self.lobby = lobby
        self.outbox = Outbox(cfg.send_queue, cfg.send_bytes)
        self.backlog: Backlog | None = ws.scope.get("extensions", {}).get(BACKLOG)
        """What the transport and kernel hold for the client (None under another ASGI server: frames only)."""
        self.bucket = TokenBucket(cfg.rate, cfg.burst)
        self.budgets: tuple[TokenBucket, TokenBucket] | None = None
        """The error budget and the flood allowance (frames dropped by the rate limit, refilled one a second:
        used up, the connection closes 4005), made on the first frame that needs them."""
        self.peer = f"{ws.client.host}:{ws.client.port}" if ws.client else "?"
        self.link = Link.OPEN
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
        self._writer: asyncio.Task[None] | None = None
        """The task draining :attr:`outbox`, while it has something to drain (None: sends go out directly)."""
        self._held: list[bytes] | None = None
        """Frames waiting to go out with the answer to the move in flight (:meth:`hold`)."""

    @property
    def open(self) -> bool:
        """Frames still go out to the client."""
        return self.link < Link.GONE

    @property
    def held(self) -> int:
        """Frames waiting for the answer to the move in flight (:meth:`hold`)."""
        return len(self._held) if self._held is not None else 0

    def error_budgets(self) -> tuple[TokenBucket, TokenBucket]:
        if self.budgets is None:
            self.budgets = (TokenBucket(1.0, self.service.config.max_errors),
                            TokenBucket(1.0, self.service.config.burst))
        return self.budgets

    # ---------------------------------------------------------- sending
    def send(self, data: bytes) -> None:
        """Send a frame (at once if nothing is queued); a reader too slow to keep its backlog small is cut loose.

        The backlog is the frames queued here and the bytes queued, buffered by the transport or
        unacknowledged by the client's TCP (the outbox's rule, :mod:`.outbox`): counting frames alone
        missed a client that stopped reading, because its frames left the queue for the kernel's buffers
        at once. Why write directly: a writer task woken for every frame cost a task switch and an ASGI
        send each (about a tenth of the server's CPU per move); the order stays the same because a frame
        goes directly only while nothing waits in the outbox and the writer is not in the middle of a send.
        """
        held = self._held
        if held is not None:  # frames waiting for this one go first, in the same write
            self._held = None
            held.append(data)
        if self.link >= Link.GONE:
            return
        backlog, outbox = self.backlog, self.outbox
        waiting = backlog.at_most() if backlog is not None else 0
        if outbox.full(waiting) and backlog is not None:
            # Measured only when the bound says it may be too much: one system call per send_bytes
            # written to a client that reads, not one per frame.
            waiting = backlog.unacknowledged()
        if outbox.full(waiting):
            log("slow_reader", logging.WARNING, peer=self.peer, race=self.joined and self.joined.race,
                seat=self.seat, frames=len(outbox), bytes=outbox.size + waiting)
            self.abort(p.CloseCode.SLOW_READER)
            if backlog is not None:
                backlog.drop_after(SLOW_READER_GRACE)
            return
        if self._writer is None and backlog is not None:
            try:
                if backlog.send_now(data) if held is None else backlog.send_all_now(held):
                    return
            except OSError:  # the client is gone, as in _write_queued
                self.link = Link.GONE
                return
        for frame in held or (data,):
            outbox.append(frame)
        self._drain()

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

    def release(self) -> None:
        """The frames :meth:`hold` kept, out now: the move in flight ended without a frame of its own."""
        held = self._held
        if held is not None:
            self._held = held[:-1] or None
            self.send(held[-1])

    def send_msg(self, msg: msgspec.Struct) -> None:
        self.send(p.encode(msg))
        self.service.metrics.sent(str(msg.__struct_config__.tag))

    def close_after_queue(self, code: p.CloseCode) -> None:
        """Close once the frames already queued (the error saying why) are out."""
        if self.link is Link.CLOSING:
            return
        if len(self.outbox) >= self.outbox.limit:
            self.abort(code)
            return
        self.link = Link.CLOSING
        self.outbox.end(code)
        self._drain()

    def abort(self, code: p.CloseCode) -> None:
        """Close now, dropping what is queued."""
        self.link = Link.CLOSING
        self.outbox.cut(code)
        self._drain()

    def _drain(self) -> None:
        if self._writer is None:
            self._writer = asyncio.ensure_future(self._write_queued())

    async def _write_queued(self) -> None:
        """Send what is queued, in order, waiting for the transport; done when the outbox is empty."""
        outbox, backlog = self.outbox, self.backlog
        try:
            while (frame := outbox.pop()) is not None:
                await self.ws.send_bytes(frame)
                if backlog is not None:
                    backlog.wrote(len(frame))
            if outbox.ended:
                await self.ws.close(outbox.close_code)
        except (OSError, RuntimeError, WebSocketDisconnect):
            # The client is gone: nothing more can reach it, but the frames it sent before it went
            # are still read and applied (a move sent just before a drop is not lost).
            if self.link is not Link.CLOSING:
                self.link = Link.GONE
            outbox.clear()
        finally:
            self._writer = None

    # ---------------------------------------------------------- reading
    async def run(self) -> None:
        receive: Callable[[], Awaitable[Any]] = self.ws.receive
        if self.backlog is not None:
            # Binary frames straight from the transport's reader (see ops/websocket.py), not through
            # websockets' parser and Starlette's receive; a player's move handled as it is read.
            self.backlog.read_frames(self.take_now)
            receive = self.backlog.receive
        await self.ws.accept()
        self.service.connections += 1
        self.service.metrics.connections_opened += 1
        loop = asyncio.get_running_loop()
        hello_deadline = loop.time() + self.service.config.hello_timeout
        try:
            while not (self.link is Link.CLOSING and self._writer is None):  # until this side has closed
                if self.stage is not Stage.HELLO:
                    # Joined (or seeking): no deadline, so a plain receive (wait_for's task and timer cost a few percent a move).
                    if self.link is Link.OPEN:
                        self.link = Link.PARKED
                    try:
                        message = await receive()
                    finally:
                        if self.link is Link.PARKED:
                            self.link = Link.OPEN
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
            self.link = Link.CLOSING
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
        joined = self.joined
        if joined is None:
            return
        if joined.account is not None:
            self.service.key_holders.remove(joined.account, self)
        await self.service.leave_hub(joined.hub, self)
        session = joined.session
        if session is not None:
            try:
                await self.store.presence(joined.race, session.seat, session.gen, self.member, False, 0, now_ms())
            except StoreError:
                pass  # the race is gone
            except UNAVAILABLE:
                pass  # the lease runs out by itself
            else:
                if joined.hub.meta is not None and joined.hub.meta.status == "lobby":
                    self.service.free_after_lease(joined.race)
        log("left", race=joined.race, seat=self.seat, peer=self.peer)

    async def handle(self, data: bytes) -> None:
        """One frame in; never raises."""
        if self.link is Link.CLOSING:
            return
        msg: Any = None
        try:
            msg = p.decode_client(data)
            admit(self)
            if self.store.down:
                await self.store.check_up()
            await getattr(self, HANDLERS[type(msg)])(msg)
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
        if self.link is not Link.PARKED or self.in_flight is not None or self.store.down or joined is None:
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

    def refuse(self, code: p.ErrorCode | str, message: str | None = None, *, ref: str | None = None,
               seq: int | None = None, close: p.CloseCode | None = None, counts: bool = True) -> None:
        """Answer a refused frame with ``reject`` (moves) or ``error``, log it, and close on abuse."""
        value = code.value if isinstance(code, p.ErrorCode) else code
        message = message or p.explain(value)
        race = self.joined.race if self.joined is not None else None
        self.service.log_refused(value, peer=self.peer, race=race, seat=self.seat, ref=ref, detail=message)
        if ref == "move" and seq is not None:
            self.service.metrics.rejected(value)
            self.send_msg(p.Reject(seq=seq, reason=value, message=message, version=self.version))
        else:
            self.send_msg(p.Error(code=value, message=message, ref=ref))
        if close is None and counts and not self.error_budgets()[0].take():
            close = p.CloseCode.TOO_MANY_ERRORS
        if close is not None:
            log("closing", logging.WARNING, peer=self.peer, race=race, code=int(close), why=close.name)
            self.close_after_queue(close)

    @property
    def version(self) -> int:
        """The race version of this connection's last answer (``reject.version``)."""
        return self.joined.version if self.joined is not None else 0

    def countdown_ms(self) -> int:
        return int(self.service.config.countdown * 1000)

    def client(self) -> str:
        """The address this connection's creations (races, seeks) count against."""
        return self.service.client_of(self.ws.client.host if self.ws.client else None, self.ws.headers)

    # ----------------------------------------------------------- hello
    async def on_hello(self, msg: p.Hello) -> None:
        if self.stage is Stage.JOINED:
            raise Refused(p.ErrorCode.ALREADY_JOINED)
        if self.stage is Stage.SEEKING:
            raise Refused(p.ErrorCode.ALREADY_SEEKING, "this connection waits on a seek: join the race it "
                          "is given on a new connection")
        if msg.protocol != p.PROTOCOL_VERSION:
            raise Refused(p.ErrorCode.VERSION_MISMATCH,
                          f"this server speaks protocol {p.PROTOCOL_VERSION}, the client {msg.protocol}",
                          close=p.CloseCode.VERSION_MISMATCH)
        race = await self.store.resolve(msg.race)
        meta = await self.store.meta(race) if race else None
        if meta is None:
            raise Refused(p.ErrorCode.RACE_NOT_FOUND, f"no race has id or join code {msg.race!r}",
                          close=p.CloseCode.HELLO_REFUSED)
        taken, session = None, None
        if msg.role == "player":
            self.member = self.service.connection_id()
            taken = await take_seat(self.service, msg, meta, self.member)
            session = SeatSession(taken.seat, taken.gen)
            self.seat, self.gen = taken.seat, taken.gen
        hub = await self.service.join_hub(meta.id, self)
        joined = self.joined = Joined(self, meta.id, hub, session, taken.account if taken else None,
                                      taken.key_hash if taken else "")
        self.stage = Stage.JOINED
        if joined.account is not None:
            self.service.key_holders.add(joined.account, joined.key_hash, self)
        replayed = await welcome(hub, self, self.send_msg, msg.last_version, end_soon=self.service.end_soon,
                                 token=taken.token if taken else "", player=joined.reload if session else None)
        log("joined", race=meta.id, seat=self.seat, role=msg.role, peer=self.peer, rejoined=msg.token is not None,
            last_version=msg.last_version, replayed=replayed)

    # ----------------------------------------------------------- other frames
    async def on_seek(self, msg: p.Seek) -> None:
        """Wait in a seek pool on this connection (the lobby's handler: server/players/seeks.py)."""
        if self.stage is Stage.JOINED:
            raise Refused(p.ErrorCode.ALREADY_JOINED, "this connection has joined a race: seek on a new one")
        if self.lobby is None:
            raise Refused(p.ErrorCode.FORBIDDEN, "this server takes no seeks")
        await self.lobby.seek(self, msg, self.client())
        self.stage = Stage.SEEKING

    async def on_seek_cancel(self, msg: p.SeekCancel) -> None:
        if self.stage is not Stage.SEEKING or self.lobby is None:
            raise Refused(p.ErrorCode.NOT_SEEKING)
        if await self.lobby.cancel(self, msg):
            self.stage = Stage.HELLO  # a hello may follow, with another key or none

    on_create = frames.on_create
    on_start = frames.on_start
    on_ready = frames.on_ready
    on_leave = frames.on_leave
    on_move = frames.on_move
    on_give_up = frames.on_give_up
    on_hint = frames.on_hint
    on_ping = frames.on_ping
