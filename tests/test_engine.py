"""The Game object's contract: every typed reason, illegal moves that change
nothing, undo and redo, status, progress, copies."""

from __future__ import annotations

import random
from typing import Callable

import pytest

from enginekit import (
    FACE_DOWN,
    KING_ONLY,
    NO_EMPTY,
    VALID_RUNS,
    build,
    play_randomly,
    relevant_moves,
    shuffled_game,
    snapshot,
    state,
)
from shared.engine import Game, Status
from shared.moves import DRAW, FOUNDATION, REDEAL, STOCK, WASTE, IllegalMove, Move
from shared.moves import IllegalReason as R
from shared.variants import FORTY_AND_EIGHT, FORTY_THIEVES, JOSEPHINE, VARIANTS

WON = "forty-thieves 1 Kc,Kd,Kh,Ks,Kc,Kd,Kh,Ks -/-/-/-/-/-/-/-/-/- - -"

# One scenario per reason the engine gives: a position and a move it refuses.
SCENARIOS: dict[R, tuple[Callable[[], Game], Move]] = {
    R.NO_SUCH_COLUMN: (lambda: build(["9s"]), Move.parse("ka")),
    R.SOURCE_EMPTY: (lambda: build(["", "9s"]), Move.parse("ab")),
    R.SAME_COLUMN: (lambda: build(["9s"]), Move.parse("aa")),
    R.WRONG_SUIT: (lambda: build(["9s", "8c"]), Move.parse("ba")),
    R.NOT_ONE_RANK_LOWER: (lambda: build(["9s", "7s"]), Move.parse("ba")),
    R.EMPTY_COLUMN_KING_ONLY: (lambda: build(["", "Qs"], variant=KING_ONLY), Move.parse("ba")),
    R.EMPTY_COLUMN_CLOSED: (lambda: build(["", "Ks"], variant=NO_EMPTY), Move.parse("ba")),
    R.GROUP_MOVE_NOT_ALLOWED: (lambda: build(["Ts", "9s 8s"]), Move.parse("2ba")),
    R.NOT_A_RUN: (lambda: build(["Ts", "9s 8h"], variant=JOSEPHINE), Move.parse("2ba")),
    R.RUN_TOO_LONG: (lambda: build(["Ts", "9s 8s"], variant=JOSEPHINE), Move.parse("3ba")),
    R.FACE_DOWN: (lambda: build(["", "9h 8c 7d"], hidden=[0, 1], variant=VALID_RUNS), Move.parse("3ba")),
    R.FOUNDATION_NOT_READY: (lambda: build(["2s"]), Move.parse("aF")),
    R.FOUNDATION_CARDS_NEVER_MOVE: (lambda: build(["Kc"], found=["2s"]), Move.parse("Fa")),
    R.STOCK_EMPTY: (lambda: build(["Kc"], stock="-", rest_to=0), Move.parse("S")),
    R.STOCK_NOT_EMPTY: (lambda: build(["Kc"], waste="5d", variant=FORTY_AND_EIGHT), Move.parse("R")),
    R.NO_SECOND_PASS: (lambda: build(["Kc"], waste="5d", stock="-", rest_to=0), Move.parse("R")),
    R.STOCK_GOES_TO_WASTE: (lambda: build(["Kc"]), Move.parse("Sa")),
    R.NOT_A_TARGET: (lambda: build(["Kc"], waste="5d"), Move.parse("aW")),
    R.GAME_OVER: (lambda: Game.from_position(WON), Move.parse("S")),
}
SERVER_ONLY = {R.UNDO_NOT_ALLOWED}
"""Reasons the engine never gives: a race's rules (no undo) are the server's."""


@pytest.mark.parametrize("why", list(SCENARIOS), ids=[r.value for r in SCENARIOS])
def test_every_reason_is_reachable_and_push_changes_nothing(why: R) -> None:
    factory, move = SCENARIOS[why]
    game = factory()
    before = snapshot(game)
    assert game.reason(move) is why
    assert not game.is_legal(move) and move not in game
    with pytest.raises(IllegalMove) as info:
        game.push(move)
    assert info.value.reason is why and info.value.move == move
    assert move.text() in str(info.value) and why.explanation in str(info.value)
    assert snapshot(game) == before


def test_nothing_to_undo_and_nothing_to_redo() -> None:
    game = build(["9s", "8s"])
    before = snapshot(game)
    with pytest.raises(IllegalMove) as info:
        game.pop()
    assert info.value.reason is R.NOTHING_TO_UNDO and info.value.move is None
    with pytest.raises(IllegalMove) as info:
        game.redo()
    assert info.value.reason is R.NOTHING_TO_REDO
    assert snapshot(game) == before


