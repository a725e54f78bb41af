"""A token bucket: each frame costs one token; tokens come back at a fixed rate."""

from __future__ import annotations

import time
from typing import Callable


class TokenBucket:
    """``rate`` tokens per second, at most ``burst`` saved up."""

    __slots__ = ("rate", "burst", "tokens", "stamp", "_clock")

    def __init__(self, rate: float, burst: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.rate = rate
        self.burst = burst
        self.tokens = float(burst)
        self._clock = clock
        self.stamp = clock()

    def take(self, cost: float = 1.0) -> bool:
        """Spend ``cost`` tokens if there are enough; False means refuse the frame."""
        now = self._clock()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= cost:
            self.tokens -= cost
            return True
        return False
