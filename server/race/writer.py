"""The sending half of a race connection: frames out in order, straight to the transport while nothing waits.

Why a class of its own (the base of :class:`~server.race.connection.Connection`): how a frame reaches a
client (directly, or through the bounded :class:`~server.race.outbox.Outbox` and a writer task once the
transport pushes back; a reader too slow for it cut loose) is one concern, and the hot one: every ack
and every progress frame passes here. A base class rather than an object of its own, so that a frame
costs no extra call and an idle connection no extra object.
"""

from __future__ import annotations

import asyncio
import enum
import logging

import msgspec
from starlette.websockets import WebSocket, WebSocketDisconnect

from shared import protocol as p

from ..ops.log import log
from ..ops.backlog import BACKLOG, Backlog
from .outbox import Outbox
from .service import Service

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


OPEN, PARKED, GONE, CLOSING = Link
"""The members as module constants: ``Link.GONE`` is an attribute lookup through the enum's metaclass,
some 200 ns, and the hot path (every frame sent, every frame read) asks several times."""


class SocketWriter:
    """A WebSocket's outgoing frames (see the module's docstring)."""

    __slots__ = ("ws", "service", "outbox", "backlog", "peer", "link", "_writer", "_held")

    seat: int | None

    @property
    def race(self) -> str | None:
        """The race this socket serves (for the log)."""
        return None

    def __init__(self, ws: WebSocket, service: Service) -> None:
        cfg = service.config.edge
        self.ws = ws
        self.service = service
        self.outbox = Outbox(cfg.send_queue, cfg.send_bytes)
        self.backlog: Backlog | None = ws.scope.get("extensions", {}).get(BACKLOG)
        """What the transport and kernel hold for the client (None under another ASGI server: frames only)."""
        self.peer = f"{ws.client.host}:{ws.client.port}" if ws.client else "?"
        self.link = OPEN
        self._writer: asyncio.Task[None] | None = None
        """The task draining :attr:`outbox`, while it has something to drain (None: sends go out directly)."""
        self._held: list[bytes] | None = None
        """Frames waiting to go out with the answer to the move in flight (``Connection.hold``)."""

    @property
    def open(self) -> bool:
        """Frames still go out to the client."""
        return self.link < GONE

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
        if self.link >= GONE:
            return
        backlog, outbox = self.backlog, self.outbox
        waiting = backlog.at_most() if backlog is not None else 0
        if outbox.full(waiting) and backlog is not None:
            # Measured only when the bound says it may be too much: one system call per send_bytes
            # written to a client that reads, not one per frame.
            waiting = backlog.unacknowledged()
        if outbox.full(waiting):
            log("slow_reader", logging.WARNING, peer=self.peer, race=self.race, seat=self.seat,
                frames=len(outbox), bytes=outbox.size + waiting)
            self.abort(p.CloseCode.SLOW_READER)
            if backlog is not None:
                backlog.drop_after(SLOW_READER_GRACE)
            return
        if self._writer is None and backlog is not None:
            try:
                if backlog.send_now(data) if held is None else backlog.send_all_now(held):
                    return
            except OSError:  # the client is gone, as in _write_queued
                self.link = GONE
                return
        for frame in held or (data,):
            outbox.append(frame)
        self._drain()

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
        if self.link is CLOSING:
            return
        if len(self.outbox) >= self.outbox.limit:
            self.abort(code)
            return
        self.link = CLOSING
        self.outbox.end(code)
        self._drain()

    def abort(self, code: p.CloseCode) -> None:
        """Close now, dropping what is queued."""
        self.link = CLOSING
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
            if self.link is not CLOSING:
                self.link = GONE
            outbox.clear()
        finally:
            self._writer = None