def test_reasons_cover_the_whole_enum() -> None:
    covered = set(SCENARIOS) | {R.NOTHING_TO_UNDO, R.NOTHING_TO_REDO} | SERVER_ONLY
    assert covered == set(R)
    assert len({r.value for r in R}) == len(R)  # wire codes are unique
    assert all(r.explanation for r in R)


def test_no_such_column_for_every_letter_past_the_last_column() -> None:
    game = build(["9s", "8s"])
    for i in range(10, 20):
        for move in (Move(i, 0), Move(0, i), Move(i, FOUNDATION), Move(WASTE, i)):
            if move.src == WASTE:
                game.push(DRAW)
            assert game.reason(move) is R.NO_SUCH_COLUMN, move
            if move.src == WASTE:
                game.pop()


def test_malformed_counts_built_by_hand_are_refused_and_change_nothing() -> None:
    """A Move built in code (not parsed) may carry any count; the engine must
    still refuse what the notation cannot write rather than move the wrong cards."""
    for variant in (FORTY_THIEVES, JOSEPHINE):
        game = build(["9h 8h 7h", "", "9h"], waste="8h", variant=variant)
        before = snapshot(game)
        cases = {
            Move(0, 1, 0): R.NOT_A_RUN,
            Move(0, 1, -1): R.NOT_A_RUN,
            Move(WASTE, 2, 2): R.GROUP_MOVE_NOT_ALLOWED,
            Move(WASTE, 1, 3): R.GROUP_MOVE_NOT_ALLOWED,
            Move(WASTE, FOUNDATION, 2): R.GROUP_MOVE_NOT_ALLOWED,
        }
        for move, why in cases.items():
            assert game.reason(move) is why, move
            with pytest.raises(IllegalMove):
                game.push(move)
            assert snapshot(game) == before, move
    assert Move(0, 1, 0) not in game.legal_moves()


def test_illegal_moves_change_nothing_in_random_positions() -> None:
    rng = random.Random(11)
    for variant in (FORTY_THIEVES, JOSEPHINE, FORTY_AND_EIGHT):
        for _ in range(6):
            game = play_randomly(shuffled_game(variant, rng), rng, rng.randint(0, 120))
            if rng.random() < 0.5 and game.move_stack:
                game.pop()  # leave something to redo: a refused move must keep it
            before = snapshot(game)
            illegal = [m for m in relevant_moves(game) if game.reason(m) is not None]
            for move in rng.sample(illegal, 60):
                with pytest.raises(IllegalMove):
                    game.push(move)
            assert snapshot(game) == before


# ------------------------------------------------------------ undo and redo
def test_pop_returns_the_move_and_restores_the_position() -> None:
    game = build(["9s", "8s"], waste="As")
    start = snapshot(game)
    for text in ("ba", "WF", "S", "ab"):
        game.push(Move.parse(text))
    assert [m.text() for m in game.move_stack] == ["ba", "WF", "S", "ab"]
    assert game.peek() == Move.parse("ab")
    assert [game.pop().text() for _ in range(4)] == ["ab", "S", "WF", "ba"]
    assert game.move_count == 0 and game.peek() is None
    assert snapshot(game)[:2] == start[:2]


def test_redo_replays_undone_moves_in_order() -> None:
    game = build(["9s", "8s"], waste="As")
    for text in ("ba", "WF", "S"):
        game.push(Move.parse(text))
    after = game.position()
    for _ in range(3):
        game.pop()
    assert [m.text() for m in game.redo_stack] == ["S", "WF", "ba"]
    assert [game.redo().text() for _ in range(3)] == ["ba", "WF", "S"]
    assert game.position() == after
    assert game.redo_stack == []


def test_redo_is_cleared_by_a_different_move() -> None:
    game = build(["9s", "8s", ""], waste="As")
    game.push(Move.parse("ba"))
    game.push(Move.parse("WF"))
    game.pop()
    game.pop()
    assert len(game.redo_stack) == 2
    game.push(Move.parse("bc"))
    assert game.redo_stack == []
    with pytest.raises(IllegalMove) as info:
        game.redo()
    assert info.value.reason is R.NOTHING_TO_REDO


def test_redo_is_kept_by_playing_the_same_move_again() -> None:
    game = build(["9s", "8s"], waste="As")
    game.push(Move.parse("ba"))
    game.push(Move.parse("WF"))
    game.pop()
    game.pop()
    game.push(Move.parse("ba"))  # the move redo would have played
    assert game.redo_stack == [Move.parse("WF")]
    assert game.redo() == Move.parse("WF")


