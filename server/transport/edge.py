"""The public edge: every connection counted against one cap, deadlines on reading a request, a body limit.

Why below the application (issue #22): an event stream, a keep-alive HTTP
connection or a request whose head is still trickling in holds an open
file as surely as a WebSocket, yet the application sees it late (a stream
once it is routed) or never (a half-sent request). An outside tester held
380 event streams, or 450 half-sent requests, on a 400-descriptor server
and ``/health``, ``POST /races`` and new WebSockets failed until they went.
So the count is taken where uvicorn accepts the socket:

- :class:`EdgeProtocol` is uvicorn's h11 protocol that counts each socket
  from ``connection_made`` to ``connection_lost`` (a WebSocket's end is
  reported by the WebSocket protocol the socket is handed to: its
  :class:`Ticket` travels in the connection's ASGI ``state``). A socket
  beyond ``--max-connections``, or beyond ``--connections-per-address`` for
  its address, is not counted: it takes a place in a small reserve
  (:data:`RESERVE`) where ``/health`` and ``/metrics`` are answered and
  every other request is refused typed once its head is read; when the
  reserve is taken, the oldest place still waiting for its head is given
  up (answered at once), so a new ``/health`` always finds one.
- The same protocol arms a deadline when it waits for a request head
  (``--header-timeout``, from the connection's start or the previous
  response's end) and another while a body is read (``--body-timeout``);
  either ends the connection, with a 408 when no answer was started.
- :class:`AdmissionMiddleware` is the application's side: the typed refusals
  (HTTP 503 ``server_full`` / 429 ``too_many_connections`` with
  ``Retry-After``, or a WebSocket ``error`` frame and close 4007), the
  per-address count of a request that came through a trusted proxy (its
  socket is the proxy's, so it counts against the address the proxy
  forwarded, for as long as the request or stream lasts), and the body
  limit (``--max-body``: 413 from ``Content-Length`` before any byte of the
  body is read, or as soon as a chunked body passes it).

Counting the peer at the socket means a direct client's keep-alive
connections and half-read requests count against its address as well.
"""

from __future__ import annotations

import collections
import logging
from http import HTTPStatus
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, MutableMapping

import h11
from starlette.datastructures import Headers
from starlette.requests import ClientDisconnect
from starlette.responses import Response
from uvicorn.protocols.http.h11_impl import H11Protocol

from shared import protocol as p

from ..answers import SECURITY_HEADERS, error_response
from ..config import EdgeSettings
from ..ops.limits import Networks, client_address, is_trusted, max_connections, trusted_networks
from ..ops.log import SummedLog, log

RESERVE = 16
"""Sockets beyond the caps kept open until their request head is read: ``/health`` and ``/metrics``
are answered on them, anything else refused typed (part of ``limits.HTTP_SPARE``)."""
RESERVED_PATHS = frozenset({"/health", "/metrics"})
RETRY_AFTER = 5
"""Seconds a refused client is told to wait (``Retry-After``)."""
HEAD_BYTES = 16_384
"""Largest request head (request line and headers) read: 431 ``bad_request`` beyond it."""
LINGER_SECONDS = 2.0
"""How long a connection ended by the edge keeps the client's last bytes coming after its answer."""
LINGER_BYTES = 1 << 20
"""Bytes read (and dropped) while lingering; then reading pauses until the close."""
LINGERING = 32
"""Connections lingering at once (part of ``limits.HTTP_SPARE``); beyond, the oldest is closed at once."""
BAD_REQUEST_LOG_SECONDS = 60.0
"""Requests h11 cannot read are logged at most once this often (:class:`SummedLog`)."""
UVICORN_BAD_REQUEST = "Invalid HTTP request received."
"""uvicorn's warning of each such request (h11_impl), which the edge's own lines replace."""
UVICORN_UPGRADE = "Unsupported upgrade request."
"""uvicorn's warning of each request asking to upgrade to anything but a WebSocket (``Upgrade: h2c``):
answered as a plain request, with nothing for an operator to do, and as many as a client sends."""
TICKET = "thieves.edge"
"""Key of the connection's :class:`Ticket` in the ASGI ``scope["state"]``."""

_REFUSAL_STATUS = {p.ErrorCode.SERVER_FULL: 503, p.ErrorCode.TOO_MANY_CONNECTIONS: 429}
_HEAD, _BODY = "header_timeout", "body_timeout"
"""The two deadlines, named as /metrics counts them."""

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


