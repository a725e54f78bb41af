"""uvicorn's ``websockets-sansio`` protocol with two changes this server needs.

Measured with uvicorn 0.54 (read ``uvicorn/protocols/websockets/websockets_sansio_impl.py``):

- **Oversize frames.** The sans-I/O parser fails the connection with 1009 as
  soon as it reads a too-large length, and uvicorn then closes the socket at
  once, with the rest of the frame unread in the kernel. Linux answers unread
  data with a reset, which can destroy the close frame before the client reads
  it: a client that writes its whole frame before reading saw 1006 (a 64 KiB
  frame already did). Here the server sends the close frame and its FIN, keeps
  reading (the parser discards everything) until the client closes or
  ``LINGER_SECONDS`` pass, so every oversize frame gets 1009.
- **Slow readers.** ``await websocket.send()`` returns as soon as the bytes are
  in the transport, and the kernel's send buffer grows to hundreds of KB, so a
  per-connection queue of frames never fills for a client that stops reading.
  :class:`Backlog` (in the scope's extensions under :data:`BACKLOG`) tells the
  application how many bytes are written but not yet acknowledged by the
  client's TCP: the transport's buffer plus the kernel's (``SIOCOUTQ``).
- **Direct send.** ``await websocket.send()`` goes through Starlette's and
  uvicorn's ASGI send layers (five calls, an await) and websockets' frame
  object for every frame, and the application needs a task to await it.
  :meth:`Backlog.send_now` writes a binary frame to the transport at once
  when nothing stops it (open, not paused by the transport's high-water
  mark): a server frame is a two- to ten-byte header and the payload
  (unmasked, no extension here: per-message deflate is off). Only when it
  cannot does the application fall back to the ASGI send.
"""

from __future__ import annotations

import array
import asyncio
import fcntl
import struct
import termios

from uvicorn.protocols.utils import ClientDisconnected
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.frames import Close
from websockets.protocol import State

BACKLOG = "thieves.backlog"
"""Key of the connection's :class:`Backlog` in ``scope["extensions"]``."""
LINGER_SECONDS = 5.0
"""How long a failed connection keeps reading (and discarding) for its close frame to be read."""


_OPEN = State.OPEN
_short = struct.Struct("!BBH").pack
_long = struct.Struct("!BBQ").pack


def binary_frame(data: bytes) -> bytes:
    """``data`` as one unmasked, final binary WebSocket frame (RFC 6455 section 5.2), as a server sends it."""
    n = len(data)
    if n < 126:
        return bytes((0x82, n)) + data
    if n < 65536:
        return _short(0x82, 126, n) + data
    return _long(0x82, 127, n) + data


class Backlog:
    """Bytes a connection wrote that its client has not taken yet, a way to drop it, and a direct send."""

    __slots__ = ("_protocol", "_transport", "_loop", "_fd", "_measured", "_since")

    def __init__(self, protocol: "Protocol") -> None:
        self._protocol = protocol
        transport = protocol.transport
        self._transport = transport
        self._loop = protocol.loop
        sock = transport.get_extra_info("socket")
        self._fd = sock.fileno() if sock is not None else -1
        self._measured = 0
        """:meth:`unacknowledged` at its last call."""
        self._since = 0
        """Bytes written since."""

    def wrote(self, n: int) -> None:
        """``n`` bytes were handed to the transport."""
        self._since += n

    def send_now(self, data: bytes) -> bool:
        """Write ``data`` as a binary frame to the transport without waiting, if the connection can take it.

        False: not now (the handshake is not complete, or the transport paused writing above its
        high-water mark): the caller sends it through the ASGI ``send``, which waits. Raises
        :class:`ClientDisconnected` (an ``OSError``, as the ASGI send does) when the connection is
        closing or gone, so nothing may be sent on it any more. Counts the bytes (:meth:`wrote`).
        """
        proto = self._protocol
        if proto.disconnected or proto.close_sent or self._transport.is_closing():
            raise ClientDisconnected()
        if not proto.handshake_complete:
            return False
        if proto.conn.state is not _OPEN:  # the client's close arrived, or the keepalive failed
            raise ClientDisconnected()
        if not proto.writable.is_set():
            return False
        self._transport.write(binary_frame(data))
        self._since += len(data)
        return True

    def at_most(self) -> int:
        """An upper bound of :meth:`unacknowledged` without a system call: the last measurement plus
        everything written since (acknowledgements only ever lower it)."""
        return self._measured + self._since

    def unacknowledged(self) -> int:
        """The transport's buffer plus what the kernel sent or holds without the peer's ack (measured)."""
        self._since = 0
        self._measured = self._count()
        return self._measured

    def _count(self) -> int:
        pending = self._transport.get_write_buffer_size()
        if self._fd >= 0:
            out = array.array("i", [0])
            try:
                fcntl.ioctl(self._fd, termios.TIOCOUTQ, out)  # SIOCOUTQ on a TCP socket
            except OSError:
                return pending
            pending += out[0]
        return pending

    def drop_after(self, seconds: float) -> None:
        """Abort the connection later unless it closed by then (its data may never be read)."""
        self._loop.call_later(seconds, self._transport.abort)


class Protocol(WebSocketsSansIOProtocol):
    """``websockets-sansio`` with a lingering close after a protocol failure and a :class:`Backlog`."""

    def handle_connect(self, event: object) -> None:
        super().handle_connect(event)  # type: ignore[arg-type]
        if getattr(self, "scope", None) is not None:  # the app runs from the next loop iteration on
            self.scope["extensions"][BACKLOG] = Backlog(self)  # type: ignore[index,assignment]

    def handle_parser_exception(self) -> None:
        if self.close_sent:  # already lingering: later data went to the discarding parser
            return
        close = self.conn.close_sent or Close(1002, "")
        self.queue.put_nowait({"type": "websocket.disconnect", "code": close.code, "reason": close.reason})
        self.transport.write(b"".join(self.conn.data_to_send()))
        self.close_sent = True
        if self.transport.can_write_eof():
            self.transport.write_eof()
        if self.read_paused:
            self.read_paused = False
            self.transport.resume_reading()
        self.close_timer = self.loop.call_later(LINGER_SECONDS, self.transport.close)

    def data_received(self, data: bytes) -> None:
        if self.close_sent and self.conn.parser_exc is not None:
            self.conn.receive_data(data)  # discarded by the parser; keeps the kernel buffer empty (no reset)
            return
        super().data_received(data)
