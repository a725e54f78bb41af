"""The clocks of a process's race hubs: the progress ticker they all flush on, and the timer a hub's racers'
frame waits on.

Why one ticker for every hub: their table reads start in the same loop pass and go to Redis in one round
trip of the batcher, and one timer wakes the process per tick, not one per race.
"""

from __future__ import annotations

import asyncio
from typing import Callable, Protocol

from .tasks import report


class Ticking(Protocol):
    """What the ticker flushes: a hub."""

    def tick(self) -> None: ...


def _ticked(task: "asyncio.Task[None]") -> None:
    """The ticker's task is over (no hub left to flush): what it raised is logged (the next mark starts
    another)."""
    report(task, "ticker_failed")


class ProgressTicker:
    """The process's progress clock: each tick, every hub marked since the last flushes once.

    At most ``progress_hz`` ticks a second, so no race gets more progress frames than that; a tick
    comes at once when the ticker was idle (the first change after a quiet spell is not held back).
    """

    def __init__(self, hz: float) -> None:
        self.interval = 1.0 / hz
        self._marked: dict[Ticking, None] = {}
        """The hubs to flush at the next tick, in the order they were marked."""
        self._task: asyncio.Task[None] | None = None

    def mark(self, hub: Ticking) -> None:
        self._marked[hub] = None
        if self._task is None:
            self._task = asyncio.ensure_future(self._run())
            self._task.add_done_callback(_ticked)

    def forget(self, hub: Ticking) -> None:
        self._marked.pop(hub, None)

    async def _run(self) -> None:
        try:
            while self._marked:
                hubs, self._marked = self._marked, {}
                for hub in hubs:
                    hub.tick()
                await asyncio.sleep(self.interval)
        finally:
            self._task = None


class DueTimer:
    """Calls ``fire`` once, within the soonest of the delays asked since it last fired (asked for later
    than the one armed: kept; sooner: brought forward).

    The due time is kept here, not asked of the timer: uvloop answers ``call_later(0)`` with a plain
    ``Handle``, which has no ``when()`` (a move that asked again got ``internal`` under load)."""

    def __init__(self, fire: Callable[[], None]) -> None:
        self._fire = fire
        self._handle: asyncio.Handle | None = None
        self._due_at = 0.0
        """When :attr:`_handle` fires (the loop's clock)."""

    def within(self, seconds: float) -> None:
        loop = asyncio.get_running_loop()
        delay = max(0.0, seconds)
        due = loop.time() + delay
        if self._handle is not None:
            if self._due_at <= due:
                return
            self._handle.cancel()
        self._due_at = due
        self._handle = loop.call_later(delay, self._fired)

    def cancel(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _fired(self) -> None:
        self._handle = None
        self._fire()
