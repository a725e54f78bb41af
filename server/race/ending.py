"""Ending races: a race whose time is up or whose players are all done is ended here (idempotent, safe
from any process), a bounded number at once, and each end is told to whoever listens for it.

Why the listeners: a finished race with accounts in it goes on to their history and ratings
(server/accounts/results.py), which is not the race layer's business; the composition root
(server/compose.py) hands this part that callback, so the race layer imports nothing built on it.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Callable

from shared import protocol as p

from ..ops.log import log
from ..ops.metrics import Metrics
from ..store import UNAVAILABLE, Store, StoreError
from ..store.history import History
from . import rules as races
from .clock import now_ms
from .tasks import job_name, redo, report

ENDS_AT_ONCE = 16
"""Races this process ends, or applies to their accounts, at once (the rest wait their turn, first come
first served). Why: a round's heats all end at the same instant, hundreds of end timers firing
together; each end (and each application of its results) is a dozen round trips or more, and all at
once they took every Redis connection of the process, ahead of the moves and reads of the races still
running (on a cluster the client then failed them: see store/client.py). Measured on a local
cluster, 300 races ending at one instant in one process: sixteen at a time ended them all in 0.7-0.9 s
(all at once: 0.7-0.8 s), and a read meanwhile took 4-8 ms on average instead of 60-90 ms."""


class Background:
    """Tasks this process runs on its own behalf (not a connection's nor a hub's): kept until done, so
    that none is collected mid-way, and cancelled at shutdown."""

    def __init__(self) -> None:
        self.tasks: set[asyncio.Task[None]] = set()

    def spawn(self, job: Any) -> None:
        """Run ``job``; a failure it did not handle itself is logged (:func:`~server.race.tasks.report`)."""
        task = asyncio.create_task(job)
        self.tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: "asyncio.Task[None]") -> None:
        self.tasks.discard(task)
        report(task, "background_task_failed", task=job_name(task))

    def cancel(self) -> None:
        for task in self.tasks:
            task.cancel()


class Endings:
    """Ends races for this process: at most :data:`ENDS_AT_ONCE` at once, each race once at a time."""

    def __init__(self, store: Store, history: History, metrics: Metrics, retention: int,
                 background: Background) -> None:
        self._store = store
        self._history = history
        self._metrics = metrics
        self._retention = retention
        self._background = background
        self.bound = asyncio.Semaphore(ENDS_AT_ONCE)
        """Shared with the application of results (a burst of ends is a burst of those: one bound for both)."""
        self._ending: set[str] = set()
        self._retrying: set[str] = set()
        """Races whose end failed here for want of Redis: tried again until done (:meth:`_retry`)."""
        self._listeners: list[Callable[[str], None]] = []

    def on_ended_with_accounts(self, listener: Callable[[str], None]) -> None:
        """Call ``listener(race)`` after each race this process ends that had accounts in it (its results
        are then on the outbox of server/store/history.py, so a listener that fails loses nothing)."""
        self._listeners.append(listener)

    def end_soon(self, race: str) -> None:
        """End ``race`` now in the background, as this process's own work: the store said its last player
        is done (a give-up or a last card home answered ``race_done``, once, to one caller).

        Why not the connection's or its hub's task: a racer may give up and close its socket at once, and
        the hub of its last connection here is closed with it, cancelling its tasks; the race then ran
        to its time limit. A failure is logged here and the end tried again (:meth:`end_race`)."""
        self._background.spawn(self._end_or_log(race))

    async def _end_or_log(self, race: str) -> None:
        try:
            await self.end_race(race)
        except UNAVAILABLE as exc:
            self._metrics.redis_errors += 1
            log("end_failed", logging.WARNING, race=race, error=exc, retrying=True)
        except Exception:
            logging.getLogger("thieves").exception(f"event=end_failed race={race}")

    async def end_race(self, race: str) -> bool:
        """End the race if its time is up or everyone is done, or finish an end that stopped partway;
        idempotent, safe from any process. At most :data:`ENDS_AT_ONCE` at once here; a second call
        while one is waiting or under way returns False at once.

        An end that fails because Redis does not answer raises, and is tried again here in the
        background, with backoff, until Redis answers (:meth:`_retry`): whoever called (the last
        give-up, the hub's time-up timer, the janitor) need not, and the race ends within seconds of
        Redis's return instead of at the janitor's next sweep or its time limit."""
        if race in self._ending:
            return False
        self._ending.add(race)
        try:
            async with self.bound:
                return await self._end_race(race)
        except UNAVAILABLE:
            if race not in self._retrying:
                self._retrying.add(race)
                self._background.spawn(self._retry(race))
            raise
        finally:
            self._ending.discard(race)

    async def _retry(self, race: str) -> None:
        """Try a failed end again until it is done; logged once it is."""
        async def again() -> bool:
            if race in self._ending:
                return False  # another call is under way: if it fails, this loop tries again
            await self.end_race(race)
            return True
        try:
            await redo(again, "end_retried", race=race)
        finally:
            self._retrying.discard(race)

    async def _end_race(self, race: str) -> bool:
        meta = await self._store.meta(race)
        now = now_ms()
        if meta is not None and meta.status == "finished":  # ended, but maybe not every step after it
            if await self._store.ended(meta, meta.ended_at, self._retention):
                log("race_end_finished", race=race)
            return False
        if meta is None or not meta.due_to_end(now):
            return False
        players = [await self._store.player(race, s) for s in range(meta.players)]
        res = races.results(meta, [pl for pl in players if pl is not None], now)
        accounts = any(s.account for s in res.standings)
        if accounts:
            await self._history.mark_pending(race, now)  # the outbox first: a crash after the end loses nothing
        try:
            ended, version = await self._store.end(meta, now, p.encode(res), self._retention)
        except StoreError:
            return False
        if ended:
            log("race_ended", race=race, version=version, players=meta.players,
                winner=res.standings[0].name if res.standings else None)
            if accounts:
                for listener in self._listeners:
                    listener(race)
        return ended
