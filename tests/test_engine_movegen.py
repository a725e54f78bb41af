"""``legal_moves()`` agrees with ``reason()``, and both agree with a naive
oracle written from the rules (``enginekit.naive_legal``), over many random
positions of every variant and of hand-made variants for the other dials.

For each position every syntactically possible move is tried (all
source/destination pairs and counted moves; columns past the game's last
are covered by one test of their own): each generated move must be legal,
each move not generated must be illegal with a reason, and the oracle must
give the same verdict as the engine.
"""

from __future__ import annotations

import pytest

from enginekit import (
    ANY_BUT_OWN,
    ANY_SUIT,
    DRAW_THREE,
    FACE_DOWN,
    KING_ONLY,
    NO_EMPTY,
    VALID_RUNS,
    iter_positions,
    naive_legal,
    relevant_moves,
    syntactic_moves,
)
from shared.engine import Game
from shared.moves import MAX_COLUMNS, IllegalReason, Move
from shared.variants import VARIANTS, Variant

ALL_VARIANTS = list(VARIANTS.values()) + [FACE_DOWN, KING_ONLY, NO_EMPTY, DRAW_THREE, VALID_RUNS, ANY_BUT_OWN, ANY_SUIT]
IDS = list(VARIANTS) + ["face-down", "king-only", "no-empty", "draw-three", "valid-runs", "any-but-own", "any-suit"]
POSITIONS_PER_VARIANT = 60


def check_generation(game: Game) -> tuple[int, int]:
    """Assert the three-way agreement for one position; return (legal, tried)."""
    generated = game.legal_moves()
    assert len(set(generated)) == len(generated), "duplicate moves generated"
    gen = set(generated)
    universe = relevant_moves(game)
    legal = 0
    for move in universe:
        why = game.reason(move)
        ours = naive_legal(game, move)
        assert (why is None) == ours, (game.position() if game.variant.key in VARIANTS else game.tableau, move, why)
        if move in gen:
            assert why is None, (move, why)
            legal += 1
        else:
            assert isinstance(why, IllegalReason), (move, "legal but not generated")
    assert legal == len(gen), "a generated move lies outside the move universe"
    assert game.has_legal_move() == (legal > 0)
    return legal, len(universe)


def without_stock(game: Game) -> Game:
    """The same cards with the stock turned onto the waste: where ``has_legal_move`` must look."""
    return Game(game.variant, game.tableau, (), game.waste + game.stock_in_draw_order(), game.foundations,
                game.hidden, game.pass_number)


@pytest.mark.parametrize("variant", ALL_VARIANTS, ids=IDS)
def test_generated_moves_are_exactly_the_legal_moves(variant: Variant) -> None:
    legal_total = 0
    for game in iter_positions([variant], seed=ALL_VARIANTS.index(variant), per_variant=POSITIONS_PER_VARIANT):
        legal, _ = check_generation(game)
        legal_total += legal
        check_generation(without_stock(game))
    assert legal_total > POSITIONS_PER_VARIANT  # the positions are not all dead ends


def test_group_moves_are_exercised_by_the_random_positions() -> None:
    """Guard against the property test passing vacuously for runs."""
    counted = 0
    for variant in (VARIANTS["josephine"], VALID_RUNS, ANY_SUIT):
        for game in iter_positions([variant], seed=3, per_variant=POSITIONS_PER_VARIANT):
            counted += sum(1 for m in game.legal_moves() if m.count > 1)
    assert counted >= 20


def test_columns_past_the_last_are_never_legal() -> None:
    moves = syntactic_moves(3)
    for game in iter_positions([VARIANTS["forty-thieves"], VARIANTS["maria"]], seed=5, per_variant=4):
        ncols = len(game.tableau)
        for move in moves:
            if ncols <= move.src < MAX_COLUMNS or ncols <= move.dst < MAX_COLUMNS:
                assert game.reason(move) is not None, move


def test_every_parseable_move_text_is_in_the_universe() -> None:
    """The universe the property test walks is every move the notation can write."""
    universe = set(syntactic_moves(13))
    letters = "abcdefghijklmnopqrstWSF"
    for a in letters:
        for b in letters:
            for prefix in ("", "2", "13"):
                try:
                    move = Move.parse(prefix + a + b)
                except ValueError:
                    continue
                assert move in universe, prefix + a + b
