"""A rules engine rebuilt from a player view, for checks the client makes itself.

A racer's client never holds the stock's order, so it cannot play moves;
but whether a move between columns fits, and how many cards a group move
should carry, depends only on what the view shows. Face-down and stock
cards become placeholders: never look at them, only at their count.
"""

from __future__ import annotations

from shared.engine import Game
from shared.variants import get_variant
from shared.view import PlayerView

_PLACEHOLDER = 0


def shadow_game(view: PlayerView) -> Game:
    """A :class:`Game` with the view's visible cards, fit for ``reason()`` on visible moves."""
    tableau = [[_PLACEHOLDER if c is None else c for c in col] for col in view.tableau]
    hidden = [sum(1 for c in col if c is None) for col in view.tableau]
    return Game(
        get_variant(view.variant),
        tableau,
        [_PLACEHOLDER] * view.stock_count,
        list(view.waste),
        list(view.foundations),
        hidden,
        view.pass_number,
    )
