"""The private pool of checked deals: secret deal numbers the solver proved winnable.

A checked race must be as secret as any other: the stock order and the deal
number never leave the server while it runs. The pools shipped with the
package are public (a racer can match the 40 face-up starting cards against
them), so races never draw from them. Instead every server keeps, in Redis,
a few deals per variant that nobody else has seen: fresh numbers from
``secrets`` over the whole deal range (about 9.2e18 of them, so none can be
guessed), each with the winning line the solver found. Each deal goes to one
race only (an atomic LPOP), and the race's results reveal the number and
the line, so anyone can check the mark with ``thieves replay``.

Who does what:

- :func:`try_random_deal` runs in a worker process: one fresh
  number, solved within the per-deal budget; a won deal's line is replayed
  through the engine before it counts.
- :class:`CheckedPool` (in the event loop, Redis I/O only) keeps each
  configured variant's pool at its target, one deal at a time, in a
  low-priority worker, and hands deals to new pool races. When a pool is
  empty it solves on demand (in a second worker, at normal priority: a
  creator is waiting) for a bounded time, then answers ``pool_empty``.
  Creators who ask while a search of their variant is under way join it
  (they wait no longer than it); after a search that found nothing the
  variant rests (:data:`COOL_DOWN`), so what on-demand solving costs is
  bounded per process whoever asks (issue 22: a variant the solver seldom
  wins, Eighty Thieves, kept a core busy for one address).

Several server processes on one Redis fill the same lists; the push is a
one-key script that refuses once the list is at its target, so they never
overfill (the most a race of fillers wastes is one solved deal each).
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import time
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from functools import lru_cache


from shared import protocol as p
from shared.engine import Game
from shared.record import GameRecord, replay
from shared.solver import Verdict, solve_deal
from shared.variants import get_variant

from ..config import DealSettings
from ..ops.log import log
from ..ops.metrics import Metrics
from ..store import UNAVAILABLE, Store
from ..ops.workers import Workers

SLACK_SECONDS = 10.0
"""How much longer than its budget one deal may take (a worker starting, queueing) before the call fails."""
IDLE_SECONDS = 1.0
"""How often a filler whose pools are full looks again (races take deals from any process)."""
ON_DEMAND_BUDGET = 0.1
"""CPU seconds per deal when someone waits: wins cluster under 0.1 s (Forty Thieves: 15 of the 20
won within 2 s), so short tries find one soonest (about 70 a minute against 5 at 2 s)."""
COOL_DOWN = 3.0
"""After an on-demand search of a variant found nothing, that variant is not searched on demand again
(in this process) for this many times as long as the search took: a flood of pool races (any number
of addresses) keeps the on-demand worker solving a hard variant at most a quarter of the time."""
NICENESS = 10
"""The filler's worker runs at a lower CPU priority: racers' moves and hints come first (and a
creator waiting for an on-demand deal: that runs in a worker of its own at normal priority)."""



_PASSING: tuple[type[BaseException], ...] = (*UNAVAILABLE, BrokenProcessPool, asyncio.TimeoutError)
"""Failures of one filling round that the next may not meet (Redis away, a worker died, a slow solve)."""

class PoolUnavailable(p.CodedError):
    """No checked deal for a new race; ``code`` is ``no_pool`` or ``pool_empty`` (then come back in
    :data:`RETRY_POOL_SECONDS`)."""

    def __init__(self, code: p.ErrorCode, message: str) -> None:
        super().__init__(code, message, retry_after=RETRY_POOL_SECONDS if code is p.ErrorCode.POOL_EMPTY else None)


RETRY_POOL_SECONDS = 5
"""Retry-After of a ``pool_empty`` answer: the filler adds a deal every few seconds."""


@dataclass
class _Search:
    """An on-demand search of one variant under way in this process, and the creators waiting on it."""

    deadline: float
    """Loop time when it gives up: a creator who joins it waits no longer."""
    takers: int = 0


@dataclass(frozen=True)
class CheckedDeal:
    """A deal number the solver proved winnable, with its winning line from the start (a race's secret
    deal otherwise: no line, drawn at random or, ``chosen``, someone's choice)."""

    variant: str
    deal: int
    line: tuple[str, ...]
    chosen: bool = False
    """The number was chosen (an organiser's deal), not drawn: its race reports ``deal_source`` "number"."""

    def dumps(self) -> str:
        """The form kept in Redis (and crossing the worker's process boundary)."""
        return json.dumps({"variant": self.variant, "deal": self.deal, "line": list(self.line)})

    @classmethod
    def loads(cls, text: str | bytes) -> "CheckedDeal":
        """The inverse of :meth:`dumps`; ``ValueError`` when the text is not one."""
        try:
            data = json.loads(text)
            deal, line = data["deal"], data["line"]
            if not isinstance(deal, int) or isinstance(deal, bool) or not 1 <= deal <= p.MAX_WIRE_DEAL:
                raise ValueError(f"bad deal number {deal!r}")
            if not isinstance(line, list) or not line or not all(isinstance(m, str) for m in line):
                raise ValueError("no winning line")
            return cls(get_variant(data["variant"]).key, deal, tuple(line))
        except (KeyError, TypeError, json.JSONDecodeError) as exc:
            raise ValueError(f"not a checked deal: {exc}") from None


@dataclass(frozen=True)
class Attempt:
    """What one worker call found: a deal (or none) and what it cost."""

    found: str | None
    """:meth:`CheckedDeal.dumps` of a winnable deal, or ``None``."""
    verdict: str
    seconds: float
    nodes: int


def fresh_deal_number() -> int:
    """A secret deal number over the whole range the wire allows (as random races draw theirs)."""
    return secrets.randbelow(p.MAX_WIRE_DEAL) + 1


def check_deal(variant: str, number: int, budget: float) -> Attempt:
    """Solve deal ``number`` of ``variant`` within ``budget`` CPU seconds (runs in a worker).

    CPU seconds, as the pool builder counts them: the low-priority worker
    gets less of a busy machine, and a wall-clock budget would then let
    fewer deals through. Only a deal whose line the engine replays to a win
    counts: the mark a race shows must survive anyone's ``thieves replay``.
    """
    started = time.perf_counter()
    result = solve_deal(get_variant(variant), number, time_limit=max(budget, 0.0), clock=time.process_time)
    seconds = time.perf_counter() - started
    found = None
    if result.verdict is Verdict.WON:
        line = tuple(result.move_texts())
        if replay(GameRecord(variant, number, line)).game.is_won():
            found = CheckedDeal(variant, number, line).dumps()
    return Attempt(found, result.verdict.value, seconds, result.nodes)


def try_random_deal(variant: str, budget: float) -> Attempt:
    """:func:`check_deal` on a fresh secret number: what the filler and on-demand solving run."""
    return check_deal(variant, fresh_deal_number(), budget)


@lru_cache(maxsize=None)
def solver_can_check(variant: str) -> bool:
    """Whether the solver searches deals of ``variant`` (it does not model face-down cards)."""
    return not any(Game.new(get_variant(variant), 1).hidden)


class CheckedPool:
    """Each variant's private pool in Redis: kept at its target, drawn from by pool races."""

    def __init__(self, store: Store, metrics: Metrics, settings: DealSettings) -> None:
        self.store = store
        self.metrics = metrics
        self.targets = {v: n for v, n in settings.checked_targets().items() if n > 0}
        """Variant key -> deals to keep ready (variants not here are solved on demand only)."""
        self.budget = settings.checked_budget
        self.wait = settings.checked_wait
        self.filler = Workers(1, niceness=NICENESS)
        self.on_demand = Workers(1)
        """Someone waits for an on-demand deal: its own worker, at normal priority (started when first needed)."""
        self._task: asyncio.Task[None] | None = None
        self._tried: dict[str, int] = {}
        """Deals tried since the variant's last refill (for the refill log line)."""
        self._searches: dict[str, _Search] = {}
        """Variant -> its on-demand search under way."""
        self._resting: dict[str, float] = {}
        """Variant -> loop time until which it is not searched on demand (its last search found nothing)."""

    def start(self) -> None:
        if self.targets:
            self.filler.start()
            self._task = asyncio.create_task(self._fill_forever())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        await asyncio.to_thread(self.filler.close, True)
        await asyncio.to_thread(self.on_demand.close, True)

    # ----------------------------------------------------------- filling
    async def _fill_forever(self) -> None:
        """Top the pools up for as long as the server runs; failures are logged and retried."""
        backoff = 0.5
        while True:
            try:
                worked = await self.fill_once()
                backoff = 0.5
            except asyncio.CancelledError:
                raise
            except _PASSING as exc:
                log("checked_fill_failed", logging.WARNING, error=repr(exc), retry_in=backoff)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 30.0)
                continue
            except Exception:
                logging.getLogger("thieves").exception("event=checked_fill_failed")
                await asyncio.sleep(30.0)
                continue
            if not worked:
                await asyncio.sleep(IDLE_SECONDS)

    async def fill_once(self) -> bool:
        """One solver attempt for each variant below its target; False when every pool is full."""
        depths = await self.store.checked_depths(list(self.targets))
        worked = False
        for variant, target in self.targets.items():
            if depths[variant] >= target:
                continue
            worked = True
            attempt = await self._attempt(self.filler, variant, self.budget)
            if attempt.found is None:
                continue
            depth = await self.store.checked_push(variant, attempt.found, target)
            tried, self._tried[variant] = self._tried.get(variant, 0), 0
            if depth < 0:
                log("checked_deal_dropped", variant=variant, reason="pool already full (another process filled it)")
                continue
            self.metrics.checked_added[variant] += 1
            log("checked_pool_refill", variant=variant, depth=depth, target=target, tried=tried,
                seconds=round(attempt.seconds, 3), nodes=attempt.nodes)
        return worked

    async def _attempt(self, workers: Workers, variant: str, budget: float) -> Attempt:
        attempt = await workers.call(budget + SLACK_SECONDS, try_random_deal, variant, budget)
        self.metrics.checked_tried[f"{variant}|{attempt.verdict}"] += 1
        self._tried[variant] = self._tried.get(variant, 0) + 1
        return attempt

    # ------------------------------------------------------------ taking
    async def take(self, variant: str, wait: float | None = None) -> CheckedDeal:
        """A checked deal for a new race, never handed out before; raises :class:`PoolUnavailable`.

        First the private pool (one atomic pop); when it is empty, fresh
        deals are solved in the worker for up to ``wait`` seconds (default
        ``--checked-wait``), looking at the pool again between two (another
        process may have refilled it).
        """
        wait = self.wait if wait is None else wait
        if not solver_can_check(variant):
            raise PoolUnavailable(p.ErrorCode.NO_POOL, f"the solver cannot check deals of {variant} "
                                  "(face-down cards): use deal_source 'random' or 'number'")
        found = await self._pop(variant)
        if found is not None:
            self.metrics.checked_taken[f"{variant}|pool"] += 1
            return found
        loop = asyncio.get_running_loop()
        now = loop.time()
        if now < (resting := self._resting.get(variant, 0.0)):
            self.metrics.checked_taken[f"{variant}|none"] += 1
            raise PoolUnavailable(p.ErrorCode.POOL_EMPTY, f"no checked deal of {variant} is ready and the last "
                                  f"search found none; the next search in {resting - now:.0f} s: try again then, "
                                  "or use deal_source 'random'")
        search = self._searches.get(variant)
        if search is None or search.deadline <= now:
            search = self._searches[variant] = _Search(now + wait)
        deadline = min(search.deadline, now + wait)
        search.takers += 1
        started = time.perf_counter()
        tried = 0
        try:
            while (left := deadline - loop.time()) > 0:
                attempt = await self._attempt(self.on_demand, variant, min(self.budget, ON_DEMAND_BUDGET, left))
                tried += 1
                if attempt.found is not None:
                    self.metrics.checked_taken[f"{variant}|on_demand"] += 1
                    log("checked_on_demand", variant=variant, tried=tried,
                        seconds=round(time.perf_counter() - started, 3))
                    return CheckedDeal.loads(attempt.found)
                found = await self._pop(variant)
                if found is not None:
                    self.metrics.checked_taken[f"{variant}|pool"] += 1
                    return found
        finally:
            search.takers -= 1
            if search.takers == 0 and self._searches.get(variant) is search:
                del self._searches[variant]
        took = loop.time() - now
        self._resting[variant] = max(self._resting.get(variant, 0.0), loop.time() + COOL_DOWN * took)
        self.metrics.checked_taken[f"{variant}|none"] += 1
        log("checked_pool_empty", logging.WARNING, variant=variant, tried=tried, wait=wait,
            rests=round(COOL_DOWN * took, 1))
        raise PoolUnavailable(p.ErrorCode.POOL_EMPTY, f"no checked deal of {variant} was ready and none was found "
                              f"within {took:.1f} s: try again in {COOL_DOWN * took:.0f} s, or use deal_source "
                              "'random'")

    async def pop_ready(self, variant: str) -> CheckedDeal | None:
        """A checked deal if one is ready in the private pool now, else None (never solves: for races
        whose players are already waiting, which take a random deal instead)."""
        found = await self._pop(variant)
        self.metrics.checked_taken[f"{variant}|{'pool' if found is not None else 'none'}"] += 1
        return found

    async def _pop(self, variant: str) -> CheckedDeal | None:
        """The oldest deal of the pool; an entry that does not parse is logged and skipped."""
        while (raw := await self.store.checked_pop(variant)) is not None:
            try:
                deal = CheckedDeal.loads(raw)
            except ValueError as exc:
                log("checked_entry_bad", logging.ERROR, variant=variant, error=str(exc))
                continue
            if deal.variant == variant:
                return deal
            log("checked_entry_bad", logging.ERROR, variant=variant, error=f"entry of {deal.variant}")
        return None

    async def depths(self) -> dict[str, int]:
        """Deals ready per filled variant (all processes together: it is the Redis list's length)."""
        return await self.store.checked_depths(list(self.targets))
