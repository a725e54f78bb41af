"""Every dial of the family: the registered variants' own rules, and
hand-made variants for the dials no registered game sets (king-only and
closed empty columns, face-down cards, several cards per draw, other
packing rules, runs of any valid order).
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
    assert_illegal,
    assert_legal,
    build,
    cards,
    custom,
    state,
)
from shared.cards import parse_card
from shared.engine import Game, Status
from shared.moves import FOUNDATION, IllegalMove, Move
from shared.moves import IllegalReason as R
from shared.variants import (
    EIGHTY_THIEVES,
    FORTY_AND_EIGHT,
    JOSEPHINE,
    LIMITED,
    LUCAS,
    MARIA,
    SIXTY_THIEVES,
    STREETS,
    VARIANTS,
    Variant,
)


# ------------------------------------------------------------ deal shapes
@pytest.mark.parametrize("variant", list(VARIANTS.values()), ids=list(VARIANTS))
def test_game_new_lays_out_the_variant_shape(variant: Variant) -> None:
    game = Game.new(variant, 7)
    assert [len(c) for c in game.tableau] == [variant.cards_per_column] * variant.columns
    assert game.hidden == [0] * variant.columns
    assert len(game.foundations) == variant.foundations == variant.packs * 4
    assert game.stock_count == variant.stock_size
    assert game.waste == [] and game.pass_number == 1 and game.move_count == 0
    assert game.cards_home == (variant.foundations if variant.aces_first else 0)
    assert game.status() is Status.PLAYING
    assert Game.from_position(game.position()).same_position(game)


def test_table_sizes_match_rules_md() -> None:
    expected = {
        "forty-thieves": (2, 10, 4, 64),
        "sixty-thieves": (3, 12, 5, 96),
        "limited": (2, 12, 3, 68),
        "maria": (2, 9, 4, 68),
        "streets": (2, 10, 4, 64),
        "josephine": (2, 10, 4, 64),
        "forty-and-eight": (2, 8, 5, 64),
        "lucas": (2, 13, 3, 57),
        "eighty-thieves": (4, 10, 8, 128),
    }
    got = {k: (v.packs, v.columns, v.cards_per_column, v.stock_size) for k, v in VARIANTS.items()}
    assert got == expected


# ------------------------------------------------------ more packs, more foundations
def test_sixty_thieves_three_foundations_per_suit_take_three_aces() -> None:
    game = build(["Ah", "Ah", "Ah"], variant=SIXTY_THIEVES)
    assert len(game.foundations) == 12
    for col in "abc":
        assert_legal(game, f"{col}F")
    assert [game.foundations[i] for i in (2, 6, 10)] == [1, 1, 1]
    assert game.total_cards == 156


def test_sixty_thieves_seven_of_hearts_goes_on_any_ready_heart_foundation() -> None:
    game = build(["7h"], found=["2h", "6h", "9h"], variant=SIXTY_THIEVES)
    assert_legal(game, "aF")
    assert [game.foundations[i] for i in (2, 6, 10)] == [2, 7, 9]


def test_eighty_thieves_has_sixteen_foundations() -> None:
    game = build(["As", "As", "As", "As"], variant=EIGHTY_THIEVES)
    for col in "abcd":
        assert_legal(game, f"{col}F")
    assert [game.foundations[i] for i in (3, 7, 11, 15)] == [1, 1, 1, 1]
    assert game.total_cards == 208


def test_limited_plays_twelve_columns() -> None:
    game = build(["9s", "", "", "", "", "", "", "", "", "", "", "8s"], variant=LIMITED)
    assert_legal(game, "la")
    assert_illegal(game, "ma", R.NO_SUCH_COLUMN)


# ------------------------------------------------- alternating colour (Maria, Streets)
@pytest.mark.parametrize("variant", [MARIA, STREETS], ids=["maria", "streets"])
def test_alternate_colour_red_on_black_and_black_on_red(variant: Variant) -> None:
    game = build(["9s", "8h", "9c", "8d"], variant=variant)
    assert_legal(game, "ba")  # 8h on 9s
    assert_legal(game, "dc")  # 8d on 9c
    game = build(["9h", "8c", "9d", "8s"], variant=variant)
    assert_legal(game, "ba")  # 8c on 9h
    assert_legal(game, "dc")  # 8s on 9d


@pytest.mark.parametrize("variant", [MARIA, STREETS], ids=["maria", "streets"])
def test_alternate_colour_same_colour_is_wrong_even_in_suit(variant: Variant) -> None:
    game = build(["9s", "8c", "8s", "9h", "8d", "8h"], variant=variant)
    for text in ("ba", "ca", "ed", "fd"):
        assert_illegal(game, text, R.WRONG_SUIT)


@pytest.mark.parametrize("variant", [MARIA, STREETS], ids=["maria", "streets"])
def test_alternate_colour_still_needs_one_rank_lower(variant: Variant) -> None:
    game = build(["9s", "7h", "9h"], waste="9d", variant=variant)
    assert_illegal(game, "ba", R.NOT_ONE_RANK_LOWER)
    assert_illegal(game, "Wa", R.NOT_ONE_RANK_LOWER)
    assert_illegal(game, "ca", R.NOT_ONE_RANK_LOWER)


@pytest.mark.parametrize("variant", [MARIA, STREETS], ids=["maria", "streets"])
def test_alternate_colour_packs_the_waste_and_has_no_group_moves(variant: Variant) -> None:
    game = build(["Ts", "Kc 9h 8s"], waste="9d", variant=variant)
    assert_illegal(game, "2ba", R.GROUP_MOVE_NOT_ALLOWED)
    assert_legal(game, "Wa")


def test_maria_has_nine_columns() -> None:
    game = build(["9s", "", "", "", "", "", "", "", "8h"], variant=MARIA)
    assert_legal(game, "ia")
    assert_illegal(game, "ja", R.NO_SUCH_COLUMN)


# ---------------------------------------------------- other packing dials
def test_any_but_own_suit_packing() -> None:
    game = build(["9s", "8h", "9s", "8s"], variant=ANY_BUT_OWN)
    assert_legal(game, "ba")
    assert_illegal(game, "dc", R.WRONG_SUIT)


def test_any_suit_packing() -> None:
    game = build(["9s", "8s", "9h", "8d", "9c", "7c"], variant=ANY_SUIT)
    assert_legal(game, "ba")
    assert_legal(game, "dc")
    assert_illegal(game, "fe", R.NOT_ONE_RANK_LOWER)


# ---------------------------------------------------------- Josephine runs
def test_josephine_moves_a_same_suit_run_as_a_unit() -> None:
    game = build(["Ts", "Kd 9s 8s 7s"], variant=JOSEPHINE)
    assert_legal(game, "3ba")
    assert game.tableau[0] == cards("Ts 9s 8s 7s")
    assert game.tableau[1] == cards("Kd")
    game.pop()
    assert game.tableau[1] == cards("Kd 9s 8s 7s")


def test_josephine_moves_part_of_a_run() -> None:
    game = build(["9s", "Kd Ts 8s 7s"], variant=JOSEPHINE)
    assert_legal(game, "2ba")
    game.pop()
    assert_legal(game, "bc")  # single cards still move


def test_josephine_run_into_an_empty_column() -> None:
    game = build(["", "Kd 9s 8s 7s"], variant=JOSEPHINE)
    assert_legal(game, "3ba")
    assert game.tableau[0] == cards("9s 8s 7s")


def test_josephine_whole_column_as_a_run() -> None:
    game = build(["Ts", "9s 8s"], variant=JOSEPHINE)
    assert_legal(game, "2ba")
    assert game.tableau[1] == []


def test_josephine_mixed_suit_run_is_not_a_unit() -> None:
    game = build(["Ts", "Kd 9s 8h 7h"], variant=JOSEPHINE)
    assert_illegal(game, "3ba", R.NOT_A_RUN)
    assert_legal(game, "2bc")  # the 8h-7h part is a run


def test_josephine_unordered_cards_are_not_a_run() -> None:
    game = build(["Ts", "Kd 9s 7s", "", "Kd 8s 9s"], variant=JOSEPHINE)
    assert_illegal(game, "2ba", R.NOT_A_RUN)
    assert_illegal(game, "2dc", R.NOT_A_RUN)  # rising, not falling


def test_josephine_run_never_wraps_king_on_ace() -> None:
    game = build(["2c", "Ac Kc", ""], variant=JOSEPHINE)
    assert_illegal(game, "2bc", R.NOT_A_RUN)
    game = build(["", "Ad Kc"], variant=JOSEPHINE)  # Ad is Kc's card value + 1
    assert_illegal(game, "2ba", R.NOT_A_RUN)


def test_josephine_run_longer_than_the_column() -> None:
    game = build(["Ts", "9s 8s"], variant=JOSEPHINE)
    assert_illegal(game, "3ba", R.RUN_TOO_LONG)


def test_josephine_run_base_must_pack_on_the_target() -> None:
    game = build(["Th", "9s 8s", "Js"], variant=JOSEPHINE)
    assert_illegal(game, "2ba", R.WRONG_SUIT)
    assert_illegal(game, "2bc", R.NOT_ONE_RANK_LOWER)


def test_josephine_run_never_goes_to_a_foundation_as_a_unit() -> None:
    game = build(["2s As"], variant=JOSEPHINE)
    move = Move(0, FOUNDATION, 2)  # the notation cannot even write it ("2aF")
    assert game.reason(move) is R.GROUP_MOVE_NOT_ALLOWED
    with pytest.raises(IllegalMove):
        game.push(move)
    assert game.tableau[0] == cards("2s As")


def test_josephine_generates_every_run_length() -> None:
    others = ["Kc", "Kc", "Kh", "Kh", "Ks", "Kd", "Jd"]  # nothing packs on these
    game = build(["Ts", "Kd 9s 8s 7s", "", *others], variant=JOSEPHINE)
    group = {m for m in game.legal_moves() if m.count > 1}
    assert group == {Move(1, 0, 3), Move(1, 2, 2), Move(1, 2, 3)}


def test_valid_run_variant_moves_alternate_colour_runs() -> None:
    game = build(["Ts", "Kd 9h 8c 7d"], variant=VALID_RUNS)
    assert_legal(game, "3ba")
    assert game.tableau[0] == cards("Ts 9h 8c 7d")


def test_group_move_of_a_face_down_card_is_refused() -> None:
    game = build(["9s", "9h 8c 7d"], hidden=[0, 1], variant=VALID_RUNS)
    assert_illegal(game, "3ba", R.FACE_DOWN)
    assert_illegal(game, "2ba", R.WRONG_SUIT)  # the 8c-7d run is face up; 8c needs a red nine


# -------------------------------------------------- Forty and Eight's second pass
KINGS = ["Kc", "Kd", "Kh", "Ks", "Kc", "Kd", "Kh", "Ks"]


def forty_and_eight_end_of_pass() -> Game:
    """Eight kings on top, nothing to play but the turn-over."""
    return build(KINGS, variant=FORTY_AND_EIGHT, waste="5c 9d 3h", stock="-", rest_to=0)


def test_forty_and_eight_turns_the_waste_over_once() -> None:
    game = forty_and_eight_end_of_pass()
    assert game.pass_number == 1 and game.passes_left == 1
    assert_legal(game, "R")
    assert game.waste == []
    assert game.pass_number == 2 and game.passes_left == 0
    # the second pass deals the cards in the order the first pass did
    assert game.stock_in_draw_order() == cards("5c 9d 3h")
    assert_legal(game, "S")
    assert game.waste == cards("5c")


def test_forty_and_eight_no_third_pass() -> None:
    game = forty_and_eight_end_of_pass()
    game.push(Move.parse("R"))
    for _ in range(3):
        game.push(Move.parse("S"))
    assert_illegal(game, "R", R.NO_SECOND_PASS)
    assert_illegal(game, "S", R.STOCK_EMPTY)


def test_forty_and_eight_turn_over_waits_for_an_empty_stock() -> None:
    game = build(["Kc"], variant=FORTY_AND_EIGHT, waste="5c")
    assert_illegal(game, "R", R.STOCK_NOT_EMPTY)


def test_forty_and_eight_turn_over_needs_a_waste() -> None:
    game = build(KINGS, variant=FORTY_AND_EIGHT, stock="-", rest_to=0)
    assert_illegal(game, "R", R.SOURCE_EMPTY)
    assert game.status() is Status.BLOCKED


def test_forty_and_eight_turn_over_is_undone_exactly() -> None:
    game = forty_and_eight_end_of_pass()
    before = game.position()
    game.push(Move.parse("R"))
    game.push(Move.parse("S"))
    game.pop()
    game.pop()
    assert game.position() == before
    assert game.redo() == Move.parse("R")
    assert game.pass_number == 2


def test_forty_and_eight_end_of_first_pass_is_not_blocked() -> None:
    game = forty_and_eight_end_of_pass()
    assert game.legal_moves() == [Move.parse("R")]
    assert game.status() is Status.PLAYING


# ------------------------------------------------------------- Lucas aces
def test_lucas_starts_with_the_eight_aces_home() -> None:
    game = Game.new(LUCAS, 3)
    assert game.foundations == [1] * 8
    assert game.cards_home == 8
    every_card = [c for col in game.tableau for c in col] + game.stock
    assert not any(c % 13 == 0 for c in every_card)


def test_lucas_twos_go_straight_home() -> None:
    game = build(["2c", "2c"], found=["Ac"] * 2 + ["Ad"] * 2 + ["Ah"] * 2 + ["As"] * 2, variant=LUCAS)
    assert_legal(game, "aF")
    assert_legal(game, "bF")
    assert game.foundations[0] == game.foundations[4] == 2


# ------------------------------------------------------------ empty columns
def test_king_only_empty_column_takes_a_king() -> None:
    game = build(["", "Kh", "Qh"], waste="Kd", variant=KING_ONLY)
    assert_legal(game, "ba")
    game.pop()
    assert_legal(game, "Wa")


def test_king_only_empty_column_refuses_other_cards() -> None:
    game = build(["", "Qh"], waste="Ad", variant=KING_ONLY)
    assert_illegal(game, "ba", R.EMPTY_COLUMN_KING_ONLY)
    assert_illegal(game, "Wa", R.EMPTY_COLUMN_KING_ONLY)


def test_king_only_run_needs_a_king_at_its_base() -> None:
    variant = custom(group_moves=JOSEPHINE.group_moves, empty_column=KING_ONLY.empty_column)
    game = build(["", "Kh Qh", "2c Qh Jh"], variant=variant)
    assert_legal(game, "2ba")
    game.pop()
    assert_illegal(game, "2ca", R.EMPTY_COLUMN_KING_ONLY)


def test_closed_empty_column_takes_nothing() -> None:
    game = build(["", "Kh", "Qh"], waste="Kd", variant=NO_EMPTY)
    for text in ("ba", "ca", "Wa"):
        assert_illegal(game, text, R.EMPTY_COLUMN_CLOSED)
    assert_legal(game, "cb")  # packing elsewhere is unaffected


def test_closed_empty_columns_can_block_a_game() -> None:
    game = build(["", "Kh"], waste="Kd", stock="-", rest_to=1, variant=NO_EMPTY)
    assert game.status() is Status.BLOCKED


# --------------------------------------------------------- face-down cards
def face_down_game() -> Game:
    return build(
        ["4c 7d Ts 9h", "Js 5d 9s", "", "8s"], hidden=[2, 2], variant=FACE_DOWN
    )


def test_face_down_cards_are_hidden_in_the_view() -> None:
    game = face_down_game()
    assert game.hidden[:2] == [2, 2]
    view = game.view()
    assert view.tableau[0] == (None, None, parse_card("Ts"), parse_card("9h"))
    assert view.to_dict()["tableau"][1] == ["??", "??", "9s"]
    assert view.text().split()[3].startswith("????|Ts9h/????|9s/-/8s")


def test_face_down_card_flips_when_exposed() -> None:
    game = face_down_game()
    assert_legal(game, "bc")  # 9s to the empty column exposes 5d
    assert game.hidden[1] == 1
    assert game.move_count == 1  # the flip is part of the move, not a move
    assert game.view().tableau[1] == (None, parse_card("5d"))
    assert_legal(game, "dc")  # 8s on 9s empties column d
    assert_legal(game, "bd")  # 5d to it exposes the last face-down card
    assert game.hidden[1] == 0
    assert game.view().tableau[1] == (parse_card("Js"),)


def test_face_down_flip_is_undone_and_redone() -> None:
    game = face_down_game()
    start = state(game)
    for text in ("bc", "dc", "bd"):
        game.push(Move.parse(text))
    after = state(game)[:6]
    for _ in range(3):
        game.pop()
    assert game.hidden[1] == 2
    assert state(game)[:6] == start[:6]
    assert game.view() == face_down_game().view()
    for _ in range(3):
        game.redo()
    assert state(game)[:6] == after


def test_face_down_column_emptied_by_its_last_card() -> None:
    game = build(["Kh", "Qh"], hidden=[0, 0], variant=FACE_DOWN)
    assert_legal(game, "ba")
    assert game.tableau[1] == [] and game.hidden[1] == 0
    game.pop()
    assert game.hidden[1] == 0 and game.tableau[1] == cards("Qh")


def test_face_down_deal_hides_all_but_the_top_cards() -> None:
    import random

    from enginekit import shuffled_game

    game = shuffled_game(FACE_DOWN, random.Random(5))
    assert game.hidden == [2] * FACE_DOWN.columns
    assert all(col[:2] == (None, None) and None not in col[2:] for col in game.view().tableau)


# ------------------------------------------------------ several cards per draw
def test_draw_three_turns_three_cards_next_one_on_top() -> None:
    game = build(["Kc"], stock="4d 9c Jh 2s", variant=DRAW_THREE)
    rest = game.stock_count
    assert_legal(game, "S")
    assert game.waste == cards("4d 9c Jh")
    assert game.stock_count == rest - 3
    assert game.stock_in_draw_order()[0] == parse_card("2s")


def test_draw_three_last_draw_takes_what_is_left() -> None:
    game = build(["Kc"], stock="4d 9c", rest_to=0, variant=DRAW_THREE)
    assert_legal(game, "S")
    assert game.waste == cards("4d 9c") and game.stock == []
    assert_illegal(game, "S", R.STOCK_EMPTY)
    game.pop()
    assert game.stock_in_draw_order() == cards("4d 9c") and game.waste == []


def test_draw_three_undo_restores_the_stock_order() -> None:
    game = build(["Kc"], stock="4d 9c Jh 2s 7h", variant=DRAW_THREE)
    before = state(game)
    game.push(Move.parse("S"))
    game.push(Move.parse("S"))
    game.pop()
    game.pop()
    assert state(game)[:6] == before[:6]


def test_draw_three_only_the_waste_top_plays() -> None:
    game = build(["Tc", "6d"], stock="9c Qh 5d", variant=DRAW_THREE)
    game.push(Move.parse("S"))
    assert_illegal(game, "Wa", R.NOT_ONE_RANK_LOWER)  # 9c would fit, but 5d is on top
    assert_legal(game, "Wb")
