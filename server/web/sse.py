"""A race's live table as Server-Sent Events: a browser spectator, resumable with ``Last-Event-ID``.

Why a hub listener: an SSE stream is one more spectator of the race's hub
(:class:`server.race.hub.Listener`), so it gets exactly the frames a
WebSocket spectator gets: the same coalescing (at most ``progress_hz``
progress events a second), the same per-connection cursor (a resumed
stream is sent what differs from the table it had), and the same secrecy
(a spectator's ``countdown`` has no board; the deal comes with
``finished``). Each frame the hub hands over is decoded once per process
(the hub gives every listener the same bytes object), not once per stream.

The event ``id`` is the version of the progress table the browser holds:
only ``welcome`` and ``progress`` carry one, so the browser's
``Last-Event-ID`` is always a valid ``last_version`` (docs/protocol.md,
"Live race events over SSE").
"""

from __future__ import annotations

import logging
from typing import AsyncIterator

import msgspec
from sse_starlette.event import ServerSentEvent

from shared import protocol as p

from ..ops.log import log
from ..race.hub import RaceHub
from ..race.outbox import Outbox
from ..race.service import Service
from ..race.welcome import welcome

RETRY_MS = 1000
"""How long a browser waits before reconnecting a dropped stream (sent with ``welcome``)."""

_json = msgspec.json.Encoder()


class RaceGone(Exception):
    """The race asked for does not exist (or no longer does)."""


def sse_event(msg: p.Welcome | p.Countdown | p.Progress | p.Finished | p.Error, retry: int | None = None) -> bytes:
    """One wire message as an SSE event: named by its ``type``, its JSON as data, the table version as id.

    The wire's ``error`` is named ``race_error``: an EventSource's ``error`` is its own connection error.

    ``finished`` also carries ``deal_text`` (the deal as a string: JavaScript's
    ``JSON.parse`` rounds numbers above 2^53, and random deals go up to 2^63) and ``secret_text`` (why
    the deal and games are missing, while they are secret; else null).
    """
    kind = "race_error" if isinstance(msg, p.Error) else msg.__struct_config__.tag
    if isinstance(msg, p.Finished):
        data = _json.encode({**msgspec.to_builtins(msg), "deal_text": deal_text(msg.results),
                             "secret_text": msg.results.secret_words()}).decode()
    else:
        data = _json.encode(msg).decode()
    event_id = str(msg.version) if isinstance(msg, (p.Welcome, p.Progress)) else None
    return encoded_event(data.encode(), str(kind), event_id, retry)


def encoded_event(data: bytes, event: str, event_id: str | None = None, retry: int | None = None) -> bytes:
    """An SSE event's bytes, exactly as sse-starlette's ``ServerSentEvent.encode`` writes them.

    Why not always through it: it splits the data into lines with a regular expression, character by
    character, and copies it through a ``StringIO``; a JSON frame (one line: JSON escapes every line
    break inside a string) of a live event of a thousand entrants is a hundred kilobytes, five times a
    second, and the split alone took about 2 ms of it (bench/event_round.py). Data with a line break,
    an id or a name with one, goes through sse-starlette as before."""
    if b"\n" in data or b"\r" in data or any("\n" in s or "\r" in s for s in (event, event_id or "")):
        return ServerSentEvent(data=data.decode(), event=event, id=event_id, retry=retry).encode()
    head = (f"id: {event_id}\r\n" if event_id is not None else "") + f"event: {event}\r\n"
    tail = f"retry: {retry}\r\n\r\n" if retry is not None else "\r\n"
    return b"".join((head.encode(), b"data: ", data, b"\r\n", tail.encode()))


def deal_text(results: p.Results) -> str | None:
    """The deal number as text, None while it is still secret (``races.shown_results`` held it back)."""
    return str(results.deal) if results.revealed else None


