"""Strict Forty Thieves, rule by rule and edge case by edge case, as
``docs/rules.md`` states them. Each test builds the few cards that
matter with ``enginekit.build`` (every other card waits in the stock, so the
position is complete and consistent) and asserts both ``reason()`` and
what ``push()`` does.
"""

from __future__ import annotations

import random

import pytest

from enginekit import assert_illegal, assert_legal, build, shuffled_game, snapshot
from shared.cards import parse_card
from shared.engine import Game, Status
from shared.moves import DRAW, FOUNDATION, WASTE, Move
from shared.moves import IllegalReason as R
from shared.variants import FORTY_THIEVES


# ------------------------------------------------------------------ edge cases
def test_eight_of_clubs_on_nine_of_spades_is_illegal() -> None:
    game = build(["9s", "8c"])
    assert_illegal(game, "ba", R.WRONG_SUIT)


def test_eight_of_spades_on_nine_of_spades_is_legal() -> None:
    game = build(["9s", "8s"])
    assert_legal(game, "ba")
    assert game.tableau[0] == [parse_card("9s"), parse_card("8s")]
    assert game.tableau[1] == []


def test_two_ordered_cards_moved_together_onto_a_third_is_illegal_in_strict_games() -> None:
    game = build(["9s", "Kd 8s 7s"])
    assert_illegal(game, "2ba", R.GROUP_MOVE_NOT_ALLOWED)
    # the same two cards one at a time, each to a legal place, is fine
    assert_legal(game, "bc")  # 7s to an empty column
    assert_legal(game, "ba")  # 8s on 9s
    assert_legal(game, "ca")  # 7s on 8s


def test_queen_of_diamonds_into_an_empty_column_is_legal() -> None:
    game = build(["Qd", "3c", ""])
    assert_legal(game, "ac")
    assert game.tableau[2] == [parse_card("Qd")]


@pytest.mark.parametrize("rank", "A23456789TJQK")
def test_any_card_into_an_empty_column_is_legal(rank: str) -> None:
    for suit in "cdhs":
        game = build(["", f"{rank}{suit}", ""], waste=f"{rank}{suit}")
        assert_legal(game, "bc")
        game.pop()
        assert_legal(game, "Wc")  # from the waste too


def test_seven_of_hearts_either_heart_foundation_at_six_may_take_it() -> None:
    game = build(["7h", "7h"], found=["6h", "6h"])
    hearts = [2, 6]
    assert [game.foundations[i] for i in hearts] == [6, 6]
    assert_legal(game, "aF")
    assert sorted(game.foundations[i] for i in hearts) == [6, 7]
    # the other copy goes on the other heart foundation, still at six
    assert_legal(game, "bF")
    assert [game.foundations[i] for i in hearts] == [7, 7]
    assert game.cards_home == 14


def test_seven_of_hearts_goes_to_whichever_heart_foundation_is_ready() -> None:
    for tops in (["6h", "4h"], ["4h", "6h"]):
        game = build(["7h"], found=tops)
        assert_legal(game, "aF")
        assert sorted(game.foundations[i] for i in (2, 6)) == [4, 7]


def test_second_ace_of_a_suit_starts_its_own_foundation() -> None:
    game = build(["As", "As"])
    assert_legal(game, "aF")
    assert_legal(game, "bF")
    # one ace on each spade foundation, never two on one
    assert game.foundations[3] == 1 and game.foundations[7] == 1


def test_second_ace_never_goes_on_the_first() -> None:
    # one spade foundation holds the first ace; the second ace goes to the
    # other, empty one, leaving the first at the ace (an ace never builds on an ace)
    game = build(["As", "2s"], found=["As"])
    assert (game.foundations[3], game.foundations[7]) == (1, 0)
    assert_legal(game, "aF")
    assert (game.foundations[3], game.foundations[7]) == (1, 1)
    # and with the first foundation well up, the second ace still starts fresh
    game = build(["As"], found=["5s"])
    assert_legal(game, "aF")
    assert (game.foundations[3], game.foundations[7]) == (5, 1)


def test_taking_a_card_back_off_a_foundation_is_illegal() -> None:
    game = build(["", "8h"], found=["Ah", "7h"])
    for text in ("Fa", "Fb", "FW", "FS", "FF"):
        assert_illegal(game, text, R.FOUNDATION_CARDS_NEVER_MOVE)


def test_turning_the_waste_over_after_the_stock_is_empty_is_illegal() -> None:
    game = build(["Kc"], stock="-", rest_to="waste")
    assert game.stock == [] and game.waste
    assert_illegal(game, "R", R.NO_SECOND_PASS)


