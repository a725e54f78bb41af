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
- **Frames read here.** For an application that asks (:meth:`Backlog.read_frames`, the race
  connection), a final masked binary frame is cut out of the bytes received and its unmasked payload
  queued as ``bytes``, without websockets' parser, uvicorn's event dict and its pause and resume of
  reading after every message; every other frame goes whole to websockets (``Protocol._walk``).
- **Smaller connections.** uvicorn gives each connection an ``asyncio.Queue``
  of received events and an ``asyncio.Event`` for "writable": five deques
  of about 760 bytes each, most of an idle spectator's memory after the
  coroutine frames. :class:`_Inbox` and :class:`_Writable` do the same for the
  one reader and the one writer a connection has, in a few dozen bytes; the
  handshake's request and response (their headers) are dropped once the
  handshake is answered (the scope keeps the headers the application reads).
"""

from __future__ import annotations

import array
import asyncio
import fcntl
import struct
import termios
from typing import Any, Awaitable, Callable

from uvicorn.protocols.utils import ClientDisconnected
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.frames import Close

try:
    from websockets.speedups import apply_mask
except ImportError:  # websockets without its C extension
    from websockets.utils import apply_mask
from websockets.protocol import State

from ..ops.backlog import BACKLOG
from .edge import TICKET
LINGER_SECONDS = 5.0
"""How long a failed connection keeps reading (and discarding) for its close frame to be read."""
REQUEST_BYTES = 65536
"""A handshake request longer than this is not tracked: its connection's frames all go through websockets."""
RAW_QUEUED = 16
"""Messages queued for an application reading raw frames before reading from the client pauses (uvicorn
pauses after each message: two system calls a frame)."""


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


class _LastFrame:
    """The frame of the last payload framed: a fan-out hands the same bytes object to every connection,
    so it is framed once, not once per connection (a progress frame to 1,000 spectators)."""

    __slots__ = ("data", "frame")

    def __init__(self) -> None:
        self.data: bytes | None = None
        self.frame = b""

    def of(self, data: bytes) -> bytes:
        if data is not self.data:
            self.frame = binary_frame(data)
            self.data = data
        return self.frame


_last = _LastFrame()


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
        if not self._can_send():
            return False
        self._transport.write(_last.of(data))
        self._since += len(data)
        return True

    def send_all_now(self, frames: list[bytes]) -> bool:
        """:meth:`send_now` for several frames, in order, in one write (one system call, one wake-up of
        the client for all of them)."""
        if not self._can_send():
            return False
        self._transport.write(b"".join([binary_frame(data) for data in frames]))
        self._since += sum(len(data) for data in frames)
        return True

    def _can_send(self) -> bool:
        proto = self._protocol
        if proto.disconnected or proto.close_sent or self._transport.is_closing():
            raise ClientDisconnected()
        if not proto.handshake_complete:
            return False
        if proto.conn.state is not _OPEN:  # the client's close arrived, or the keepalive failed
            raise ClientDisconnected()
        return proto.writable.is_set()

    def read_frames(self, take: Callable[[bytes], bool] | None = None) -> None:
        """Have binary messages arrive as ``bytes`` from :meth:`receive` (ASGI event dicts still for the
        rest: text, a fragmented message, the disconnect). Call before accepting the connection.

        ``take``, if given, is offered each binary message as it is read while nothing waits in the
        queue before it: True means it handled the message there and then (it must not raise), False
        that it goes to the queue as usual."""
        self._protocol.raw = True
        self._protocol.take = take

    def receive(self) -> Awaitable[Any]:
        """The next received item: a binary message's ``bytes`` (after :meth:`read_frames`) or an ASGI event."""
        return self._protocol.receive()

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


class _Inbox:
    """What uvicorn needs of its receive queue (``put_nowait``, ``get``, ``empty``), for one reader.

    A list read from a moving head (a burst of frames read at once is taken in order without
    shifting the list), one future while the reader waits.
    """

    __slots__ = ("_items", "_head", "_waiter", "_loop")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._items: list[Any] = []
        self._head = 0
        self._waiter: asyncio.Future[None] | None = None
        self._loop = loop

    def put_nowait(self, item: Any) -> None:
        self._items.append(item)
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def empty(self) -> bool:
        return self._head >= len(self._items)

    def qsize(self) -> int:
        return len(self._items) - self._head

    async def get(self) -> Any:
        while self._head >= len(self._items):
            waiter = self._waiter
            if waiter is None or waiter.done():
                waiter = self._waiter = self._loop.create_future()
            await waiter
        item = self._items[self._head]
        self._head += 1
        if self._head >= len(self._items):
            self._items.clear()
            self._head = 0
        elif self._head > 64 and self._head * 2 > len(self._items):
            del self._items[:self._head]
            self._head = 0
        return item


class _Writable:
    """``asyncio.Event``'s ``set``, ``clear``, ``is_set`` and ``wait``, with its waiters made only when waited for."""

    __slots__ = ("_flag", "_waiters", "_loop")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._flag = True
        self._waiters: list[asyncio.Future[None]] | None = None
        self._loop = loop

    def is_set(self) -> bool:
        return self._flag

    def set(self) -> None:
        self._flag = True
        waiters, self._waiters = self._waiters, None
        for waiter in waiters or ():
            if not waiter.done():
                waiter.set_result(None)

    def clear(self) -> None:
        self._flag = False

    async def wait(self) -> bool:
        if self._flag:
            return True
        waiter = self._loop.create_future()
        if self._waiters is None:
            self._waiters = []
        self._waiters.append(waiter)
        await waiter
        return True


