"""Structured logs: one line per event, ``key=value`` pairs (logfmt).

Why logfmt: one grep-able line per event that both people and log
shippers read, with no JSON library in the hot path.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
import weakref
from typing import Any, Callable, ClassVar

logger = logging.getLogger("thieves")


def _fmt(value: Any) -> str:
    text = str(value)
    if not text or any(c in text for c in ' "=\n'):
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    return text


def format_event(event: str, fields: dict[str, Any]) -> str:
    """``event=NAME k=v ...`` with values quoted only when they need it."""
    parts = [f"event={_fmt(event)}"]
    parts.extend(f"{k}={_fmt(v)}" for k, v in fields.items() if v is not None)
    return " ".join(parts)


def log(event: str, level: int = logging.INFO, **fields: Any) -> None:
    """Log one event; cheap when the level is disabled."""
    if logger.isEnabledFor(level):
        logger.log(level, format_event(event, fields))


class SummedLog:
    """An event a client can cause as often as it likes (a bad request, a refused creation), logged at
    most once a window: the first at once, then one line at the window's end with the ``count`` of the
    window's and the fields of its last.

    Why: a line per occurrence lets one client fill the disk and bury everything else in the log;
    ``/metrics`` counts every one."""

    _open: ClassVar["weakref.WeakSet[SummedLog]"] = weakref.WeakSet()
    """The ones with a window open (:meth:`flush_open`)."""

    def __init__(self, event: str, level: int = logging.WARNING,
                 window: Callable[[], float] = lambda: 60.0) -> None:
        self.event, self.level, self._window = event, level, window
        self._count = 0
        self._fields: dict[str, Any] = {}
        self._timer: asyncio.TimerHandle | None = None
        """The window's end (None: no window open, the next occurrence is logged at once)."""

    def __call__(self, **fields: Any) -> None:
        """One occurrence (call from the running loop)."""
        self._count += 1
        self._fields = fields
        if self._timer is None:
            self._flush()

    def _flush(self) -> None:
        if not self._count:
            self._timer = None
            self._open.discard(self)
            return
        window = self._window()
        self._write(next_in_s=window)
        self._timer = asyncio.get_running_loop().call_later(window, self._flush)
        self._open.add(self)

    @classmethod
    def flush_open(cls) -> None:
        """Log what the open windows hold now (the server is stopping: their timers would never fire)."""
        for summed in list(cls._open):
            if summed._timer is not None:
                summed._timer.cancel()
                summed._timer = None
            if summed._count:
                summed._write(stopping=1)
            cls._open.discard(summed)

    def _write(self, **extra: Any) -> None:
        """The line of the occurrences since the last: their count and the last one's fields."""
        log(self.event, self.level, count=self._count, **self._fields, **extra)
        self._count = 0


class SummedLogs:
    """A :class:`SummedLog` of one event for each value of a key (a refusal's code): each value is logged
    at once the first time in its window, so a kind not seen before still shows when it happens, and
    no kind can be repeated into a line each."""

    def __init__(self, event: str, key: str, level: int = logging.INFO,
                 window: Callable[[], float] = lambda: 60.0) -> None:
        self.event, self.key, self.level, self._window = event, key, level, window
        self._by: dict[Any, SummedLog] = {}

    def __call__(self, value: Any, **fields: Any) -> None:
        """One occurrence of ``value`` (call from the running loop); its line reads ``key=value`` first."""
        summed = self._by.get(value)
        if summed is None:
            summed = self._by[value] = SummedLog(self.event, self.level, self._window)
        summed(**{self.key: value}, **fields)


class _Formatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
        line = f"ts={ts}.{int(record.msecs):03d}Z level={record.levelname.lower()} {record.getMessage()}"
        if record.exc_info:
            exc = self.formatException(record.exc_info).replace("\n", "\\n")
            line += f' exc="{exc}"'
        return line


def setup_logging(level: str = "info") -> None:
    """Send the ``thieves`` logger to stderr, one line per event."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_Formatter())
    logger.handlers[:] = [handler]
    logger.setLevel(level.upper())
    logger.propagate = False
