"""Hints: a move from a winning line, for a player's current position.

The server holds the authoritative :class:`~shared.engine.Game` (it knows
the stock), so a hint is a short solver run from that position: the first
move of the winning line it finds. Within a small budget the solver may not
find one; the hint then says so and offers the move the solver's ordering
likes best, which is legal but promises nothing (as the rule pages' hints
do). Races mark a player who took a hint as played with help; that is the
server's business, not this module's.

Pure: the clock is a parameter, nothing is read or written.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from .cards import Card
from .engine import Game
from .moves import Move
from .solver import SolveResult, Verdict, solve
from .solver.board import Board
from .variants import get_variant
from .view import PlayerView


@dataclass(frozen=True)
class Hint:
    """A suggested move and how much it is worth."""

    move: Move | None
    """``None`` only when the position has no legal move at all (or is won)."""
    verdict: Verdict
    """``WON``: ``move`` starts a winning line. ``UNWINNABLE``: no line exists
    from here. ``UNKNOWN``: the budget ran out before a line was found."""
    line: tuple[Move, ...] = ()
    """The whole winning line found (empty when none); ``move`` is its first."""
    start: Game | None = field(default=None, compare=False, repr=False)
    """A copy of the position the line starts from, so the next hint can follow it."""

    @property
    def line_length(self) -> int:
        return len(self.line)

    @property
    def from_winning_line(self) -> bool:
        return self.verdict is Verdict.WON and self.move is not None

    def to_json(self) -> dict[str, Any]:
        """Plain data a multi-process server can store between a player's hints."""
        return {
            "move": self.move.text() if self.move is not None else None,
            "verdict": self.verdict.value,
            "line": [m.text() for m in self.line],
            "start": self.start.position() if self.start is not None else None,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Hint":
        """The inverse of :meth:`to_json`; malformed data raises ``ValueError``."""
        try:
            move = Move.parse(data["move"]) if data["move"] is not None else None
            start = Game.from_position(data["start"]) if data["start"] is not None else None
            line = tuple(Move.parse(t) for t in data["line"])
            return cls(move, Verdict(data["verdict"]), line, start)
        except (KeyError, TypeError) as exc:
            raise ValueError(f"not a stored hint: {exc}") from None


def hint(
    game: Game,
    time_budget: float | None = 0.5,
    node_budget: int | None = None,
    clock: Callable[[], float] = time.perf_counter,
    previous: Hint | None = None,
) -> Hint:
    """The hint for ``game``'s current position; ``game`` is not changed.

    Pass the player's ``previous`` hint: when the game has followed its line
    so far, the next move of that same line comes back without a search.
    Without it, successive hints are each from *a* winning line, but not
    necessarily the same one, and a player who only ever follows hints could
    be led round in circles.
    """
    if game.is_won():
        return Hint(None, Verdict.WON)
    if previous is not None:
        follow = _continue_line(game, previous)
        if follow is not None:
            return follow
    result: SolveResult = solve(game, time_limit=time_budget, node_limit=node_budget, clock=clock)
    if result.verdict is Verdict.WON and result.moves:
        return Hint(result.moves[0], Verdict.WON, tuple(result.moves), game.copy(history=False))
    return Hint(_best_looking_move(game), result.verdict)


def _continue_line(game: Game, previous: Hint) -> Hint | None:
    """The rest of ``previous``'s line if ``game`` stands somewhere along it."""
    if previous.start is None or not previous.line or previous.start.variant != game.variant:
        return None
    walk = previous.start.copy(history=False)
    for k, move in enumerate(previous.line):
        if walk.same_position(game):
            rest = previous.line[k:]
            return Hint(rest[0], Verdict.WON, rest, walk)
        walk.push(move)
    return None


def suggest_move(game: Game, time_budget: float = 0.5) -> Move | None:
    """A move from a winning line when one is found in ``time_budget`` seconds,
    else the best-looking legal move; ``None`` when no move is legal.

    For a run of hints in one game keep the :class:`Hint` from :func:`hint`
    and pass it back as ``previous`` instead: that follows one line."""
    return hint(game, time_budget).move


def _best_looking_move(game: Game) -> Move | None:
    """The solver's first choice of move (legal, no promise); falls back to the engine's list."""
    if not any(game.hidden):
        moves = Board(game).moves()
        if moves:
            return moves[0]
    legal = game.legal_moves()
    return legal[0] if legal else None


def game_from_view(view: PlayerView, stock: Sequence[Card]) -> Game:
    """Rebuild the full position from a player view plus the stock the server keeps.

    ``stock`` is in draw order (next card first). A view hides nothing but
    the stock in every variant of the family (no face-down cards), so the
    two together are the whole position; face-down cards are refused.
    """
    if any(c is None for col in view.tableau for c in col):
        raise ValueError("a view with face-down cards does not give the whole position")
    tableau = [[c for c in col if c is not None] for col in view.tableau]
    return Game(
        get_variant(view.variant),
        tableau,
        stock,
        view.waste,
        view.foundations,
        None,
        view.pass_number,
    )


__all__ = ["Hint", "hint", "suggest_move", "game_from_view"]
