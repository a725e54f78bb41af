"""Hints for racers: the solver on a player's authoritative position, off the event loop.

The solver is pure Python and holds the GIL while it searches, so running it
in a thread of the server process makes every other player's move wait for
GIL hand-offs (bench/hint_latency.py measures how much). By default it runs
in a small pool of worker processes instead; ``--hint-workers 0`` keeps it
in a thread (one process less, for a machine with one core).

The work crosses the process boundary as text: the position in the engine's
text form and the previous hint as JSON (:meth:`shared.hints.Hint.to_json`),
which is also what the store keeps between a player's hints.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import time
from concurrent.futures import Executor, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from shared.engine import Game
from shared.hints import Hint, hint

from .embedded import term_with_parent

SLACK_SECONDS = 10.0
"""How much longer than its budget a hint may take (queueing behind other
players' hints, a worker starting) before the request fails."""


def compute_hint(position: str, previous: str | None, budget: float) -> tuple[str, float]:
    """The hint JSON for ``position`` and the seconds the solver spent (runs in a worker).

    A stored previous hint that no longer parses is ignored: the worst case
    is a fresh search instead of following the old line.
    """
    game = Game.from_position(position)
    prev = None
    if previous:
        try:
            prev = Hint.from_json(json.loads(previous))
        except ValueError:
            prev = None
    started = time.perf_counter()
    found = hint(game, time_budget=budget, previous=prev)
    return json.dumps(found.to_json()), time.perf_counter() - started


def _warm() -> None:
    """Nothing: a first call makes a worker import the solver before a racer waits for it."""


def _worker_start(parent: int) -> None:
    """A worker ends with the server, even a SIGKILLed one (its pipes would keep it waiting forever)."""
    term_with_parent()
    if os.getppid() != parent:  # the server died before the request to the kernel was made
        os._exit(0)


class HintRunner:
    """Runs :func:`compute_hint` in worker processes (``workers`` > 0) or a thread."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self._pool: Executor | None = None

    def _executor(self) -> Executor:
        if self._pool is None:
            # spawn: a fork of a process with an event loop and Redis sockets would share them.
            self._pool = ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"),
                                             initializer=_worker_start, initargs=(os.getpid(),))
            for _ in range(self.workers):
                self._pool.submit(_warm)
        return self._pool

    def start(self) -> None:
        """Start the worker processes now, so the first hint does not pay for their start."""
        if self.workers > 0:
            self._executor()

    async def run(self, position: str, previous: str | None, budget: float) -> tuple[Hint, str, float]:
        """``(hint, its JSON, solver seconds)`` for ``position``."""
        if self.workers <= 0:
            call = asyncio.to_thread(compute_hint, position, previous, budget)
        else:
            loop = asyncio.get_running_loop()
            call = loop.run_in_executor(self._executor(), compute_hint, position, previous, budget)
        try:
            text, seconds = await asyncio.wait_for(call, budget + SLACK_SECONDS)
        except BrokenProcessPool:
            self.close()  # a worker died (killed, out of memory): the next hint starts a fresh pool
            raise
        return Hint.from_json(json.loads(text)), text, seconds

    def close(self) -> None:
        """Stop the workers and wait for them (at most one hint's budget): none may outlive the server."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
