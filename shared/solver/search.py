"""Complete search with a transposition table over the solver's board.

Two orders over the same moves and cuts: depth first (little memory; finds
quick wins in milliseconds and all of the rare proofs) and best first
(expands the most promising open position; finds wins that a bad early
choice hides from depth first). ``solve`` runs them as a portfolio.

Completeness: every position reachable from the start (up to the canonical
key's symmetries) is expanded at most once and, unless a budget stops the
search, at least once. A won position anywhere in that graph is therefore
found, and an exhausted graph proves the deal unwinnable. The only cuts are
sound ones (``docs/solver.md`` argues each):

- provably safe foundation moves are played at once and never branched on;
- moves that give a position equal to a sibling's are not generated: a lone
  card into an empty column, a second empty column as target, and moving
  again the card (or run) the previous move placed when that move sent
  nothing home (the result is one move away from the grandparent, which
  generates it itself);
- a position already in the table is not expanded again;
- a position the dead-end test (``deadlock.dead``, a relaxation of the game
  that is lost whenever the game is) proves lost is not expanded.

``solve`` runs a portfolio (:data:`PORTFOLIO`): short depth-first searches
that do not expand positions with more than a set number of waste cards,
each with its own cap (they can only win, or prove a loss when the cap
never bit), then the complete best-first and depth-first searches.

Both searches also exist compiled (:mod:`.fast`, ``_fastsearch.c``): the
same moves, order and cuts, node for node, at 10-60 times the speed. They
are used whenever the C extension was built; the Python code here is the
reference the compiled code is tested against, and the fallback.

A budget (nodes or seconds) that runs out makes the answer ``unknown``:
the search never reports a position as lost because it was cut short.
"""

from __future__ import annotations

import enum
import time
from dataclasses import dataclass, field
from heapq import heappop, heappush
from typing import Any, Callable, Literal, NamedTuple

from ..engine import Game
from ..moves import MAX_COLUMNS, STOCK, Move
from ..variants import Variant
from . import fast
from .board import Board, exposed_by, take_back
from .deadlock import dead


class Verdict(enum.Enum):
    WON = "won"
    UNWINNABLE = "unwinnable"
    UNKNOWN = "unknown"


@dataclass
class SolveResult:
    """The answer, the winning line when there is one, and the effort spent."""

    verdict: Verdict
    moves: list[Move] = field(default_factory=list)
    nodes: int = 0
    seconds: float = 0.0
    stopped_by: str | None = None
    """``"time"`` or ``"nodes"`` when a budget ran out, ``"cap"`` when a waste cap
    (:class:`Phase`) left positions unexpanded, ``"memory"`` when the compiled
    search could not grow its table, else ``None``."""
    best_home: int = 0
    """Most cards on the foundations seen in any searched position."""
    stored: int = 0
    """Distinct positions in the transposition table (``nodes`` also counts repeats)."""

    @property
    def nodes_per_second(self) -> float:
        return self.nodes / self.seconds if self.seconds > 0 else 0.0

    def move_texts(self) -> list[str]:
        return [m.text() for m in self.moves]


@dataclass(frozen=True)
class Progress:
    """What a progress callback is told every ``progress_every`` nodes."""

    nodes: int
    seconds: float
    depth: int
    """Depth-first: the current line's length; best-first: open positions."""
    best_home: int
    total: int


ProgressCallback = Callable[[Progress], None]

_CHECK_EVERY = 1024


class _Budget:
    """The limits and progress reports both searches share, looked at every
    ``_CHECK_EVERY`` nodes (reading the clock on every node would cost more
    than the node)."""

    def __init__(
        self,
        start: float,
        deadline: float | None,
        max_nodes: int,
        progress: ProgressCallback | None,
        progress_every: int,
        clock: Callable[[], float],
        total: int,
    ) -> None:
        self.start, self.deadline, self.max_nodes = start, deadline, max_nodes
        self.progress, self.progress_every, self.clock, self.total = progress, progress_every, clock, total
        self.next_progress = progress_every if progress is not None else -1

    def stop_reason(self, nodes: int, frontier: int, best: int) -> str | None:
        """``"time"`` or ``"nodes"`` when a limit is reached; reports progress when due."""
        now = self.clock()
        if self.deadline is not None and now >= self.deadline:
            return "time"
        if 0 <= self.max_nodes <= nodes:
            return "nodes"
        if 0 <= self.next_progress <= nodes:
            self.next_progress = nodes + self.progress_every
            assert self.progress is not None
            self.progress(Progress(nodes, now - self.start, frontier, best, self.total))
        return None


