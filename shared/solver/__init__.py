"""A complete solver for the Forty Thieves family (it sees the stock).

``solve(game, time_limit=..., node_limit=...)`` answers ``won`` with a
winning line in the move notation, ``unwinnable`` when the whole reachable
position graph was searched, or ``unknown`` when a budget ran out first.
Pure: no I/O and no threads; the clock is a parameter.

Modules: ``board`` (the search's compact position, its moves and canonical
key), ``deadlock`` (a sound dead-end test by relaxation), ``search``
(depth-first and best-first search with a transposition table, and the
portfolio of both), ``fast`` (the same two searches compiled, when the C
extension is built), ``stats`` (Wilson intervals, percentiles).
``docs/solver.md`` explains the techniques and why each cut is sound.
"""

from __future__ import annotations

from typing import Any

from ..engine import Game
from ..variants import Variant
from .board import UnsupportedPosition
from .search import PORTFOLIO, Phase, Progress, ProgressCallback, SolveResult, Strategy, Verdict, solve
from .stats import percentile, wilson_interval

SOLVER_VERSION = 5
"""Bumped when a change could alter verdicts or lines; pool files record it."""


def solve_deal(variant: Variant, number: int, **budget: Any) -> SolveResult:
    """Solve deal ``number`` of ``variant`` from its start (see :func:`solve` for the budget)."""
    return solve(Game.new(variant, number), **budget)


__all__ = [
    "solve",
    "solve_deal",
    "SolveResult",
    "Strategy",
    "PORTFOLIO",
    "Phase",
    "Verdict",
    "Progress",
    "ProgressCallback",
    "UnsupportedPosition",
    "wilson_interval",
    "percentile",
    "SOLVER_VERSION",
]
