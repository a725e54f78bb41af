"""Hints: a move from a winning line, on the authoritative game, within a budget."""

from __future__ import annotations

import json

import pytest

from shared.cards import parse_cards
from shared.engine import Game
from shared.hints import Hint, game_from_view, hint, suggest_move
from shared.solver import Verdict
from shared.variants import FORTY_THIEVES
from test_solver import lost_position


def test_following_the_hints_wins_the_deal() -> None:
    game = Game.new(FORTY_THIEVES, 2)
    h = None
    for _ in range(400):
        if game.is_won():
            break
        h = hint(game, time_budget=None, node_budget=20_000, previous=h)
        assert h.from_winning_line and h.line_length >= 1
        game.push(h.move)  # raises if the hint were illegal
    assert game.is_won()
    assert suggest_move(game) is None


def test_a_player_who_leaves_the_line_gets_a_fresh_one() -> None:
    game = Game.new(FORTY_THIEVES, 2)
    first = hint(game, time_budget=None, node_budget=20_000)
    game.push(first.move)
    assert hint(game, previous=first).line == first.line[1:]
    game.pop()
    other = next(m for m in game.legal_moves() if m != first.move)
    game.push(other)
    again = hint(game, time_budget=None, node_budget=50_000, previous=first)
    assert again.start is not None and again.start.same_position(game)


def test_a_hint_leaves_the_game_untouched() -> None:
    game = Game.new(FORTY_THIEVES, 2)
    game.push_text("S")
    before, history = game.position(), list(game.move_stack)
    assert suggest_move(game, time_budget=1.0) is not None
    assert game.position() == before and game.move_stack == history


def test_a_lost_position_still_gets_a_legal_move_marked_unwinnable() -> None:
    game = lost_position()
    h = hint(game, time_budget=None, node_budget=100_000)
    assert h.verdict is Verdict.UNWINNABLE and not h.from_winning_line
    assert h.move is not None and game.is_legal(h.move)


def test_an_exhausted_budget_says_unknown_and_offers_a_legal_move() -> None:
    game = Game.new(FORTY_THIEVES, 1)
    h = hint(game, time_budget=None, node_budget=2000)
    assert h.verdict is Verdict.UNKNOWN and not h.from_winning_line
    assert game.is_legal(h.move)


def test_a_blocked_position_has_no_hint() -> None:
    # Stock and waste empty, every column topped by a card with nowhere to go.
    tab = [parse_cards(t) for t in ("2hKh", "2hKh", "3hJh", "3hJh", "4h9h", "4h9h", "6h7h", "6h7h",
                                    "8hThQh5h", "8hThQh5h")]
    game = Game(FORTY_THIEVES, tab, (), (), (13, 13, 1, 13, 13, 13, 1, 13))
    assert game.legal_moves() == []
    h = hint(game, time_budget=1.0)
    assert h.move is None and h.verdict is Verdict.UNWINNABLE


def test_the_view_plus_the_stock_is_the_whole_game() -> None:
    game = Game.new(FORTY_THIEVES, 2)
    for text in ("S", "S", "S"):
        game.push_text(text)
    rebuilt = game_from_view(game.view(), game.stock_in_draw_order())
    assert rebuilt.same_position(game)
    assert hint(rebuilt, time_budget=None, node_budget=20_000).move == hint(
        game, time_budget=None, node_budget=20_000
    ).move


def test_a_stored_hint_round_trips_and_still_continues_its_line() -> None:
    game = Game.new(FORTY_THIEVES, 2)
    first = hint(game, time_budget=None, node_budget=20_000)
    stored = Hint.from_json(json.loads(json.dumps(first.to_json())))
    assert stored == first and stored.start is not None and stored.start.same_position(game)
    game.push(first.move)
    assert hint(game, previous=stored).line == first.line[1:]
    with pytest.raises(ValueError):
        Hint.from_json({"move": "S"})
    with pytest.raises(ValueError):
        Hint.from_json({"move": "S", "verdict": "maybe", "line": [], "start": None})
