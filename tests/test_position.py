"""Whole positions as text (FEN-like) and as bytes: exact round trips, the
documented layout, and a typed PositionError for everything else."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from enginekit import build, play_randomly, scrambled_game, shuffled_game
from shared.cards import parse_card, parse_cards
from shared.engine import Game
from shared.moves import DRAW, Move
from shared.position import PositionError, check_position, parse_position, position_bytes, position_text
from shared.variants import FORTY_AND_EIGHT, FORTY_THIEVES, VARIANTS, Variant

def game_text(tableau: str, found: str = "-,-,-,-,-,-,-,-", waste: str = "-", stock: str = "-") -> str:
    return f"forty-thieves 1 {found} {tableau} {waste} {stock}"


def full_text_with(tableau_first: str) -> str:
    """A complete Forty Thieves position: the given first column, every other card in column b."""
    game = build([tableau_first], rest_to=1)
    return game.position()


# ------------------------------------------------------------- round trips
@pytest.mark.parametrize("variant", list(VARIANTS.values()), ids=list(VARIANTS))
def test_deal_start_round_trips_text_and_bytes(variant: Variant) -> None:
    game = Game.new(variant, 11)
    text, data = game.position(), game.to_bytes()
    assert Game.from_position(text).position() == text
    assert Game.from_bytes(data).to_bytes() == data
    assert Game.from_bytes(data).position() == text
    assert Game.from_position(text).same_position(game)


def test_random_reachable_and_scrambled_positions_round_trip() -> None:
    rng = random.Random(21)
    for variant in VARIANTS.values():
        for i in range(8):
            game = scrambled_game(variant, rng) if i % 2 else play_randomly(shuffled_game(variant, rng), rng, 80)
            text, data = game.position(), game.to_bytes()
            assert position_text(parse_position(text)) == text
            assert Game.from_bytes(data).position() == text
            assert Game.from_bytes(data).to_bytes() == data


def test_text_form_of_deal_one() -> None:
    """Deal 1 of Forty Thieves, as PySolFC lays it out (see docs/notation.md)."""
    game = Game.new(FORTY_THIEVES, 1)
    fields = game.position().split(" ")
    assert fields[:3] == ["forty-thieves", "1", "-,-,-,-,-,-,-,-"]
    assert fields[3].split("/")[0] == "3dAsKd7d"  # column a, bottom card first
    assert fields[4] == "-"
    assert len(fields[5]) == 2 * 64
    game.push(DRAW)  # the stock field lists the next card first
    assert game.waste == [parse_card(fields[5][:2])]


def test_fields_layout() -> None:
    text = full_text_with("9h8h")
    game = Game.from_position(text)
    assert game.tableau[0] == parse_cards("9h8h")
    assert game.tableau[2:] == [[]] * 8
    assert text.split(" ")[3].startswith("9h8h/") and text.split(" ")[3].endswith("/-/-/-/-/-/-/-/-")


def test_foundations_field_lists_top_cards_by_index() -> None:
    game = build(["Kc"], found=["5h", "Ac", "Ks"])
    fields = game.position().split(" ")
    assert fields[2] == "Ac,-,5h,Ks,-,-,-,-"
    again = Game.from_position(game.position())
    assert again.foundations == [1, 0, 5, 13, 0, 0, 0, 0]
    assert again.cards_home == 19


def test_waste_field_is_bottom_first_and_stock_next_first() -> None:
    game = build(["Kc"], waste="4d 9c", stock="Jh 2s")
    fields = game.position().split(" ")
    assert fields[4] == "4d9c"
    assert fields[5].startswith("Jh2s")
    game.push(DRAW)
    assert game.waste[-1] == parse_card("Jh")


def test_face_down_cards_come_first_and_end_with_a_bar() -> None:
    game = build(["4c 7d Ts 9h", "Js 9s"], hidden=[2, 1])
    col_a, col_b = game.position().split(" ")[3].split("/")[:2]
    assert (col_a, col_b) == ("4c7d|Ts9h", "Js|9s")
    again = Game.from_position(game.position())
    assert again.hidden[:2] == [2, 1]
    assert again.to_bytes() == game.to_bytes()


def test_second_pass_is_written_in_the_pass_field() -> None:
    kings = ["Kc", "Kd", "Kh", "Ks", "Kc", "Kd", "Kh", "Ks"]
    game = build(kings, variant=FORTY_AND_EIGHT, waste="5c 9d", stock="-", rest_to=0)
    game.push(Move.parse("R"))
    text = game.position()
    assert text.split(" ")[1] == "2" and text.split(" ")[4] == "-" and text.split(" ")[5].startswith("5c9d")
    assert Game.from_position(text).passes_left == 0


def test_history_is_not_part_of_a_position() -> None:
    game = build(["9s", "8s"])
    text = game.position()
    game.push(Move.parse("ba"))
    game.pop()
    assert game.position() == text
    assert Game.from_position(text).move_count == 0


def test_won_position_text() -> None:
    game = Game.from_position(WON)
    assert game.is_won() and game.position() == WON


def test_repr_rebuilds_the_game() -> None:
    game = Game.new(FORTY_THIEVES, 2)
    assert eval(repr(game), {"Game": Game}).position() == game.position()


# -------------------------------------------------------------- binary form
def test_binary_layout_byte_by_byte() -> None:
    game = build(["9h 8h"], hidden=[1], waste="4d", stock="Jh 2s", rest_to=1)
    data = game.to_bytes()
    assert data[0] == 1  # version
    assert data[1] == list(VARIANTS).index("forty-thieves")
    assert data[2] == 1  # pass
    assert list(data[3:11]) == [0] * 8  # foundation heights
    assert list(data[11:15]) == [1, 2, parse_card("9h"), parse_card("8h")]  # hidden, length, cards
    n_b = data[16]
    assert data[15] == 0 and n_b == 104 - 5
    i = 17 + n_b + 8 * 2  # eight empty columns: (0, 0) each
    assert list(data[17 + n_b : i]) == [0] * 16
    assert list(data[i : i + 2]) == [1, parse_card("4d")]  # waste
    assert list(data[i + 2 : i + 5]) == [2, parse_card("2s"), parse_card("Jh")]  # stock, next card LAST
    assert len(data) == i + 5


def test_binary_form_is_compact() -> None:
    assert len(Game.new(FORTY_THIEVES, 1).to_bytes()) == 3 + 8 + 10 * 2 + 40 + 1 + 1 + 64


# ------------------------------------------------------------------ errors
KINGS = "Kc,Kd,Kh,Ks,Kc,Kd,Kh,Ks"
ONE_SHORT = "Kc,Kd,Kh,Ks,Kc,Kd,Kh,Qs"
WON = game_text("-/-/-/-/-/-/-/-/-/-", found=KINGS)

# name: (text, what the error message must say)
BAD_TEXTS = {
    "five fields": (WON.rsplit(" ", 1)[0], "6 fields"),
    "seven fields": (WON + " -", "6 fields"),
    "empty": ("", "6 fields"),
    "unknown variant": (WON.replace("forty-thieves", "fifty-thieves"), "unknown variant"),
    "pass not a number": (WON.replace(" 1 ", " x "), "pass must be a number"),
    "pass in unicode digits": (WON.replace(" 1 ", " ² "), "pass must be a number"),
    "pass zero": (WON.replace(" 1 ", " 0 "), "passes 1..1"),
    "pass beyond the variant": (WON.replace(" 1 ", " 2 "), "passes 1..1"),
    "foundation of the wrong suit": (game_text("-/-/-/-/-/-/-/-/-/-", found="Kd,Kc,Kh,Ks,Kc,Kd,Kh,Ks"), "suit c"),
    "foundation not a card": (game_text("-/-/-/-/-/-/-/-/-/-", found="Xc,Kd,Kh,Ks,Kc,Kd,Kh,Ks"), "not a card"),
    "nine foundations": (game_text("-/-/-/-/-/-/-/-/-/-", found=KINGS + ",-"), "8 foundations"),
    "missing cards": (game_text("-/-/-/-/-/-/-/-/-/-", found=ONE_SHORT), "Ksx1"),
    "extra card": (game_text("Ks/-/-/-/-/-/-/-/-/-", found=KINGS), "Ksx3"),
    "eleven columns": (game_text("-/-/-/-/-/-/-/-/-/-/-", found=KINGS), "10 columns"),
    "top card face down": (game_text("Ks|/-/-/-/-/-/-/-/-/-", found=ONE_SHORT), "face up"),
    "bad card in a column": (game_text("Kx/-/-/-/-/-/-/-/-/-", found=ONE_SHORT), "not a card"),
    "odd card run": (game_text("K/-/-/-/-/-/-/-/-/-", found=ONE_SHORT), "two-character"),
    "player view stock": (game_text("-/-/-/-/-/-/-/-/-/-", found=KINGS, stock="#0"), "player view"),
    "hidden cards as in a view": (game_text("??|Ks/-/-/-/-/-/-/-/-/-", found=ONE_SHORT), "not a card"),
}


@pytest.mark.parametrize("name", list(BAD_TEXTS))
def test_bad_position_text_is_a_position_error(name: str) -> None:
    text, message = BAD_TEXTS[name]
    with pytest.raises(PositionError, match=message):
        Game.from_position(text)


def good_bytes() -> bytes:
    return build(["9h 8h"], waste="4d", stock="Jh 2s").to_bytes()


BAD_BYTES = {
    "empty": b"",
    "version 2": bytes([2]) + good_bytes()[1:],
    "unknown variant": good_bytes()[:1] + bytes([200]) + good_bytes()[2:],
    "pass zero": good_bytes()[:2] + bytes([0]) + good_bytes()[3:],
    "foundation height 14": good_bytes()[:3] + bytes([14]) + good_bytes()[4:],
    "truncated": good_bytes()[:-1],
    "trailing byte": good_bytes() + b"\x00",
    "not a card": good_bytes()[:-1] + bytes([52]),
    "duplicate card": good_bytes()[:-1] + good_bytes()[-2:-1],
}


@pytest.mark.parametrize("name", list(BAD_BYTES))
def test_bad_position_bytes_are_a_position_error(name: str) -> None:
    with pytest.raises(PositionError):
        Game.from_bytes(BAD_BYTES[name])


def test_unknown_variant_index_is_named_as_such() -> None:
    with pytest.raises(PositionError, match="unknown variant index 200"):
        Game.from_bytes(BAD_BYTES["unknown variant"])


def test_check_position_catches_a_corrupted_game() -> None:
    game = build(["9h 8h"])
    check_position(game)
    game.tableau[0].append(game.tableau[0][0])
    with pytest.raises(PositionError):
        check_position(game)
    assert position_bytes(build(["9h"])) == build(["9h"]).to_bytes()


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_any_mutated_text_parses_consistently_or_is_a_position_error(data: st.DataObject) -> None:
    text = list(Game.new(FORTY_THIEVES, 3).position())
    for _ in range(data.draw(st.integers(1, 3))):
        i = data.draw(st.integers(0, len(text) - 1))
        text[i] = data.draw(st.sampled_from("abc-|/,# 0123456789AKQJTcdhs²?"))
    try:
        game = Game.from_position("".join(text))
    except PositionError:
        return
    check_position(game)
    assert Game.from_position(game.position()).position() == game.position()


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_any_mutated_bytes_parse_consistently_or_are_a_position_error(data: st.DataObject) -> None:
    raw = bytearray(Game.new(FORTY_THIEVES, 3).to_bytes())
    for _ in range(data.draw(st.integers(1, 3))):
        i = data.draw(st.integers(0, len(raw) - 1))
        if data.draw(st.booleans()):
            raw[i] = data.draw(st.integers(0, 255))
        else:
            del raw[i]
    try:
        game = Game.from_bytes(bytes(raw))
    except PositionError:
        return
    assert Game.from_bytes(game.to_bytes()).to_bytes() == game.to_bytes()