def test_an_illegal_move_keeps_the_redo_stack() -> None:
    game = build(["9s", "8s"])
    game.push(Move.parse("ba"))
    game.pop()
    with pytest.raises(IllegalMove):
        game.push(Move.parse("ab"))  # 9s on 8s
    assert game.redo_stack == [Move.parse("ba")]


def test_undo_of_a_foundation_move_uses_the_foundation_it_went_to() -> None:
    game = build(["7h", "7h"], found=["6h", "6h"])
    game.push(Move.parse("aF"))
    game.push(Move.parse("bF"))
    game.pop()
    assert sorted((game.foundations[2], game.foundations[6])) == [6, 7]
    assert game.cards_home == 13
    game.pop()
    assert (game.foundations[2], game.foundations[6]) == (6, 6)


def test_undo_after_a_win_reopens_the_game() -> None:
    game = build(["Ks"], found=["Kc", "Kd", "Kh", "Ks", "Kc", "Kd", "Kh", "Qs"], stock="-")
    game.push(Move.parse("aF"))
    assert game.status() is Status.WON
    game.pop()
    assert game.status() is Status.PLAYING and Move.parse("aF") in game.legal_moves()


def test_copy_is_independent_and_can_drop_history() -> None:
    game = build(["9s", "8s"], waste="As")
    game.push(Move.parse("ba"))
    twin = game.copy()
    twin.push(Move.parse("WF"))
    assert game.move_count == 1 and twin.move_count == 2
    assert game.waste and game.cards_home == 0
    bare = game.copy(history=False)
    assert bare.same_position(game) and bare.move_count == 0
    with pytest.raises(IllegalMove):
        bare.pop()


# -------------------------------------------------------------- status, progress
def test_status_playing_won_blocked_from_positions() -> None:
    assert Game.from_position(WON).status() is Status.WON
    blocked = build(["Kc", "Kd", "Kh", "Ks", "Kc", "Kd", "Kh", "Ks", "Jc", "Jd"], waste="Jh", stock="-", rest_to=0)
    assert Game.from_position(blocked.position()).status() is Status.BLOCKED
    assert build(["Kc"]).status() is Status.PLAYING
    assert Status("blocked") is Status.BLOCKED


def test_status_with_only_a_draw_left_is_playing() -> None:
    kings = ["Kc", "Kd", "Kh", "Ks", "Kc", "Kd", "Kh", "Ks", "Jc", "Jd"]
    game = build(kings, stock="Jh", rest_to=0)
    assert game.legal_moves() == [DRAW]
    assert game.status() is Status.PLAYING
    game.push(DRAW)
    assert game.status() is Status.BLOCKED


def test_progress_counts_cards_home_and_moves() -> None:
    game = build(["2c", "Ac"], waste="Ad")
    assert (game.cards_home, game.total_cards, game.move_count) == (0, 104, 0)
    for text in ("bF", "aF", "WF"):
        game.push(Move.parse(text))
    assert (game.cards_home, game.move_count) == (3, 3)
    game.push(DRAW)
    assert (game.cards_home, game.move_count) == (3, 4)
    game.pop()
    game.pop()
    assert (game.cards_home, game.move_count) == (2, 2)


def test_legal_moves_order_is_foundations_columns_waste_stock() -> None:
    game = build(["9s", "8s", "As"], waste="Ac")
    moves = game.legal_moves()
    assert moves[-1] == DRAW
    assert moves.index(Move.parse("cF")) < moves.index(Move.parse("cd"))
    assert all(m.src != WASTE for m in moves[: moves.index(Move.parse("WF"))])


def test_legal_moves_includes_redeal_only_where_allowed() -> None:
    kings = ["Kc", "Kd", "Kh", "Ks", "Kc", "Kd", "Kh", "Ks"]
    game = build(kings, waste="5d", stock="-", rest_to=0, variant=FORTY_AND_EIGHT)
    assert game.legal_moves() == [REDEAL]
    assert REDEAL == Move(WASTE, STOCK) and DRAW == Move(STOCK, WASTE)


def test_state_helper_sees_face_down_counts() -> None:
    # guards the helper the other tests rely on for hand-made variants
    game = build(["9h 8h", "Kc"], hidden=[1], variant=FACE_DOWN)
    other = build(["9h 8h", "Kc"], hidden=[0], variant=FACE_DOWN)
    assert state(game) != state(other)
