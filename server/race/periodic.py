"""This process's periodic work: jobs run every so many seconds, whose failures are logged (once a run of
them) and retried next time, and which all stop at shutdown even when a library swallowed a cancel.

Why its own part: the race layer's own jobs (leases, the janitor, the catch-up) and those the composition
root adds (the event runner, the seek waves, the results sweep) share one loop and one shutdown.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Awaitable, Callable, Coroutine

from ..ops.log import log
from ..ops.metrics import Metrics
from ..store import UNAVAILABLE, Store
from .tasks import FailureRun, job_name, report

STOP_SECONDS = 3.0
"""How long shutdown waits for the periodic tasks to end after cancelling them, before asking again."""

Job = Callable[[], Awaitable[None]]


def _ended(task: "asyncio.Task[None]") -> None:
    """A periodic loop or long-running task ended: what it raised is logged now, not at the shutdown's
    gather (the subscription's reader dying of a bug would otherwise stop every race's news unseen)."""
    report(task, "periodic_task_failed", task=job_name(task))


class Periodic:
    """Jobs to run every so many seconds once started."""

    def __init__(self, store: Store, metrics: Metrics) -> None:
        self._store = store
        self._metrics = metrics
        self._jobs: list[tuple[float, Job]] = []
        self._tasks: list[asyncio.Task[None]] = []
        self.stopping = False

    def every(self, seconds: float, job: Job) -> None:
        """Run ``job`` every ``seconds`` once started (call before :meth:`start`); a failure is logged and
        retried next time."""
        self._jobs.append((seconds, job))

    def start(self, *others: Coroutine[Any, Any, None]) -> None:
        """Start the jobs, and ``others`` (long-running work that stops with them: the subscription)."""
        self._tasks = [*(asyncio.create_task(other) for other in others),
                       *(asyncio.create_task(self._every(seconds, job)) for seconds, job in self._jobs)]
        for task in self._tasks:  # (none ends before the shutdown: one that does is logged at once)
            task.add_done_callback(_ended)

    async def stop(self) -> None:
        self.stopping = True
        for task in self._tasks:
            task.cancel()
        _, pending = await asyncio.wait(self._tasks, timeout=STOP_SECONDS) if self._tasks else (set(), set())
        for task in pending:
            # A cancel can be swallowed inside a library (a Redis timeout firing as the cancel lands
            # turns into a TimeoutError, which the client retries): ask again; _every also stops by the flag.
            log("stop_cancel_again", logging.WARNING, task=task.get_name())
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _every(self, seconds: float, job: Job) -> None:
        """Run ``job`` every ``seconds``; a failure (Redis away) is logged and retried next time.

        A run of failures is logged once, at its first, and once over (``periodic_recovered``, with how
        many there were): during an outage every job fails at every turn, and a line for each (a few
        jobs a second, for as long as Redis is away) buried the lines that say what went wrong.

        The loop also ends on :attr:`stopping`: a cancel that a Redis client swallowed mid-command
        (seen on a Redis Cluster, where a timeout and the cancel met) would otherwise leave this
        loop running and the shutdown waiting for it."""
        failures = FailureRun("periodic_failed", "periodic_recovered", logging.WARNING, job=job.__name__)
        while not self.stopping:
            await asyncio.sleep(seconds)
            try:
                await job()
            except asyncio.CancelledError:
                raise
            except UNAVAILABLE as exc:
                self._metrics.redis_errors += 1
                self._store.down = True
                failures.failed(exc)
            except Exception as exc:
                failures.failed(exc)
            else:
                failures.worked()