def test_turning_the_waste_over_while_the_stock_has_cards_is_illegal() -> None:
    game = build(["Kc"], waste="5d")
    assert game.stock
    assert_illegal(game, "R", R.STOCK_NOT_EMPTY)


def test_turning_a_stock_card_when_other_moves_exist_is_legal() -> None:
    game = build(["9s", "8s", "Ac"], stock="4d")
    assert len(game.legal_moves()) > 1
    assert_legal(game, "S")
    assert game.waste == [parse_card("4d")]


def test_move_from_an_empty_column_is_illegal() -> None:
    game = build(["", "9s"])
    for text in ("ab", "ac", "aF"):
        assert_illegal(game, text, R.SOURCE_EMPTY)


def test_move_from_an_empty_waste_is_illegal() -> None:
    game = build(["9s", ""])
    assert game.waste == []
    for text in ("Wa", "Wb", "WF"):
        assert_illegal(game, text, R.SOURCE_EMPTY)


def test_move_from_the_stock_to_a_column_is_illegal() -> None:
    game = build(["9s", ""], stock="8s")
    for text in ("Sa", "Sb", "SF"):
        assert_illegal(game, text, R.STOCK_GOES_TO_WASTE)


# ---------------------------------------------------------------- the table
def test_cards_two_packs_make_104_cards_and_copies_are_interchangeable() -> None:
    game = build(["8h", "7h", "7h"])
    assert game.total_cards == 104
    # either copy of the seven packs on the eight, and the other may not follow
    assert_legal(game, "ba")
    assert_illegal(game, "ca", R.NOT_ONE_RANK_LOWER)
    game.pop()
    assert_legal(game, "ca")


def test_tableau_deal_is_ten_columns_of_four_all_face_up() -> None:
    game = shuffled_game(FORTY_THIEVES, random.Random(1))
    assert [len(c) for c in game.tableau] == [4] * 10
    assert game.hidden == [0] * 10
    view = game.view()
    assert all(c is not None for col in view.tableau for c in col)


def test_stock_holds_the_other_64_cards_and_draws_them_in_order() -> None:
    game = shuffled_game(FORTY_THIEVES, random.Random(2))
    order = game.stock_in_draw_order()
    assert game.stock_count == 64 == len(order)
    for expected in order[:5]:
        game.push(DRAW)
        assert game.waste[-1] == expected


def test_waste_starts_empty_and_only_its_top_card_plays() -> None:
    game = shuffled_game(FORTY_THIEVES, random.Random(3))
    assert game.waste == []
    game = build(["9s", "9d"], waste="8s 8d")
    # 8s is under 8d: it cannot reach the 9s while 8d lies on it
    assert_illegal(game, "Wa", R.WRONG_SUIT)
    assert_legal(game, "Wb")
    assert_legal(game, "Wa")


def test_foundations_are_eight_built_up_in_suit_from_the_ace() -> None:
    game = build(["2h", "Ah", "3h", "2d"])
    assert len(game.foundations) == 8
    assert_illegal(game, "aF", R.FOUNDATION_NOT_READY)  # a two with no ace home
    assert_legal(game, "bF")
    assert_illegal(game, "dF", R.FOUNDATION_NOT_READY)  # other suit
    assert_illegal(game, "cF", R.FOUNDATION_NOT_READY)  # skips a rank
    assert_legal(game, "aF")
    assert_legal(game, "cF")
    assert game.foundations[2] == 3


def test_foundation_suits_follow_index_modulo_four() -> None:
    game = build(found=["Kc", "Kd", "Kh", "Ks", "Ac", "Ad", "Ah", "As"])
    assert game.foundations == [13, 13, 13, 13, 1, 1, 1, 1]
    assert game.foundation_cards()[5] == parse_card("Ad")


def test_packing_needs_exactly_one_rank_lower() -> None:
    game = build(["9s", "7s", "9s"])
    assert_illegal(game, "ba", R.NOT_ONE_RANK_LOWER)
    assert_illegal(game, "ab", R.NOT_ONE_RANK_LOWER)  # higher on lower


def test_packing_does_not_wrap_from_king_to_ace() -> None:
    game = build(["Kc", "Ac", "Ac", "Kc"])
    assert_illegal(game, "ba", R.NOT_ONE_RANK_LOWER)  # ace on king
    assert_illegal(game, "dc", R.NOT_ONE_RANK_LOWER)  # king on ace


def test_packing_an_equal_rank_never_stacks() -> None:
    game = build(["7h", "7h"])
    assert_illegal(game, "ba", R.NOT_ONE_RANK_LOWER)