class Protocol(WebSocketsSansIOProtocol):
    """``websockets-sansio`` with a lingering close after a protocol failure, a :class:`Backlog` and a
    direct send, in less memory."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.queue = _Inbox(self.loop)  # type: ignore[assignment]
        was_set = self.writable.is_set()
        self.writable = _Writable(self.loop)  # type: ignore[assignment]
        if not was_set:
            self.writable.clear()
        self._head: bytearray | None = bytearray()
        """The handshake request's bytes until websockets has parsed it (then None). uvicorn's HTTP reader
        hands the request over alone, so frames always start after it; checked all the same, since
        a frame read with the request would leave this reader not knowing where the next one starts."""
        self._clean = False
        """The request ended exactly where the data received so far ends: the client's frames start
        at the next byte received."""
        self.raw = False
        """The application reads whole binary messages as ``bytes`` items (:meth:`Backlog.read_frames`)."""
        self.take: Callable[[bytes], bool] | None = None
        """Offered each binary message first while the queue is empty (:meth:`Backlog.read_frames`)."""
        self._walking = False
        """Frame boundaries are known here: simple frames are taken without websockets' parser."""
        self._carry = b""
        """While walking: the start of a frame not yet received whole."""

    @property
    def walking(self) -> bool:
        """Whether this connection reads its frames itself (frame boundaries known here), not through
        websockets' parser: what a test of the fast path looks at."""
        return self._walking

    async def send(self, message: Any) -> None:
        await super().send(message)
        if message["type"] == "websocket.accept" and self.handshake_complete:
            # Answered: uvicorn reads neither again (the scope has the headers).
            self.request = None  # type: ignore[assignment]
            self.response = None  # type: ignore[assignment]
            # No await since the 101 was written: nothing the client sent after it has been read yet.
            self._walking = self.raw and self._clean and not self.conn.extensions

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        ticket = self.app_state.get(TICKET)  # counted by the HTTP protocol it was upgraded from (server/transport/edge.py)
        if ticket is not None:
            ticket.release()

    def handle_connect(self, event: object) -> None:
        super().handle_connect(event)  # type: ignore[arg-type]
        if getattr(self, "scope", None) is not None:  # the app runs from the next loop iteration on
            self.scope["extensions"][BACKLOG] = Backlog(self)  # type: ignore[assignment]

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
        if self._walking:
            self._walk(data)
            return
        if self.close_sent and self.conn.parser_exc is not None:
            self.conn.receive_data(data)  # discarded by the parser; keeps the kernel buffer empty (no reset)
            return
        head = self._head
        if head is None:
            self._clean = False  # data between the request and the answer: websockets parses everything
        elif len(head) + len(data) <= REQUEST_BYTES:
            head += data
        else:
            head = self._head = None
        super().data_received(data)
        if head is not None and self.handshake_initiated:
            end = head.find(b"\r\n\r\n")
            self._clean = end >= 0 and end + 4 == len(head)
            self._head = None

    def _walk(self, data: bytes) -> None:
        """Take the complete frames in ``data`` (after what was carried): a final, masked binary frame
        goes to the application's queue as its payload; every other frame, whole, to websockets.

        Why: websockets' parser (generators, a Frame object, events) and uvicorn's event dict and read
        pause for every message cost about as much as the move's own checks. Since the handshake ended
        exactly at a chunk's end, this reader knows where each frame starts, and websockets' parser is
        handed whole frames only, so it is always at a frame boundary too: pings, pongs, closes, text,
        fragments and every protocol error are still websockets' own. A frame larger than the limit ends
        the walk: websockets reads it from its first byte and fails the connection with 1009.
        """
        buf = self._carry + data if self._carry else data
        n, pos = len(buf), 0
        view = memoryview(buf)
        conn, limit, take = self.conn, self.config.ws_max_size, self.take
        queue: Any = self.queue  # an _Inbox: takes bytes items too
        while n - pos >= 2:
            first, second = buf[pos], buf[pos + 1]
            length, at = second & 0x7F, pos + 2
            if length == 126:
                if n - at < 2:
                    break
                length, at = int.from_bytes(buf[at:at + 2], "big"), at + 2
            elif length == 127:
                if n - at < 8:
                    break
                length, at = int.from_bytes(buf[at:at + 8], "big"), at + 8
            if length > limit:
                self._walking, self._carry = False, b""
                self.data_received(bytes(view[pos:]))
                return
            masked = second & 0x80
            end = at + (4 if masked else 0) + length
            if end > n:
                break
            if (first == 0x82 and masked and conn.state is _OPEN and not self.close_sent
                    and not conn.expect_continuation_frame):
                payload = apply_mask(view[at + 4:end], buf[at:at + 4])
                if take is None or not queue.empty() or not take(payload):
                    queue.put_nowait(payload)
            else:
                conn.receive_data(bytes(view[pos:end]))
                if conn.parser_exc is not None:
                    self._walking, self._carry = False, b""
                    self.handle_parser_exception()
                    return
                self.handle_events()
            pos = end
        self._carry = bytes(view[pos:]) if pos < n else b""
        if not self.read_paused and queue.qsize() >= RAW_QUEUED:
            self.read_paused = True
            self.transport.pause_reading()
