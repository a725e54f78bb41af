"""Scouting: an entrant on a shared deal who draws the stock into sight and does not play the deal.

On a deal many play at once (an event's round, the daily deal) the one hidden thing is the stock's
order, and every draw shows a card. A scout draws through most of the stock, at once and with next to no
other move, then gives up or stalls; a second account plays the deal knowing the order. A person drawing
at a human pace takes a few hundred milliseconds a card; a person playing the deal plays cards between
the draws. So a game is flagged when it saw at least ``SEEN_SHARE`` of the stock, did not win, and
either reached that point with at most ``MAX_PLAYS`` other moves (it drew ahead of playing) or, its moves
mostly draws (``DRAW_SHARE``), gave up sooner after the start than ``HUMAN_DRAW_MS`` a draw allows (a
quick bot that plays the deal draws too, but plays between the draws).
"""

from __future__ import annotations

from dataclasses import dataclass

from shared.engine import Game
from shared.moves import Move
from shared.variants import get_variant

SEEN_SHARE = 0.75
MAX_PLAYS = 6
"""Most moves other than draws before three quarters of the stock is in sight, for a scout."""
DRAW_SHARE = 0.8
"""The share of a game's moves that are draws, at least, for the time rule."""
HUMAN_DRAW_MS = 250
"""The fastest a person draws, a card (a key held down on a terminal is slower than this)."""


@dataclass(frozen=True)
class StockUse:
    seen: int
    size: int
    plays_while_drawing: int
    """Moves other than draws before ``SEEN_SHARE`` of the stock was in sight (-1: never reached)."""
    draws: int
    plays: int = 0
    """Moves other than draws, over the whole game."""


def stock_use(variant: str, deal: int, moves: list[str]) -> StockUse:
    """How far into the stock a game looked, and how much it played on the way (undos count as moves)."""
    game = Game.new(get_variant(variant), deal)
    size = len(game.stock)
    seen = 0  # cards drawn into sight: the most the first pass took off the stock (two decks: count, not set)
    plays, draws, at = 0, 0, -1
    for text in moves:
        if text == "U":
            game.pop()
            plays += 1
            continue
        move = Move.parse(text)
        if move.text() == "S":
            draws += 1
        else:
            plays += 1
        game.push(move)
        seen = size if game.pass_number > 1 else max(seen, size - len(game.stock))
        if at < 0 and size and seen >= SEEN_SHARE * size:
            at = plays
    return StockUse(seen=seen, size=size, plays_while_drawing=at, draws=draws, plays=plays)


def scouting_words(use: StockUse, status: str, elapsed_ms: int | None) -> str | None:
    """Why the game looks like a scout's (None: it does not)."""
    if status == "finished" or not use.size or use.seen < SEEN_SHARE * use.size:
        return None
    if 0 <= use.plays_while_drawing <= MAX_PLAYS:
        return (f"saw {use.seen} of {use.size} stock cards with {use.plays_while_drawing} other moves on the way "
                f"(a scout: at most {MAX_PLAYS}), then {'gave up' if status == 'gave_up' else 'stopped'} without "
                "winning")
    moves = use.draws + max(0, use.plays)
    if (status == "gave_up" and elapsed_ms is not None and use.draws >= DRAW_SHARE * moves
            and elapsed_ms < use.draws * HUMAN_DRAW_MS):
        return (f"drew {use.draws} cards and gave up {elapsed_ms} ms after the start: faster than a person "
                f"({HUMAN_DRAW_MS} ms a draw at least)")
    return None
