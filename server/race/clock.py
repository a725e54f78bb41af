"""The server clock: every timestamp in the protocol and in Redis is milliseconds since the epoch."""

from __future__ import annotations

import time


def now_ms() -> int:
    """Wall-clock milliseconds (all processes of a deployment share one clock source)."""
    return int(time.time() * 1000)
