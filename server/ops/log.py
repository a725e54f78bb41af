"""Structured logs: one line per event, ``key=value`` pairs (logfmt).

Why logfmt: one grep-able line per event that both people and log
shippers read, with no JSON library in the hot path.
"""

from __future__ import annotations

import logging
import sys
import time
from typing import Any

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