@dataclass(frozen=True)
class EdgeLimits:
    """The edge's settings (``--max-connections`` resolved)."""

    max_connections: int
    per_address: int
    """0: no per-address cap."""
    header_timeout: float
    body_timeout: float
    max_body: int
    trusted: Networks
    reserve: int = RESERVE

    @classmethod
    def of(cls, edge: EdgeSettings, reserved: int) -> "EdgeLimits":
        """``edge``'s limits, ``--max-connections`` resolved with ``reserved`` descriptors kept spare."""
        return cls(max_connections(edge, reserved), edge.connections_per_address, edge.header_timeout,
                   edge.body_timeout, edge.max_body, trusted_networks(edge))


class Ticket:
    """One socket's place: counted (``refusal`` None) or held in the reserve to be refused typed."""

    __slots__ = ("edge", "address", "refusal", "open", "protocol", "reserved")

    def __init__(self, edge: "Edge", address: str | None, refusal: p.ErrorCode | None,
                 protocol: "EdgeProtocol | None") -> None:
        self.edge = edge
        self.address = address
        """What the socket counts against; None for a trusted proxy's socket (its requests count instead)."""
        self.refusal = refusal
        self.open = True
        self.protocol = protocol
        """The reader of the socket's requests, until a WebSocket takes the socket over (then None: the
        WebSocket's scope carries this ticket for its whole life, and must not keep the finished HTTP reader,
        its parser and its buffers alive with it)."""
        self.reserved = False
        """Refused, and holding a reserve place (not answered at once)."""

    def release(self) -> None:
        """The socket is gone (or answered for good): give its place back, once."""
        if self.open:
            self.open = False
            self.edge.release(self)


class _NoWarningPerBadRequest(logging.Filter):
    """Drops uvicorn's warnings of a client's single request: of each request h11 cannot read (the edge
    logs them summed up instead: :meth:`Edge.bad_request`) and of each unsupported upgrade. One client
    sending them in a loop would write a log line each."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.msg not in (UVICORN_BAD_REQUEST, UVICORN_UPGRADE)


_BAD_REQUEST_FILTER = _NoWarningPerBadRequest()


class Edge:
    """One server's connections: the counts, the reserve and the refusals by kind."""

    def __init__(self, limits: EdgeLimits) -> None:
        self.limits = limits
        self.held = 0
        """Sockets counted against ``--max-connections``."""
        self.addresses: collections.Counter[str] = collections.Counter()
        self.reserved = 0
        self.waiting: dict[Ticket, None] = {}
        """Reserve places whose request head has not come yet, oldest first (the ones given up first)."""
        self.lingering: dict[EdgeProtocol, None] = {}
        """Connections closing softly (their descriptors are not counted elsewhere), oldest first."""
        self.refused: dict[str, int] = collections.defaultdict(int)
        """kind -> refusals: ``server_full``, ``too_many_connections``, ``header_timeout``, ``body_timeout``,
        ``body_too_large``."""
        self._full = False
        self._log_bad_request = SummedLog("bad_requests", window=lambda: BAD_REQUEST_LOG_SECONDS)
        uvicorn_errors = logging.getLogger("uvicorn.error")
        if _BAD_REQUEST_FILTER not in uvicorn_errors.filters:
            uvicorn_errors.addFilter(_BAD_REQUEST_FILTER)
        self.protocol: type[EdgeProtocol] = type("BoundEdgeProtocol", (EdgeProtocol,), {"edge": self})
        """The protocol class for ``uvicorn.Config(http=...)``, bound to this edge."""

    def trusts(self, peer: str | None) -> bool:
        return is_trusted(peer, self.limits.trusted)

    def admit(self, protocol: "EdgeProtocol", peer: str | None) -> Ticket:
        """A new socket's ticket: counted, or refused (then :meth:`reserve` it or answer at once)."""
        address = None if self.trusts(peer) else client_address(peer, {}, [])
        refusal = self._check(address)
        ticket = Ticket(self, address, refusal, protocol)
        if refusal is None:
            self.held += 1
            if address is not None:
                self.addresses[address] += 1
        return ticket

    def _check(self, address: str | None) -> p.ErrorCode | None:
        per = self.limits.per_address
        if address is not None and per and self.addresses[address] >= per:
            return p.ErrorCode.TOO_MANY_CONNECTIONS
        if self.held >= self.limits.max_connections:
            if not self._full:
                self._full = True
                log("connections_full", logging.WARNING, max_connections=self.limits.max_connections,
                    hint="raise --max-connections and the open-file limit, or add a server process")
            return p.ErrorCode.SERVER_FULL
        self._full = False
        return None

    def bad_request(self, peer: str | None) -> None:
        """Count a request h11 could not read, and log it summed up (:class:`SummedLog`)."""
        self.refused[p.ErrorCode.BAD_REQUEST.value] += 1
        self._log_bad_request(last_from=peer, hint="requests that are not valid HTTP/1.1, answered 400 or 431 "
                                                   "bad_request")

    def reserve(self, ticket: Ticket) -> bool:
        """A reserve place for a refused socket until its head is read; False: none (answer at once).

        With every place taken, the oldest still waiting for its head is answered and closed, so a
        slow or silent client cannot keep ``/health`` out."""
        if self.reserved >= self.limits.reserve:
            if not self.waiting:
                return False
            oldest = next(iter(self.waiting)).protocol
            assert oldest is not None  # (a waiting ticket's head is not read yet: no WebSocket took it)
            oldest.refuse_now()
        self.reserved += 1
        ticket.reserved = True
        self.waiting[ticket] = None
        return True

    def linger(self, protocol: "EdgeProtocol") -> None:
        """Note a connection closing softly; past :data:`LINGERING` the oldest closes now (a flood of
        refused clients that never close must not use up the descriptors that way either)."""
        self.lingering[protocol] = None
        if len(self.lingering) > LINGERING:
            oldest = next(iter(self.lingering))
            del self.lingering[oldest]
            oldest.transport.close()

    def head_read(self, ticket: Ticket) -> None:
        self.waiting.pop(ticket, None)

    def release(self, ticket: Ticket) -> None:
        if ticket.refusal is None:
            self.held -= 1
            if ticket.address is not None:
                self.release_address(ticket.address)
        elif ticket.reserved:  # (a socket answered at once took no place)
            self.reserved -= 1
            self.waiting.pop(ticket, None)

    def hold(self, address: str) -> bool:
        """Count a proxied request or stream against the client address its proxy forwarded."""
        per = self.limits.per_address
        if per and self.addresses[address] >= per:
            return False
        self.addresses[address] += 1
        return True

    def release_address(self, address: str) -> None:
        left = self.addresses[address] - 1
        if left > 0:
            self.addresses[address] = left
        else:
            del self.addresses[address]