def test_packing_the_waste_top_on_a_column() -> None:
    game = build(["9s", "9c"], waste="8s")
    assert_illegal(game, "Wb", R.WRONG_SUIT)
    assert_legal(game, "Wa")


def test_packing_goes_on_the_exposed_card_only() -> None:
    game = build(["9s 4d", "8s"])
    assert_illegal(game, "ba", R.NOT_ONE_RANK_LOWER)


def test_an_ordered_run_is_not_a_unit_of_any_length() -> None:
    game = build(["Ts", "Kd 9s 8s 7s"])
    for n in (2, 3):
        assert_illegal(game, f"{n}ba", R.GROUP_MOVE_NOT_ALLOWED)


def test_empty_column_takes_a_single_card_only() -> None:
    game = build(["Kd 8s 7s", ""])
    assert_illegal(game, "2ab", R.GROUP_MOVE_NOT_ALLOWED)
    assert_legal(game, "ab")


def test_stock_is_one_pass_and_stays_empty() -> None:
    game = build(["Kc"], stock="4d", rest_to="waste")
    assert_legal(game, "S")
    assert game.stock == []
    assert_illegal(game, "S", R.STOCK_EMPTY)
    assert_illegal(game, "R", R.NO_SECOND_PASS)
    assert game.passes_left == 0


def test_foundations_are_final_even_for_a_card_just_played() -> None:
    game = build(["9s", "Ah"])
    assert_legal(game, "bF")
    assert_illegal(game, "Fb", R.FOUNDATION_CARDS_NEVER_MOVE)
    game.pop()  # undo is not a move off the foundation
    assert game.tableau[1] == [parse_card("Ah")]


def test_win_needs_all_104_cards_home() -> None:
    game = build(["Ks"], found=["Kc", "Kd", "Kh", "Ks", "Kc", "Kd", "Kh", "Qs"], stock="-")
    assert game.cards_home == 103
    assert game.status() is Status.PLAYING
    assert not game.is_won()
    assert_legal(game, "aF")
    assert game.is_won() and game.status() is Status.WON
    assert game.cards_home == 104
    assert game.legal_moves() == []


def test_won_position_refuses_every_move_as_game_over() -> None:
    game = Game.from_position("forty-thieves 1 Kc,Kd,Kh,Ks,Kc,Kd,Kh,Ks -/-/-/-/-/-/-/-/-/- - -")
    assert game.status() is Status.WON
    for text in ("S", "R", "ab", "aF", "WF", "Fa"):
        assert_illegal(game, text, R.GAME_OVER)


def test_blocked_means_no_legal_move_at_all() -> None:
    # tops: kings, two jacks and a jack on the waste: nothing packs, no ace
    # shows, the stock is empty and one pass is all there is
    game = build(
        ["Kc", "Kd", "Kh", "Ks", "Kc", "Kd", "Kh", "Ks", "Jc", "Jd"], waste="Jh", stock="-", rest_to=0
    )
    assert game.legal_moves() == []
    assert not game.has_legal_move()
    assert game.status() is Status.BLOCKED
    again = Game.from_position(game.position())
    assert again.status() is Status.BLOCKED


def test_an_empty_stock_alone_is_not_a_loss() -> None:
    game = build(["Kc", "Qc"], stock="-", rest_to="waste")
    assert game.stock == []
    assert game.status() is Status.PLAYING
    assert game.legal_moves() == [Move(1, 0)] or Move(1, 0) in game.legal_moves()


def test_pointless_shuffling_between_columns_is_still_playing() -> None:
    # cards that can only wander to empty columns and back: not blocked
    game = build(
        ["Kc", "Kd", "Kh", "Ks", "Kc", "Kd", "Kh", "", "", "5s"], waste="Jh", stock="-", rest_to=0
    )
    assert game.status() is Status.PLAYING
    assert set(game.legal_moves()) == {
        Move(s, d) for s in [*range(10), WASTE] for d in (7, 8) if s != d and (s == WASTE or game.tableau[s])
    }


def test_score_of_an_unfinished_game_is_the_foundation_count() -> None:
    game = build(["2c", "Ac"], found=["3h", "Kd"])
    assert game.cards_home == 16
    assert_legal(game, "bF")
    assert_legal(game, "aF")
    assert game.cards_home == 18
    assert game.view().cards_home == 18 and game.view().total_cards == 104
    game.pop()
    assert game.cards_home == 17


def test_move_to_a_foundation_needs_no_index() -> None:
    game = build(["Ah"])
    move = Move.parse("aF")
    assert move == Move(0, FOUNDATION)
    before = snapshot(game)
    game.push(move)
    assert snapshot(game) != before
