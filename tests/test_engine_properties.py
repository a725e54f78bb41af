"""Property tests (hypothesis) over random deals and random legal play, for
several variants and two hand-made ones (face-down cards, three-card draws):
no card is ever lost or duplicated, undo restores the exact position, both
position forms round-trip, move notation round-trips, and the player view
never tells two games apart that differ only in the order of the stock.
"""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from enginekit import DRAW_THREE, FACE_DOWN, shuffled_game, snapshot, state
from shared.engine import Game
from shared.moves import Move
from shared.position import check_position
from shared.render import render_text
from shared.variants import VARIANTS, Variant

PLAYED = [VARIANTS[k] for k in ("forty-thieves", "sixty-thieves", "josephine", "forty-and-eight", "lucas", "maria")]
PLAYED += [FACE_DOWN, DRAW_THREE]

variants = st.sampled_from(PLAYED)
seeds = st.integers(0, 2**32 - 1)



def _plan(length: int, seed: int) -> list[int]:
    rng = random.Random(seed)
    return [rng.randrange(1000) for _ in range(length)]


# each action: a legal move (by index, foundation moves favoured), an undo, or a
# redo. Plans come from a seeded generator so that games run long (hypothesis
# keeps its own lists short) while a failure still shrinks on length and seed.
actions = st.builds(_plan, st.integers(1, 250), seeds)
EXAMPLES = settings(max_examples=100, deadline=None)


def start(variant: Variant, seed: int) -> Game:
    """A deal by number for registered variants, our own shuffle otherwise."""
    if variant.key in VARIANTS:
        return Game.new(variant, seed % 1_000_000 + 1)
    return shuffled_game(variant, random.Random(seed))


def act(game: Game, action: int) -> str:
    """Play one action; return what it was."""
    if action >= 960 and game.move_stack:
        game.pop()
        return "undo"
    if action >= 930 and game.redo_stack:
        game.redo()
        return "redo"
    moves = game.legal_moves()
    if not moves:
        return "none"
    home = [m for m in moves if m.dst == 102]
    pool = home if home and action % 3 == 0 else moves
    game.push(pool[action % len(pool)])
    return "move"


def full_round_trips(game: Game) -> None:
    if game.variant.key not in VARIANTS:
        return
    text, data = game.position(), game.to_bytes()
    back = Game.from_position(text)
    assert back.position() == text and back.to_bytes() == data
    assert Game.from_bytes(data).position() == text


@EXAMPLES
@given(variants, seeds, actions)
def test_random_play_never_loses_or_duplicates_a_card(variant: Variant, seed: int, plan: list[int]) -> None:
    game = start(variant, seed)
    check_position(game)
    for action in plan:
        act(game, action)
        check_position(game)
        assert game.cards_home == sum(game.foundations)
        assert all(h < len(col) or not col for col, h in zip(game.tableau, game.hidden))


def position_of(game: Game) -> tuple:
    """Text, bytes and state, history aside."""
    return snapshot(game)[:-1] + (state(game)[:6],)


@EXAMPLES
@given(variants, seeds, actions)
def test_undo_restores_the_exact_position_after_any_sequence(variant: Variant, seed: int, plan: list[int]) -> None:
    game = start(variant, seed)
    line = [position_of(game)]  # line[i]: the position after i moves of the current line
    for action in plan:
        kind = act(game, action)
        n = game.move_count
        if kind == "move":
            # a different move cuts the redo line off; replaying the move redo
            # would play keeps the rest of it
            future = len(game.redo_stack)
            if future:
                assert line[n] == position_of(game), "the kept redo line starts here"
            line[n:] = [position_of(game)] + line[n + 1 : n + 1 + future]
        assert line[n] == position_of(game), kind
    while game.move_stack:
        game.pop()
        assert line[game.move_count] == position_of(game)


@EXAMPLES
@given(variants, seeds, actions)
def test_undo_all_then_redo_all_returns_to_the_same_position(variant: Variant, seed: int, plan: list[int]) -> None:
    game = start(variant, seed)
    for action in plan:
        act(game, action % 930)  # moves only
    end, moves = state(game)[:6], game.move_stack[:]
    for _ in range(len(moves)):
        game.pop()
    assert state(game)[:6] == state(start(variant, seed))[:6]
    for _ in range(len(moves)):
        game.redo()
    assert state(game)[:6] == end and game.move_stack == moves


@EXAMPLES
@given(variants, seeds, actions)
def test_positions_and_moves_round_trip_throughout_play(variant: Variant, seed: int, plan: list[int]) -> None:
    game = start(variant, seed)
    for action in plan[:60]:
        full_round_trips(game)
        for move in game.legal_moves():
            assert Move.parse(move.text()) == move
        act(game, action)
    full_round_trips(game)


def hidden_parts(game: Game) -> tuple:
    view = game.view()
    return (view, sorted(view.to_dict().items(), key=str), view.text(), render_text(view))


@settings(max_examples=100, deadline=None)
@given(variants, seeds, actions, st.randoms(use_true_random=False))
def test_player_view_never_reveals_the_stock_order(
    variant: Variant, seed: int, plan: list[int], rng: random.Random
) -> None:
    game = start(variant, seed)
    for action in plan[:80]:
        act(game, action)
    twin = game.copy()
    rng.shuffle(twin.stock)  # the same game but for the order of the unseen stock
    assert hidden_parts(game) == hidden_parts(twin)
    # the pair stays indistinguishable through every move that draws nothing
    for action in plan[80:]:
        moves = [m for m in game.legal_moves() if m.src != 101]
        if not moves:
            break
        move = moves[action % len(moves)]
        game.push(move)
        twin.push(move)
        assert hidden_parts(game) == hidden_parts(twin)