def edge_of(scope: Scope) -> Edge | None:
    """The edge that counts this request's connection (None: served without :class:`EdgeProtocol`)."""
    ticket = scope.get("state", {}).get(TICKET)
    return ticket.edge if ticket is not None else None


def answer_bytes(status: int, code: p.ErrorCode, message: str | None = None) -> bytes:
    """A whole HTTP/1.1 error answer that closes the connection, written to the socket without h11 or
    the application (a refusal before a request head, a deadline): the same JSON as ``error_response``,
    with the headers every answer carries (the application's middleware never sees this one)."""
    response = _answer(status, code, message)
    head = b"".join(name + b": " + value + b"\r\n" for name, value in [*response.raw_headers, *SECURITY_HEADERS])
    return b"HTTP/1.1 %d %s\r\n%s\r\n%s" % (status, HTTPStatus(status).phrase.encode(), head, bytes(response.body))


def _answer(status: int, code: p.ErrorCode, message: str | None = None) -> Response:
    response = error_response(code, status, message)
    response.headers["connection"] = "close"
    if status in (429, 503):
        response.headers["retry-after"] = str(RETRY_AFTER)
    return response


def _refusal_message(edge: Edge, code: p.ErrorCode) -> str:
    if code is p.ErrorCode.TOO_MANY_CONNECTIONS:
        return (f"this address holds {edge.limits.per_address} connections to this server process, the most one "
                f"address may: close one or retry in {RETRY_AFTER} s")
    return (f"this server process holds {edge.limits.max_connections} connections, its most: retry in "
            f"{RETRY_AFTER} s or use another server")