class _Frame:
    __slots__ = ("move", "rec", "autos", "moves", "i")

    def __init__(self, move: Move | None, rec: tuple[Any, ...] | None, autos: list[tuple[Move, tuple[Any, ...]]],
                 moves: list[Move]) -> None:
        self.move = move
        self.rec = rec
        self.autos = autos
        self.moves = moves
        self.i = 0


Strategy = Literal["portfolio", "depth-first", "best-first"]


class Phase(NamedTuple):
    """One search of the portfolio: its order, its share of the budget, and
    for depth first an optional cap on the waste (a fraction of the variant's
    stock) beyond which positions are not expanded."""

    strategy: Literal["depth-first", "best-first"]
    share: float
    waste_cap: float | None = None


PORTFOLIO: tuple[Phase, ...] = (
    Phase("depth-first", 0.08, 0.5),
    Phase("depth-first", 0.05, 0.3),
    Phase("depth-first", 0.04, 0.4),
    Phase("depth-first", 0.04, 0.35),
    Phase("depth-first", 0.03, 0.32),
    Phase("depth-first", 0.03, 0.45),
    Phase("depth-first", 0.02, 0.37),
    Phase("depth-first", 0.02, 0.42),
    Phase("depth-first", 0.02, 0.47),
    Phase("best-first", 0.05),
    Phase("depth-first", 0.62),
)
"""The default portfolio (solver v5), measured on Forty Thieves deals 1-100 (docs/solver.md).

Why waste caps: winning lines seldom hold more than half the stock in the
waste (Forty Thieves wins measured: 23-35 of 64), while an unrestricted
depth-first search sinks its time into end positions with 40+ waste cards,
none of which it can win. A capped search is incomplete, so it can only
win (or prove the deal lost when the cap never bit). Why so many caps: each
cap cuts the tree differently, so each finds its own wins, mostly within a
fraction of a second; on the Forty Thieves deals 1-100 that the v4
portfolio left undecided, caps of 20 to 30 of the 64 stock cards each won
one to five deals that the others did not. The complete searches come
last: best first, then depth first with whatever time is left, which is
where proofs of unwinnability come from."""

LARGE_STOCK_PORTFOLIO: tuple[Phase, ...] = (
    *(p for p in PORTFOLIO if p.waste_cap is not None),
    Phase("depth-first", 0.03, 0.2),
    Phase("depth-first", 0.03, 0.25),
    Phase("best-first", 0.05),
    Phase("depth-first", 0.56),
)
"""The portfolio for variants with a stock of more than 64 cards (Sixty Thieves' 96,
Eighty Thieves' 128): two lower caps as well. On the 74 Sixty Thieves deals of 1-100
that the default portfolio leaves undecided at 10 s, a cap of 20% of the stock (19
cards) won 4 in 0.01-0.36 s and 25% won 2, while 55-70% won none; on Forty Thieves
such caps won nothing (docs/solver.md)."""


def portfolio_for(variant: Variant) -> tuple[Phase, ...]:
    """The searches ``solve`` runs for ``variant`` (see :data:`PORTFOLIO`)."""
    return LARGE_STOCK_PORTFOLIO if variant.stock_size > 64 else PORTFOLIO



def solve(
    game: Game,
    *,
    time_limit: float | None = 10.0,
    node_limit: int | None = None,
    progress: ProgressCallback | None = None,
    progress_every: int = 50_000,
    clock: Callable[[], float] = time.perf_counter,
    strategy: Strategy = "portfolio",
    compiled: bool = True,
) -> SolveResult:
    """Search ``game``'s position (the stock order included) for a win.

    ``game`` is not changed. ``time_limit`` and ``node_limit`` are budgets;
    ``None`` means no limit of that kind. ``clock`` is injectable so that
    callers and tests decide what time is. ``strategy``: ``depth-first``
    (least memory), ``best-first`` (keeps every open position: more memory),
    or ``portfolio`` (the searches of :func:`portfolio_for` the variant one after the other,
    each with its share of the budget; without any budget it is depth first
    alone). Each is complete: an exhausted search is a proof.
    ``compiled`` lets both searches run compiled (:mod:`.fast`) when the C
    extension is built: the same searches, node for node, many times faster.
    """
    start = clock()
    deadline = start + time_limit if time_limit is not None else None
    max_nodes = node_limit if node_limit is not None else -1
    if strategy == "best-first":
        return _best_first(game, deadline, max_nodes, progress, progress_every, clock, compiled=compiled)
    if strategy == "depth-first" or (deadline is None and max_nodes < 0):
        return _depth_first(game, deadline, max_nodes, progress, progress_every, clock, compiled=compiled)
    if strategy != "portfolio":
        raise ValueError(f"unknown strategy {strategy!r}")
    total = SolveResult(Verdict.UNKNOWN)
    share = 0.0
    phases = portfolio_for(game.variant)
    for phase in phases:
        share += phase.share
        last = phase is phases[-1]
        d = deadline if last or time_limit is None else start + time_limit * share
        # A search whose share the ones before already used up is skipped (each runs
        # at least one check interval, so many small shares of a small budget overrun).
        n = -1
        if max_nodes >= 0:
            n = (max_nodes if last else int(max_nodes * share)) - total.nodes
            if n <= 0 and not last:
                continue
            n = max(1, n)
        if d is not None and not last and clock() >= d:
            continue
        on = progress
        if progress is not None:
            done = total

            def on(p: Progress, done: SolveResult = done) -> None:
                # Report each search as a continuation of the ones before.
                progress(Progress(p.nodes + done.nodes, p.seconds + done.seconds, p.depth,
                                  max(p.best_home, done.best_home), p.total))

        if phase.strategy == "best-first":
            part = _best_first(game, d, n, on, progress_every, clock, compiled=compiled)
        else:
            cap = None if phase.waste_cap is None else int(phase.waste_cap * game.variant.stock_size)
            part = _depth_first(
                game, d, n, on, progress_every, clock, max_waste=cap, prune_dead=cap is None, compiled=compiled
            )
        part.nodes += total.nodes
        part.best_home = max(part.best_home, total.best_home)
        part.stored = max(part.stored, total.stored)
        part.seconds = clock() - start
        total = part
        if part.verdict is not Verdict.UNKNOWN:
            break
    return total


