"""Property tests (hypothesis) over random deals and random legal play, for
several variants and two hand-made ones (face-down cards, three-card draws):
no card is ever lost or duplicated, undo restores the exact position, both
position forms round-trip, move notation round-trips, the player view
never tells two games apart that differ only in the order of the stock, and
what the engine remembers between moves (its status, its last wire board)
always equals a fresh computation, whatever the moves, undos and redos.
"""

from __future__ import annotations

import random

from dataclasses import replace

import msgpack
from hypothesis import given, settings
from hypothesis import strategies as st

from enginekit import DRAW_THREE, FACE_DOWN, relevant_moves, shuffled_game, snapshot, state
from shared import protocol as p
from shared.engine import Game, Status
from shared.moves import Move
from shared.position import check_position
from shared.render import render_text
from shared.variants import VARIANTS, Variant
from shared.view import player_view

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


# ------------------------------------------- remembered between moves
def rebuilt(game: Game) -> Game:
    """The same position in a new Game: nothing remembered, nothing shared."""
    return Game(game.variant, game.tableau, game.stock_in_draw_order(), game.waste, game.foundations,
                game.hidden, game.pass_number)


def fresh_status(game: Game) -> Status:
    """The status read off the rules, from a full legal-move generation (which nothing remembers)."""
    if sum(game.foundations) == game.variant.total_cards:
        return Status.WON
    return Status.PLAYING if game.legal_moves() else Status.BLOCKED


def fresh_wire_view(game: Game) -> p.View:
    """Today's way to the wire board, from a game that remembers nothing."""
    return p.View.from_player_view(replace(player_view(rebuilt(game)), move_count=game.move_count))


def assert_remembered_is_fresh(game: Game) -> None:
    assert game.status() is fresh_status(game) is rebuilt(game).status()
    ours, fresh = p.View.of_game(game), fresh_wire_view(game)
    assert ours == fresh
    assert p.encode(ours) == p.encode(fresh)
    assert msgpack.unpackb(p.encode(ours)) == msgpack.unpackb(p.encode(fresh))


@EXAMPLES
@given(variants, seeds, actions)
def test_remembered_status_and_wire_view_equal_a_fresh_computation(variant: Variant, seed: int, plan: list[int]) -> None:
    game = start(variant, seed)
    assert_remembered_is_fresh(game)
    for action in plan:
        act(game, action)
        if action % 4:  # some positions unasked, so the memo also catches up over several moves or undos
            assert_remembered_is_fresh(game)
    assert_remembered_is_fresh(game)


@EXAMPLES
@given(variants, seeds, actions)
def test_play_checked_is_reason_then_push(variant: Variant, seed: int, plan: list[int]) -> None:
    """Over every kind of move the notation writes, legal or not: one answer, and the same game as push."""
    game = start(variant, seed)
    for action in plan[:120]:
        universe = relevant_moves(game)
        move = universe[(action * 7919) % len(universe)] if action % 2 else None
        if move is None:
            act(game, action)
            continue
        twin, before = game.copy(), snapshot(game)
        why = game.play_checked(move)
        assert why is twin.reason(move)
        if why is None:
            twin.push(move)
            assert snapshot(game) == snapshot(twin)
        else:
            assert snapshot(game) == before
        assert_remembered_is_fresh(game)


@EXAMPLES
@given(variants, seeds, actions)
def test_a_wire_view_handed_out_never_changes_afterwards(variant: Variant, seed: int, plan: list[int]) -> None:
    game = start(variant, seed)
    copies = [game.copy()]
    sent = [(p.View.of_game(game), p.encode(p.View.of_game(game)))]
    for action in plan:
        act(game, action)
        view = p.View.of_game(game)
        sent.append((view, p.encode(view)))
        if action % 50 == 0:
            copies.append(game.copy())  # a copy remembers its own board from now on
            act(copies[-1], action + 1)
            assert_remembered_is_fresh(copies[-1])
    assert all(p.encode(view) == frame for view, frame in sent)
    assert_remembered_is_fresh(game)