class EdgeProtocol(H11Protocol):
    """uvicorn's h11 protocol, counted (:class:`Edge`) and with deadlines on reading each request."""

    edge: Edge

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        self._timer: Any = None
        self._phase: str | None = None
        self._lingering = -1
        """Bytes dropped since the connection started closing (-1: not closing)."""
        self._upgraded = False
        self._heard = False
        """Bytes came since the deadline was armed (a silent connection is closed without a 408: it may be
        an idle keep-alive one whose client is about to send, and would take the 408 for its answer)."""
        self.ticket = self.edge.admit(self, self.client[0] if self.client else None)
        # A copy per connection: the requests' scopes (and a WebSocket's) carry the ticket.
        self.app_state = {**self.app_state, TICKET: self.ticket}
        if self.ticket.refusal is not None and not self.edge.reserve(self.ticket):
            self.refuse_now()
            return
        self._watch()

    def data_received(self, data: bytes) -> None:
        if self._lingering >= 0:
            self._lingering += len(data)
            if self._lingering > LINGER_BYTES:
                self.transport.pause_reading()
            return
        self._heard = True
        super().data_received(data)
        self._watch()

    def on_response_complete(self) -> None:
        if self.conn.their_state is h11.SEND_BODY:
            # Answered before the body was read (413, 415, a refusal): the connection ends rather than
            # reading the rest to throw it away.
            self.server_state.total_requests += 1
            self._close_softly()
            return
        super().on_response_complete()
        if self.ticket.refusal is not None:  # a reserve place answers one request only
            self.transport.close()
        self._watch()

    def handle_websocket_upgrade(self, event: h11.Request) -> None:
        """The socket goes to the WebSocket protocol (which gives the ticket back when it closes): no
        deadline of this reader's applies any more, and a reserve place is no longer given up."""
        self.edge.head_read(self.ticket)
        self._stop()
        self._upgraded = True
        super().handle_websocket_upgrade(event)
        self.ticket.protocol = None

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop()
        self.ticket.release()
        if self._lingering >= 0:
            self.edge.lingering.pop(self, None)
        super().connection_lost(exc)

    def send_400_response(self, msg: str) -> None:
        """A request h11 cannot read: 400 ``bad_request`` for a malformed request line or header (a control
        character such as NUL in a header, a line without a colon), 431 for a head still unfinished past
        :data:`HEAD_BYTES` (h11's limit); in the JSON of every other error, with every answer's headers
        (uvicorn's own is a plain-text 400 with neither), and the connection closes."""
        self._stop()
        pending, _closed = self.conn.trailing_data
        if len(pending) > HEAD_BYTES:
            status, message = 431, f"the request head is over {HEAD_BYTES // 1024} KiB, the most this server reads"
        else:
            status, message = 400, ("the request is not valid HTTP/1.1: a malformed request line or header (such "
                                    "as a control character like NUL in a header, or a header line without a colon)")
        self.edge.bad_request(self.client[0] if self.client else None)
        self.transport.write(answer_bytes(status, p.ErrorCode.BAD_REQUEST, message))
        self._close_softly()

    def refuse_now(self) -> None:
        """Answer a refused socket without waiting for its request, and close it."""
        code = self.ticket.refusal
        assert code is not None
        self.edge.refused[code.value] += 1
        self._stop()
        self.ticket.release()
        self.transport.write(answer_bytes(_REFUSAL_STATUS[code], code, _refusal_message(self.edge, code)))
        self._close_softly()

    def _close_softly(self) -> None:
        """Close after an answer without a reset: Linux answers unread data at close with one, which can
        destroy the answer before the client reads it. So: a FIN after the answer, then what the client
        still sends is dropped (up to ``LINGER_BYTES``) until it closes or ``LINGER_SECONDS`` pass."""
        self._stop()
        if self._lingering >= 0 or self.transport.is_closing():
            return
        self._lingering = 0
        self.edge.linger(self)
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self.loop.call_later(LINGER_SECONDS, self.transport.close)

    def _watch(self) -> None:
        """Arm the deadline of the phase the request is in: its head, its body, or none (answering)."""
        state = self.conn.their_state
        phase = _HEAD if state is h11.IDLE else _BODY if state is h11.SEND_BODY else None
        if phase is self._phase or self._upgraded or self.transport.is_closing():
            return
        if self._phase is _HEAD:
            self.edge.head_read(self.ticket)
        self._stop()
        self._phase = phase
        self._heard = False
        if phase is not None:
            limits = self.edge.limits
            seconds = limits.header_timeout if phase is _HEAD else limits.body_timeout
            self._timer = self.loop.call_later(seconds, self._expired, phase)

    def _stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._phase = None

    def _expired(self, phase: str) -> None:
        """A deadline passed: a 408 if the client sent something and nothing was answered yet, and the
        connection closes."""
        self._timer = None
        if self.transport.is_closing():
            return
        self.edge.refused[phase] += 1
        cycle = self.cycle if phase is _BODY else None
        if (phase is _BODY or self._heard) and (cycle is None or not cycle.response_started):
            what = "request head" if phase is _HEAD else "request body"
            seconds = self.edge.limits.header_timeout if phase is _HEAD else self.edge.limits.body_timeout
            self.transport.write(answer_bytes(408, p.ErrorCode.REQUEST_TIMEOUT,
                                              f"the {what} did not arrive within {seconds:g} s"))
        if cycle is not None:  # the application's reads end (a disconnect) and its answer goes nowhere
            cycle.disconnected = True
            cycle.message_event.set()
        self._close_softly()