def _restriction(move: Move, sent_home: bool) -> tuple[tuple[int, int] | None, bool]:
    """The cuts that follow ``move`` (module docstring): the unit it placed,
    which the next move may not move again, and whether only waste moves and
    draws follow. Neither applies after a move that sent cards home.

    After a draw (or redeal) that sent nothing home, a column move commutes
    with it: it was legal before and gives the same position played first,
    so only waste moves and draws follow."""
    dst = move[1]
    if sent_home:
        return None, False
    if dst < MAX_COLUMNS:
        return (dst, move[2]), False
    return None, move[0] == STOCK or dst == STOCK


def _compiled(
    board: Board, strategy: Literal["depth-first", "best-first"], max_waste: int | None, prune_dead: bool, budget: _Budget
) -> SolveResult | None:
    """The compiled search (:mod:`.fast`), or None when it is not built or the
    position is too large for the compiled board: the Python search then runs."""
    if not fast.available():
        return None
    try:
        verdict, line, nodes, best, stored, stopped = fast.search(board, strategy, max_waste, prune_dead, budget.stop_reason)
    except OverflowError:
        return None
    return SolveResult(Verdict(verdict), line, nodes, budget.clock() - budget.start, stopped, best, stored)


def _best_first(
    game: Game,
    deadline: float | None,
    max_nodes: int,
    progress: ProgressCallback | None,
    progress_every: int,
    clock: Callable[[], float],
    compiled: bool = True,
) -> SolveResult:
    """The complete search in another order: always expand the open position
    that :meth:`Board.score` likes best. Same moves and cuts as depth first
    (each open position keeps the restriction of the move that reached it),
    so it reaches the same positions; it only needs a snapshot per open one.
    ``compiled`` runs the same search in C when it is built (:mod:`.fast`)."""
    start = clock()
    board = Board(game)
    budget = _Budget(start, deadline, max_nodes, progress, progress_every, clock, board.total)
    if compiled and (done := _compiled(board, "best-first", None, True, budget)) is not None:
        return done
    root_autos = board.play_safe()
    best = board.nhome
    total = board.total
    if board.won():
        return SolveResult(Verdict.WON, [m for m, _ in root_autos], 1, clock() - start, None, best, 1)
    if dead(board):
        return SolveResult(Verdict.UNWINNABLE, [], 1, clock() - start, None, best, 1)
    seen = {board.key()}
    parents: list[tuple[int, tuple[Move, ...]]] = [(-1, tuple(m for m, _ in root_autos))]
    heap: list[tuple[Any, ...]] = [(-board.score(), 0, 0, board.snapshot(), None, False)]
    counter = 0
    nodes = 1
    next_check = _CHECK_EVERY
    play, play_safe, key = board.play, board.play_safe, board.key
    stopped: str | None = None
    while heap and stopped is None:
        _, _, idx, snap, blk, waste_only = heappop(heap)
        board.restore(snap)
        for move in board.moves(waste_only):
            if blk is not None and move[0] == blk[0] and move[2] == blk[1]:
                continue
            rec = play(move)
            autos = play_safe(exposed_by(move))
            nodes += 1
            home = board.nhome
            if home > best:
                best = home
                if home == total:
                    line = [move, *(m for m, _ in autos)]
                    i = idx
                    while i >= 0:
                        i, ms = parents[i][0], parents[i][1]
                        line[:0] = ms
                    return SolveResult(Verdict.WON, line, nodes, clock() - start, None, best, len(seen))
            k = key()
            if k not in seen:
                seen.add(k)
                if dead(board):
                    take_back(board, rec, autos)
                    continue
                parents.append((idx, (move, *(m for m, _ in autos))))
                counter += 1
                heappush(heap, (-board.score(), -counter, len(parents) - 1, board.snapshot(),
                                *_restriction(move, bool(autos))))
            take_back(board, rec, autos)
            if nodes >= next_check:
                next_check = nodes + _CHECK_EVERY
                stopped = budget.stop_reason(nodes, len(heap), best)
                if stopped is not None:
                    break
    seconds = clock() - start
    if stopped is not None:
        return SolveResult(Verdict.UNKNOWN, [], nodes, seconds, stopped, best, len(seen))
    return SolveResult(Verdict.UNWINNABLE, [], nodes, seconds, None, best, len(seen))


