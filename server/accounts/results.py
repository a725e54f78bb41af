"""Finished races applied to their accounts (history, totals, ratings: recorder.py) as they end, and the
sweep that applies what a crash left on the outbox (server/store/history.py).

Why a part of its own, given its collaborators: the race layer ends races and must not import what is
built on accounts' results; it calls :meth:`Results.apply_soon` through the callback the composition root
(server/compose.py) registers, and this part ends a race through the ``end_race`` it is handed.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Awaitable, Callable

from ..ops.log import log
from ..store import UNAVAILABLE
from ..store.history import History
from .recorder import Outcome, Recorder

RESULTS_SWEEP_SECONDS = 2.0
"""How often each process looks for finished races whose results no process applied to the accounts
(the one that ended it died first): the longest a crash delays a history entry or a rating."""


class Results:
    """Applies finished races to their accounts, each race once at a time in this process."""

    def __init__(self, recorder: Recorder, history: History, bound: asyncio.Semaphore,
                 end_race: Callable[[str], Awaitable[bool]], spawn: Callable[[Any], None]) -> None:
        self._recorder = recorder
        self._history = history
        self._bound = bound
        """The bound on ends at once (server/race/ending.py): a burst of ends is a burst of these."""
        self._end_race = end_race
        self._spawn = spawn
        self._applying: set[str] = set()

    def apply_soon(self, race: str) -> None:
        """Apply ``race`` in the background (it just ended here); a failure waits for the sweep."""
        self._spawn(self.apply(race))

    async def apply(self, race: str) -> Outcome | None:
        """Apply a finished race to its accounts (recorder.py); None when this process is already at it.
        A failure leaves the race on the outbox for the next sweep."""
        if race in self._applying:
            return None
        self._applying.add(race)
        try:
            async with self._bound:
                outcome = await self._recorder.apply(race)
        except UNAVAILABLE as exc:
            log("results_failed", logging.WARNING, race=race, error=exc)
            return None
        except Exception:
            logging.getLogger("thieves").exception(f"event=results_failed race={race}")
            return None
        finally:
            self._applying.discard(race)
        if outcome is not Outcome.RUNNING:
            log("results_applied", race=race, outcome=outcome.value)
        return outcome

    async def sweep(self) -> None:
        """Apply the outbox's finished races; end the ones whose time ran out or whose players are all
        done (their ender died between the outbox and the end); leave running races for later."""
        for race in await self._history.pending():
            if await self.apply(race) is Outcome.RUNNING:
                await self._end_race(race)
