"""The compiled searches, when the C extension was built.

``_fastsearch.c`` holds the depth-first and best-first searches of
:mod:`.search` over the same board, compiled: same moves, order, cuts and
dead-end test, so the same positions in the same order (the tests compare
node counts and lines), at many times the speed. It is built at install
time when a C compiler is present and left out otherwise (``optional`` in
``setup.py``); :func:`available` says which, and the pure-Python search is
used when it is missing.
"""

from __future__ import annotations

from functools import lru_cache
from types import ModuleType
from typing import Callable, Literal

from ..moves import Move
from ..variants import GroupMoves
from .board import Board, Rules

_fastsearch: ModuleType | None
try:
    import shared.solver._fastsearch as _fastsearch
except ImportError:  # built without a C compiler: the Python search stands in
    _fastsearch = None

_STRATEGY_CODES = {"depth-first": 0, "best-first": 1}
_GROUP_CODES = {GroupMoves.NONE: 0, GroupMoves.SAME_SUIT_RUN: 1, GroupMoves.VALID_RUN: 2}

Check = Callable[[int, int, int], "str | None"]
"""Called every 1,024 nodes with (nodes, depth, best home); a string stops the search."""


@lru_cache(maxsize=None)
def _tables(rules: Rules) -> tuple[list[bytes], list[bytes]]:
    """The packing and safe-move tables in the extension's form, once per variant
    (a hint or a portfolio calls the search many times with the same rules)."""
    return [bytes(p) for p in rules.parents], [bytes(n) for n in rules.needs_home]


def available() -> bool:
    """Whether the compiled searches were built for this interpreter."""
    return _fastsearch is not None


def search(
    board: Board, strategy: Literal["depth-first", "best-first"], max_waste: int | None, prune_dead: bool, check: Check
) -> tuple[str, list[Move], int, int, int, str | None]:
    """Run a compiled search from ``board`` (which is not changed).

    ``max_waste`` and ``prune_dead`` are depth first's (best first always
    runs the dead-end test and has no cap).

    Returns ``(verdict, line, nodes, best_home, stored, stopped_by)`` with
    ``verdict`` one of ``"won"``, ``"unwinnable"``, ``"unknown"``, exactly as
    the Python search would. Raises ``OverflowError`` for a position larger
    than the compiled board holds (more than 20 columns, a column over 50
    cards, a stock or waste over 128); callers fall back to Python then.
    """
    if _fastsearch is None:
        raise RuntimeError("the compiled search is not built")
    rules = board.rules
    parents, needs = _tables(rules)
    code, line, nodes, best, stored, stopped = _fastsearch.search(
        strategy=_STRATEGY_CODES[strategy],
        cols=list(board.cols),
        stock=bytes(board.stock),
        si=board.si,
        waste=bytes(board.waste),
        pass_no=board.pass_no,
        home=bytes(board.home),
        packs=rules.packs,
        parents=parents,
        needs=needs,
        empty_any=rules.empty_any,
        empty_kings=rules.empty_kings,
        group=_GROUP_CODES[rules.group],
        draw=rules.draw,
        passes=rules.passes,
        total=board.total,
        max_waste=-1 if max_waste is None else max_waste,
        prune_dead=prune_dead,
        check=check,
    )
    verdict = ("won", "unwinnable", "unknown")[code]
    return verdict, [Move(*m) for m in line], nodes, best, stored, stopped


__all__ = ["available", "search", "Check"]
