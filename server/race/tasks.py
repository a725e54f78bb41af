"""The background tasks of one race's hub (announcements, catch-ups, seat releases), each failure logged
with the race; how any background task's failure is logged (:func:`report`), and how work that must be
done once Redis is back is tried again (:func:`redo`).

Why: an exception nobody retrieves shows at best as asyncio's complaint when the task is collected, naming
no race (a lost announcement or catch-up was invisible)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Awaitable, Callable

from ..ops.log import format_event, log, logger
from ..store import UNAVAILABLE, outage_backoff


class RaceTasks:
    """A race's tasks under way: started, kept until done, cancelled together."""

    def __init__(self, race: str) -> None:
        self.race = race
        self._tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._done)

    def cancel(self) -> None:
        for task in self._tasks:
            task.cancel()

    def _done(self, task: "asyncio.Task[Any]") -> None:
        """A task is over: forgotten, and its failure logged with the race (Redis away: a warning)."""
        self._tasks.discard(task)
        report(task, "hub_task_failed", race=self.race)


def job_name(task: "asyncio.Task[Any]") -> str:
    """What a task runs, by name (its coroutine's qualified name), for the log line of its failure."""
    return str(getattr(task.get_coro(), "__qualname__", task.get_name()))


def report(done: "asyncio.Task[Any]", event: str, **fields: Any) -> None:
    """Log the failure of a finished task ``done``, if it failed: ``event`` with ``fields`` and the error (Redis
    away: a warning; anything else: an error with its traceback). Retrieving the exception here is
    what keeps asyncio's "Task exception was never retrieved", naming no race nor job, out of the log."""
    if done.cancelled() or (exc := done.exception()) is None:
        return
    if isinstance(exc, UNAVAILABLE):
        log(event, logging.WARNING, **fields, error=exc)
    else:
        logger.error(format_event(event, {**fields, "error": repr(exc)}), exc_info=exc)


async def redo(job: Callable[[], Awaitable[bool]], event: str, **fields: Any) -> None:
    """Run ``job`` again, with backoff (:func:`~server.store.outage_backoff`), until it says it is done
    (True) without Redis failing it; then log ``event`` with ``fields`` and the tries it took.

    Why here: work whose first try failed for want of Redis (a race's end, a seat's welcome mark) must
    be done once Redis is back, whoever started it; its first failure was logged by the caller, the
    tries of an outage are not (one line each would fill the log)."""
    backoff = outage_backoff()
    tries = 0
    while True:
        tries += 1
        await asyncio.sleep(backoff.compute(tries))
        try:
            if not await job():
                continue
        except UNAVAILABLE:
            continue
        log(event, **fields, tries=tries)
        return


class FailureRun:
    """The failures in a row of a job that runs again and again (a periodic job, a hub's progress flush),
    logged once at the first (``failed``) and once when the job works again (``recovered``, with how
    many failed): during an outage every turn fails, and a line each buried the lines that say what
    went wrong. Redis away is a line at ``level``; anything else an error with its traceback."""

    def __init__(self, failed: str, recovered: str, level: int = logging.INFO, **fields: Any) -> None:
        self.events = (failed, recovered)
        self.level = level
        self.fields = fields
        self.count = 0

    def failed(self, exc: BaseException) -> None:
        self.count += 1
        if self.count > 1:
            return
        if isinstance(exc, UNAVAILABLE):
            log(self.events[0], self.level, **self.fields, error=exc)
        else:
            logger.error(format_event(self.events[0], {**self.fields, "error": repr(exc)}), exc_info=exc)

    def worked(self) -> None:
        if self.count:  # (at the failure's level: whoever saw that line sees this one)
            log(self.events[1], self.level, **self.fields, failures=self.count)
        self.count = 0