class AdmissionMiddleware:
    """The application's side of the edge (see the module docstring): typed refusals, a proxied client's
    per-address count, the body limit. A request served without :class:`EdgeProtocol` passes as is."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        ticket: Ticket | None = scope.get("state", {}).get(TICKET) if kind in ("http", "websocket") else None
        if ticket is None:
            await self.app(scope, receive, send)
            return
        edge = ticket.edge
        refusal = ticket.refusal
        if refusal is not None and kind == "http" and scope["path"] in RESERVED_PATHS:
            refusal = None  # what the reserve is for
        forwarded = None
        if refusal is None and ticket.address is None:  # a trusted proxy's socket: count the client it names
            forwarded = client_address(scope["client"][0] if scope.get("client") else None, Headers(scope=scope),
                                       edge.limits.trusted)
            if not edge.hold(forwarded):
                refusal, forwarded = p.ErrorCode.TOO_MANY_CONNECTIONS, None
        if refusal is not None:
            edge.refused[refusal.value] += 1
            await _refuse(edge, refusal, scope, receive, send)
            return
        try:
            if kind == "http" and _has_body(scope):
                await self._limited(edge, scope, receive, send)
            else:
                await self.app(scope, receive, send)
        except ClientDisconnect:
            pass  # the client left, or a deadline ended the connection: nobody to answer
        finally:
            if forwarded is not None:
                edge.release_address(forwarded)

    async def _limited(self, edge: Edge, scope: Scope, receive: Receive, send: Send) -> None:
        """The application, given at most ``--max-body`` bytes of body (413 beyond)."""
        limit = edge.limits.max_body
        length = Headers(scope=scope).get("content-length", "")
        if length.isdigit() and int(length) > limit:
            await _too_large(edge, scope, receive, send)
            return
        taken = 0
        over = started = False

        async def limited() -> Message:
            nonlocal taken, over
            if over:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                taken += len(message.get("body", b""))
                if taken > limit:  # the application sees a client gone (ClientDisconnect) and stops reading
                    over = True
                    return {"type": "http.disconnect"}
            return message

        async def watched(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, limited, watched)
        except ClientDisconnect:
            if not over:
                raise
        if over and not started:
            await _too_large(edge, scope, receive, send)


def _has_body(scope: Scope) -> bool:
    for name, value in scope["headers"]:
        if (name == b"content-length" and value != b"0") or name == b"transfer-encoding":
            return True
    return False


async def _too_large(edge: Edge, scope: Scope, receive: Receive, send: Send) -> None:
    """413; the connection then closes softly, the rest of the body unread (``EdgeProtocol.on_response_complete``:
    no ``Connection: close``, with which uvicorn would close at once, with a reset)."""
    edge.refused["body_too_large"] += 1
    response = error_response(p.ErrorCode.BODY_TOO_LARGE, 413, f"a request body is at most {edge.limits.max_body} bytes")
    await response(scope, receive, send)


async def _refuse(edge: Edge, code: p.ErrorCode, scope: Scope, receive: Receive, send: Send) -> None:
    """The typed refusal: over HTTP an error answer with ``Retry-After``; over a WebSocket the handshake
    is accepted (a client learns little from an HTTP status at the upgrade), an ``error`` frame names
    the cause and close 4007 follows."""
    message = _refusal_message(edge, code)
    if scope["type"] == "http":
        await _answer(_REFUSAL_STATUS[code], code, message)(scope, receive, send)
        return
    try:
        if (await receive())["type"] != "websocket.connect":
            return
        await send({"type": "websocket.accept"})
        await send({"type": "websocket.send", "bytes": p.encode(p.error(code, message))})
        await send({"type": "websocket.close", "code": int(p.CloseCode.SERVER_FULL)})
    except (OSError, RuntimeError):
        pass  # the client left first


__all__ = ["Edge", "EdgeLimits", "AdmissionMiddleware", "EdgeProtocol", "Ticket", "TICKET", "edge_of"]