def _depth_first(
    game: Game,
    deadline: float | None,
    max_nodes: int,
    progress: ProgressCallback | None,
    progress_every: int,
    clock: Callable[[], float],
    max_waste: int | None = None,
    prune_dead: bool = True,
    compiled: bool = True,
) -> SolveResult:
    """The complete search: depth first, moves in the board's order.

    ``max_waste`` leaves positions with more waste cards unexpanded (then
    the search can only win, or prove a loss if the cap never bit).
    ``prune_dead=False`` skips the dead-end test below the root: it halves
    the speed, which a capped search that only hunts for quick wins cannot
    afford (measured: the same wins, faster). ``compiled`` runs the same
    search in C when it is built (:mod:`.fast`)."""
    start = clock()
    board = Board(game)
    budget = _Budget(start, deadline, max_nodes, progress, progress_every, clock, board.total)
    if compiled and (done := _compiled(board, "depth-first", max_waste, prune_dead, budget)) is not None:
        return done
    seen: set[bytes] = set()
    root_autos = board.play_safe()
    best = board.nhome
    total = board.total
    nodes = 1
    if board.won():
        return SolveResult(Verdict.WON, [m for m, _ in root_autos], nodes, clock() - start, None, best)
    if dead(board):
        return SolveResult(Verdict.UNWINNABLE, [], nodes, clock() - start, None, best, 1)
    seen.add(board.key())
    stack = [_Frame(None, None, root_autos, board.moves())]
    # The unit the previous move placed: (column, count) or None (see module docstring).
    block: list[tuple[int, int] | None] = [None]
    next_check = _CHECK_EVERY
    play, play_safe, key, gen = board.play, board.play_safe, board.key, board.moves
    add_seen = seen.add
    capped = False
    stopped: str | None = None
    while stack:
        frame = stack[-1]
        moves = frame.moves
        if frame.i >= len(moves):
            stack.pop()
            block.pop()
            take_back(board, frame.rec, frame.autos)
            continue
        move = moves[frame.i]
        frame.i += 1
        b = block[-1]
        if b is not None and move[0] == b[0] and move[2] == b[1]:
            continue
        rec = play(move)
        autos = play_safe(exposed_by(move))
        nodes += 1
        home = board.nhome
        if home > best:
            best = home
            if home == total:
                line = [m for m, _ in root_autos]
                for f in stack[1:]:
                    if f.move is not None:  # only the root frame has none
                        line.append(f.move)
                    line.extend(m for m, _ in f.autos)
                line.append(move)
                line.extend(m for m, _ in autos)
                return SolveResult(Verdict.WON, line, nodes, clock() - start, None, best, len(seen))
        k = key()
        expand = k not in seen
        if expand:
            add_seen(k)
            if max_waste is not None and len(board.waste) > max_waste:
                capped = True
                expand = False
            elif prune_dead and dead(board):
                expand = False
        if not expand:
            take_back(board, rec, autos)
            continue
        blk, waste_only = _restriction(move, bool(autos))
        stack.append(_Frame(move, rec, autos, gen(waste_only)))
        block.append(blk)
        if nodes >= next_check:
            next_check = nodes + _CHECK_EVERY
            stopped = budget.stop_reason(nodes, len(stack), best)
            if stopped is not None:
                break
    seconds = clock() - start
    if stopped is not None or capped:
        return SolveResult(Verdict.UNKNOWN, [], nodes, seconds, stopped or "cap", best, len(seen))
    return SolveResult(Verdict.UNWINNABLE, [], nodes, seconds, None, best, len(seen))


__all__ = ["solve", "Phase", "PORTFOLIO", "LARGE_STOCK_PORTFOLIO", "portfolio_for", "SolveResult", "Verdict", "Progress", "ProgressCallback", "Strategy"]
