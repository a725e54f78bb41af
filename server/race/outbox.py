"""Frames waiting for one reader, in order, with the one rule for a reader too slow to take them.

Three writers hand frames to readers that may fall behind: a race's WebSocket connection
(:mod:`server.race.connection`), a browser's race stream (:mod:`server.web.sse`) and a live event's
watchers (:mod:`server.events.feed`). Each used to keep its own queue with its own bound and its own
idea of what to do when the bound was hit; now they share this one.

The rule: a reader with ``limit`` frames unread, or more than ``byte_limit`` bytes waiting (queued
here plus whatever the writer says its transport still holds), is cut loose: what is queued is
dropped and the stream ends with :data:`~shared.protocol.CloseCode.SLOW_READER`. Why drop rather than
wait: one slow reader must never hold up a broadcast to the others, and every one of these streams
can be resumed (a race's ``last_version``, an SSE ``Last-Event-ID``, an event feed's next complete
frame), which costs less than keeping its backlog.

The queue itself is made on the first frame that has to wait: most readers keep up, and an idle
connection should hold no deque (some 760 bytes each).
"""

from __future__ import annotations

import asyncio
from collections import deque

from shared import protocol as p


class Outbox:
    """A bounded queue of frames for one reader; :meth:`next` waits for the next one (None: ended)."""

    __slots__ = ("limit", "byte_limit", "count", "size", "ended", "dropped", "close_code", "_frames", "_wake")

    def __init__(self, limit: int, byte_limit: int = 0) -> None:
        self.limit = limit
        """Frames queued at most: one more and the reader is cut loose."""
        self.byte_limit = byte_limit
        """Bytes waiting at most (0: no bound on bytes)."""
        self.count = 0
        """Frames queued."""
        self.size = 0
        """Bytes queued."""
        self.ended = False
        """No frame is taken any more: the stream ends once the queue is read."""
        self.dropped = False
        """Cut loose as a slow reader."""
        self.close_code = p.CloseCode.NORMAL
        """How the stream ends (for writers that close with a code)."""
        self._frames: deque[bytes] | None = None
        self._wake: asyncio.Event | None = None

    def __len__(self) -> int:
        return self.count

    def full(self, waiting: int = 0) -> bool:
        """The slow-reader rule, ``waiting`` being the bytes the writer's transport holds besides."""
        return self.count >= self.limit or (self.byte_limit > 0 and self.size + waiting > self.byte_limit)

    def put(self, frame: bytes, waiting: int = 0) -> bool:
        """Queue a frame; False if it was not taken (ended, or the reader is cut loose now)."""
        if self.ended:
            return False
        if self.full(waiting):
            self.cut()
            return False
        self.append(frame)
        return True

    def append(self, frame: bytes) -> None:
        """Queue a frame the writer has checked the rule for already."""
        if self._frames is None:
            self._frames = deque()
        self._frames.append(frame)
        self.count += 1
        self.size += len(frame)
        self._set()

    def pop(self) -> bytes | None:
        """The next frame queued, None if there is none (without waiting)."""
        frames = self._frames
        if not frames:
            return None
        frame = frames.popleft()
        self.count -= 1
        self.size -= len(frame)
        if not frames:
            self._frames = None
        return frame

    def end(self, code: p.CloseCode = p.CloseCode.NORMAL) -> None:
        """No more frames: the reader gets what is queued, then the end."""
        if not self.ended:
            self.ended = True
            self.close_code = code
        self._set()

    def cut(self, code: p.CloseCode = p.CloseCode.SLOW_READER) -> None:
        """Drop what is queued and end now (a slow reader, or a close that cannot wait)."""
        self.clear()
        self.dropped = self.dropped or code is p.CloseCode.SLOW_READER
        self.ended = True
        self.close_code = code
        self._set()

    def clear(self) -> None:
        self._frames = None
        self.count = self.size = 0

    async def next(self) -> bytes | None:
        """The next frame, waiting for it; None once the outbox has ended and is read."""
        while True:
            frame = self.pop()
            if frame is not None:
                return frame
            if self.ended:
                return None
            if self._wake is None:
                self._wake = asyncio.Event()
            self._wake.clear()
            await self._wake.wait()

    def _set(self) -> None:
        if self._wake is not None:
            self._wake.set()
