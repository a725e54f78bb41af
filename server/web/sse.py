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

import asyncio
import collections
import logging
from typing import AsyncIterator

import msgspec
from sse_starlette.event import ServerSentEvent

from shared import protocol as p
from shared.variants import get_variant

from ..ops.log import log
from ..race import rules as races
from ..race.clock import now_ms
from ..race.hub import RaceHub
from ..race.service import Service
from ..store import EventKind

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

    Events wait in a bounded queue for the response to write them; a reader
    too slow to keep it under ``limit`` is cut loose (its queue dropped, the
    stream ended): its browser reconnects with ``Last-Event-ID`` and gets
    what it missed as one difference, which is cheaper than queueing it.
    """

    seat: int | None = None
    member: str = ""
    gen: int = 0

    def __init__(self, limit: int, race: str = "") -> None:
        self.limit = limit
        self.race = race
        self.queue: collections.deque[bytes] = collections.deque()
        self.ended = False
        """No more events: the stream ends once the queue is written."""
        self.dropped = False
        """Cut loose as a slow reader."""
        self._wake = asyncio.Event()

    def push(self, chunk: bytes) -> None:
        if self.ended:
            return
        if len(self.queue) >= self.limit:
            log("slow_reader", logging.WARNING, via="sse", race=self.race, events=len(self.queue))
            self.queue.clear()
            self.dropped = True
            self.close_after_queue(p.CloseCode.SLOW_READER)
            return
        self.queue.append(chunk)
        self._wake.set()

    def send(self, data: bytes) -> None:
        """A frame from the hub (the same bytes every spectator of this process gets)."""
        chunk, last = _cache.convert(data)
        if chunk is not None:
            self.push(chunk)
        if last:
            self.close_after_queue(p.CloseCode.NORMAL)

    hold = send
    """A spectator has no move in flight: a progress frame goes out as it comes."""

    def close_after_queue(self, code: p.CloseCode) -> None:
        self.ended = True
        self._wake.set()

    async def events(self) -> AsyncIterator[bytes]:
        """The queued events as they come, until the stream ends."""
        while True:
            while self.queue:
                yield self.queue.popleft()
            if self.ended:
                return
            self._wake.clear()
            await self._wake.wait()


async def open_stream(service: Service, race: str, last_version: int | None) -> tuple[RaceHub, SseSpectator]:
    """Join the race's hub as a spectator and queue the welcome (and, resumed, what was missed).

    The same answer as a WebSocket spectator's ``hello`` with
    ``last_version`` (server/race/connection.py, ``_welcome``): a replay from
    the race's history when it reaches back that far, else a snapshot.
    Raises :class:`RaceGone` (having left the hub) for a race that is not there.
    """
    listener = SseSpectator(service.config.send_queue, race)
    hub = await service.join_hub(race, listener)
    try:
        await _welcome(service, hub, listener, race, last_version)
    except BaseException:
        await service.leave_hub(hub, listener)
        raise
    return hub, listener


async def _welcome(service: Service, hub: RaceHub, listener: SseSpectator, race: str,
                   last_version: int | None) -> None:
    store = service.store
    meta = await store.meta(race)
    if meta is None:
        raise RaceGone(race)
    hub.set_meta(meta)
    version, lines = await store.lines(race)
    total = get_variant(meta.variant).total_cards
    table = races.progress_lines(lines, meta.started, total)
    missed = None
    if last_version is not None and last_version <= version:
        missed = await store.history(race, last_version, version)
        if missed and any(e.kind == EventKind.LEAVE.value for e in missed):
            missed = None  # a seat left the table: only a full table drops its line
    now = now_ms()
    resumed = missed is not None
    listener.push(sse_event(p.Welcome(
        protocol=p.PROTOCOL_VERSION, race=races.race_info(meta, now), role="spectator", seat=None, token="",
        version=last_version if resumed and last_version is not None else version, server_time=now,
        view=None, seq=0, progress=[] if resumed else table, resumed=resumed), retry=RETRY_MS))
    if missed is not None:
        assert last_version is not None
        if meta.status == "started" and any(e.kind == EventKind.START.value for e in missed):
            listener.push(sse_event(p.Countdown(version=version, starts_at=meta.starts_at, ends_at=meta.ends_at,
                                                server_time=now)))
        seen = {e.seat: e for e in races.table_before(lines, missed, meta.started, total)}
        changed = [e for e in table if seen.get(e.seat) != e]
        if changed or version != last_version:
            listener.push(sse_event(p.Progress(version=version, server_time=now, race_status=meta.phase(now),
                                               players=changed)))
    hub.welcome(listener, version, table if resumed else None, lobby=meta.status == "lobby")
    log("joined", race=race, role="spectator", via="sse", last_version=last_version,
        replayed=len(missed) if missed is not None else None)
    if meta.status != "finished":
        if meta.started and now >= meta.ends_at:
            service.end_soon(race)
        meta = await store.meta(race)  # an end announced while this welcome was read passed it by
    if meta is not None and meta.status == "finished" and not listener.ended:
        blob = await store.results(race)
        if blob is not None:
            listener.push(sse_event(p.Finished(version=meta.version,
                                               results=races.shown_results(meta, blob, now_ms()))))
            listener.close_after_queue(p.CloseCode.NORMAL)
