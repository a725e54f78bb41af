"""The flags of one shared deal's games: an event's races, or a day's daily-deal plays.

Each finished race is analysed once, in the background, in the checked pool's low-priority solver worker
(CPU at a lower priority than racers' moves and hints, bounded per game by ``--fairplay-cpu``), and the
analysis is kept beside the race's results. A request answers at once with the analyses kept and starts
the missing ones of races that are over; the rest (races under way, analyses running) count as waiting. The flags are derived from the kept analyses at each request, with the thresholds below, so
changing a threshold needs no new analysis. Flags are for the organiser to weigh: nothing here refuses,
scores or hides anyone.
"""

from __future__ import annotations

import asyncio
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING

from shared import protocol as p

from ..ops.log import log
from ..store.fairplay import AccountFacts, FairPlayStore
from .analysis import analyse_race, decode_games
from .foresight import Budget
from .linked import linked_groups, link_words
from .scouting import StockUse, scouting_words

if TYPE_CHECKING:
    from ..race.service import Service

FORESIGHT_THRESHOLD = 2
"""Foresight deviations less costly ones at which a game is flagged (bench/fairplay.py measures it)."""
STORED_LINE_SHARE = 0.9
"""A game that begins with this share of the server's stored winning line is flagged (a greedy player
shares up to about three quarters of a checked deal's line: the line is the solver's, which orders moves as
greedy play does)."""
ANALYSIS_TIMEOUT = 600.0
"""Seconds one race's analysis may take in the worker (its games' CPU budgets, queued behind the pool's
filling and other analyses) before it is given up (logged; the next request starts it again)."""


@dataclass(frozen=True)
class Scope:
    """A shared deal's games: their races, and the words that name them."""

    name: str
    variant: str
    races: list[str]


class Analyser:
    """A process's analyses under way, one task per race, each in the solver worker in turn: a request
    answers at once with what is kept and starts the rest (the organiser asks again for them)."""

    def __init__(self, service: "Service", store: FairPlayStore) -> None:
        self.service = service
        self.store = store
        self.tasks: dict[str, asyncio.Task[None]] = {}

    async def games(self, race: str) -> list[p.FairPlayGame] | None:
        """The kept analysis of ``race``, or None (then it is started if the race is over)."""
        blob = await self.store.analysis(race)
        if blob is not None:
            return decode_games(blob)
        if race not in self.tasks:
            meta = await self.service.store.meta(race)
            if meta is not None and meta.status == "finished":
                self.tasks[race] = asyncio.create_task(self._analyse(race))
        return None

    async def _analyse(self, race: str) -> None:
        try:
            results = await self.service.store.results(race)
            if results is None:
                return
            budget = Budget(cpu_budget=self.service.config.events.fairplay_cpu)
            blob = await self.service.checked.filler.call(ANALYSIS_TIMEOUT, analyse_race, results, budget)
            await self.store.keep_analysis(race, blob, self.service.config.races.retention)
        except Exception as exc:  # noqa: BLE001 (logged; the next request tries again)
            log("fairplay_analysis_failed", race=race, error=repr(exc))
        finally:
            self.tasks.pop(race, None)


_analysers: "weakref.WeakKeyDictionary[Service, Analyser]" = weakref.WeakKeyDictionary()


def analyser_of(service: "Service", store: FairPlayStore) -> Analyser:
    """The process's analyser (one per service: its tasks are the process's)."""
    if service not in _analysers:
        _analysers[service] = Analyser(service, store)
    return _analysers[service]


async def report(service: "Service", store: FairPlayStore, scope: Scope, link_ms: int) -> p.FairPlayReport:
    """The scope's flags, every race analysed that can be."""
    games: list[p.FairPlayGame] = []
    waiting = 0
    analyser = analyser_of(service, store)
    for race in scope.races:
        found = await analyser.games(race)
        if found is None:
            waiting += 1
        else:
            games.extend(found)
    accounts = sorted({g.account for g in games if g.account})
    facts = {f.account: f for f in await store.facts(accounts, scope.variant)}
    flags = [flag for g in games for flag in game_flags(g)]
    flags.extend(link_flags(games, facts, link_ms))
    return p.FairPlayReport(scope=scope.name, analysed=len(games), waiting=waiting,
                            cpu_seconds=round(sum(g.cpu_seconds for g in games), 3), flags=flags)


def game_flags(g: p.FairPlayGame) -> list[p.FairPlayFlag]:
    """One game's own flags: scouting, foresight, the stored line."""
    out = []
    use = StockUse(seen=g.stock_seen, size=g.stock_size, plays_while_drawing=g.plays_while_drawing,
                   draws=g.moves.count("S"), plays=len(g.moves) - g.moves.count("S"))
    base = dict(account=g.account, name=g.name, race=g.race, moves=g.moves)
    if (why := scouting_words(use, g.status, g.elapsed_ms)) is not None:
        out.append(p.FairPlayFlag(kind="scouting", why=why, statistic=g.stock_seen / g.stock_size,
                                  threshold=0.75, **base))  # type: ignore[arg-type]
    if g.public_deal:
        return out  # its line is public: knowing it is no foresight
    statistic = g.foresight - g.costly
    if statistic >= FORESIGHT_THRESHOLD:
        hits = [d for d in g.settled if d.foresight]
        out.append(p.FairPlayFlag(
            kind="foresight", statistic=statistic, threshold=FORESIGHT_THRESHOLD, decisions=g.settled,
            position=hits[0].position if hits else None, unseen=hits[0].unseen if hits else [],
            why=(f"left the natural move {g.deviations} times; the stock's true order settled {len(g.settled)} of "
                 f"those: {g.foresight} right, {g.costly} wrong (foresight {statistic}, flagged from "
                 f"{FORESIGHT_THRESHOLD}); {g.undos} undos"), **base))  # type: ignore[arg-type]
    if g.stored_line_share >= STORED_LINE_SHARE:
        out.append(p.FairPlayFlag(
            kind="stored_line", statistic=round(g.stored_line_share, 3), threshold=STORED_LINE_SHARE,
            why=(f"its moves begin with {g.stored_line_share:.0%} of the winning line the server stored for this "
                 f"deal (flagged from {STORED_LINE_SHARE:.0%})"), **base))  # type: ignore[arg-type]
    return out


def link_flags(games: list[p.FairPlayGame], facts: dict[str, AccountFacts], link_ms: int) -> list[p.FairPlayFlag]:
    """A flag for each account on the scope linked to another one on it."""
    names = {g.account: g.name for g in games if g.account}
    groups = linked_groups(list(facts.values()), link_ms)
    return [p.FairPlayFlag(kind="linked", account=account, name=names.get(account, account),
                           why=link_words(facts, account, others, link_ms), statistic=len(others), threshold=1,
                           linked=sorted(others))
            for account, others in sorted(groups.items())]