class _FrameCache:
    """The SSE bytes of the last hub frame: the hub hands the same bytes object to every listener in a
    loop, so a process converts each frame once however many browsers watch."""

    def __init__(self) -> None:
        self.frame: bytes | None = None
        self.chunk: bytes | None = None
        self.last = False

    def convert(self, frame: bytes) -> tuple[bytes | None, bool]:
        """``(the SSE event or None for a frame spectators' browsers ignore, whether it ends the stream)``."""
        if frame is self.frame:
            return self.chunk, self.last
        msg = p.decode_server(frame)
        chunk, last = None, False
        if isinstance(msg, (p.Countdown, p.Progress)):
            chunk = sse_event(msg)
        elif isinstance(msg, (p.Finished, p.Error)):
            chunk, last = sse_event(msg), True
        self.frame, self.chunk, self.last = frame, chunk, last
        return chunk, last


_cache = _FrameCache()


class SseSpectator:
    """A browser's stream as a hub :class:`~server.race.hub.Listener` (a spectator: no seat, no lease).

    Events wait in the stream's :class:`~server.race.outbox.Outbox` for the response to write them; a
    reader too slow for it is cut loose (the outbox's one rule: its queue dropped, the stream ended):
    its browser reconnects with ``Last-Event-ID`` and gets what it missed as one difference, which is
    cheaper than queueing it.
    """

    seat: int | None = None
    member: str = ""
    gen: int = 0

    def __init__(self, limit: int, race: str = "") -> None:
        self.race = race
        self.outbox = Outbox(limit)

    @property
    def ended(self) -> bool:
        """No more events: the stream ends once the queue is written."""
        return self.outbox.ended

    @property
    def dropped(self) -> bool:
        """Cut loose as a slow reader."""
        return self.outbox.dropped

    def push(self, chunk: bytes) -> None:
        outbox = self.outbox
        if not outbox.ended and not outbox.put(chunk):  # cut loose by this one
            log("slow_reader", logging.WARNING, via="sse", race=self.race, events=outbox.limit)

    def send(self, data: bytes) -> None:
        """A frame from the hub (the same bytes every spectator of this process gets)."""
        chunk, last = _cache.convert(data)
        if chunk is not None:
            self.push(chunk)
        if last:
            self.close_after_queue(p.CloseCode.NORMAL)

    hold = send
    """A spectator has no move in flight: a progress frame goes out as it comes."""

    def emit(self, msg: msgspec.Struct) -> None:
        """A message of its welcome (:func:`server.race.welcome.welcome`), as its SSE event; ``finished``
        ends the stream."""
        assert isinstance(msg, (p.Welcome, p.Countdown, p.Progress, p.Finished))
        self.push(sse_event(msg, retry=RETRY_MS if isinstance(msg, p.Welcome) else None))
        if isinstance(msg, p.Finished):
            self.close_after_queue(p.CloseCode.NORMAL)

    def close_after_queue(self, code: p.CloseCode) -> None:
        self.outbox.end(code)

    async def events(self) -> AsyncIterator[bytes]:
        """The queued events as they come, until the stream ends."""
        while (chunk := await self.outbox.next()) is not None:
            yield chunk


async def open_stream(service: Service, race: str, last_version: int | None) -> tuple[RaceHub, SseSpectator]:
    """Join the race's hub as a spectator and queue the welcome (and, resumed, what was missed).

    The same answer as a WebSocket spectator's ``hello`` with ``last_version`` (the same function:
    server/race/welcome.py): a replay from the race's history when it reaches back that far, else a
    snapshot. Raises :class:`RaceGone` (having left the hub) for a race that is not there.
    """
    listener = SseSpectator(service.config.edge.send_queue, race)
    hub = await service.join_hub(race, listener)
    try:
        replayed = await welcome(hub, listener, listener.emit, last_version, end_soon=service.end_soon)
    except LookupError:
        await service.leave_hub(hub, listener)
        raise RaceGone(race) from None
    except BaseException:
        await service.leave_hub(hub, listener)
        raise
    log("joined", race=race, role="spectator", via="sse", last_version=last_version, replayed=replayed)
    return hub, listener
