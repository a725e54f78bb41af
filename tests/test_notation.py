"""The text notation of cards and moves (``docs/notation.md``): every form
parses, prints back exactly, and anything else is a typed parse error."""

from __future__ import annotations

from pathlib import Path

import pytest

from enginekit import syntactic_moves
from shared.cards import (
    CardParseError,
    card_pretty,
    card_text,
    cards_text,
    full_packs,
    is_red,
    make_card,
    parse_card,
    parse_cards,
    rank_of,
    suit_of,
)
from shared.moves import (
    DRAW,
    FOUNDATION,
    REDEAL,
    STOCK,
    WASTE,
    IllegalMove,
    IllegalReason,
    Move,
    MoveParseError,
    column_letter,
    parse_moves,
)


# ------------------------------------------------------------------- cards
def test_card_values_follow_suit_times_13_plus_rank_minus_one() -> None:
    assert parse_card("Ac") == 0 and parse_card("Kc") == 12
    assert parse_card("Ad") == 13 and parse_card("Ah") == 26 and parse_card("Ks") == 51
    assert make_card(10, 2) == parse_card("Th")
    assert (rank_of(parse_card("Qd")), suit_of(parse_card("Qd"))) == (12, 1)


def test_every_card_round_trips_its_text() -> None:
    texts = [card_text(c) for c in range(52)]
    assert len(set(texts)) == 52
    assert all(parse_card(t) == c for c, t in enumerate(texts))
    assert cards_text(range(52))[:8] == "Ac2c3c4c"
    assert parse_cards(cards_text(full_packs(2))) == full_packs(2)


def test_card_text_is_rank_then_suit() -> None:
    assert card_text(parse_card("Th")) == "Th"
    assert [card_text(make_card(r, 3)) for r in (1, 9, 10, 11, 12, 13)] == ["As", "9s", "Ts", "Js", "Qs", "Ks"]
    assert card_pretty(parse_card("Th")) == "T♥"


def test_card_parsing_forgives_case_and_ten() -> None:
    assert parse_card("th") == parse_card("TH") == parse_card("10h") == parse_card(" Th ")


@pytest.mark.parametrize("text", ["", "T", "1h", "Tx", "Thh", "??", "11h", "h T", "Th,"])
def test_bad_card_text_is_a_card_parse_error(text: str) -> None:
    with pytest.raises(CardParseError):
        parse_card(text)


def test_odd_length_card_run_is_an_error() -> None:
    with pytest.raises(CardParseError):
        parse_cards("ThA")


def test_colours() -> None:
    assert [is_red(make_card(5, s)) for s in range(4)] == [False, True, True, False]


def test_make_card_refuses_impossible_cards() -> None:
    for rank, suit in ((0, 0), (14, 0), (1, 4), (1, -1)):
        with pytest.raises(ValueError):
            make_card(rank, suit)


# ------------------------------------------------------------------- moves
@pytest.mark.parametrize(
    ("text", "move"),
    [
        ("ab", Move(0, 1)),
        ("ta", Move(19, 0)),
        ("3ab", Move(0, 1, 3)),
        ("12jc", Move(9, 2, 12)),
        ("aF", Move(0, FOUNDATION)),
        ("Wb", Move(WASTE, 1)),
        ("WF", Move(WASTE, FOUNDATION)),
        ("S", DRAW),
        ("R", REDEAL),
    ],
)
def test_each_form_of_the_notation(text: str, move: Move) -> None:
    assert Move.parse(text) == move
    assert move.text() == text


def test_draw_and_turn_over_are_stock_to_waste_and_back() -> None:
    assert DRAW == Move(STOCK, WASTE) and REDEAL == Move(WASTE, STOCK)


@pytest.mark.parametrize(("alias", "canonical"), [("s", "S"), ("SW", "S"), ("r", "R"), ("WS", "R"), ("1ab", "ab"), (" ab\n", "ab")])
def test_aliases_parse_to_the_canonical_move(alias: str, canonical: str) -> None:
    assert Move.parse(alias).text() == canonical


def test_moves_the_rules_never_allow_still_parse() -> None:
    """So a client sending one gets a precise reason, not a parse error."""
    assert Move.parse("Fa") == Move(FOUNDATION, 0)
    assert Move.parse("Sa") == Move(STOCK, 0)
    assert Move.parse("aW") == Move(0, WASTE)
    assert Move.parse("aa") == Move(0, 0)
    assert Move.parse("FF") == Move(FOUNDATION, FOUNDATION)
    assert Move.parse("SS") == Move(STOCK, STOCK)


def test_every_move_round_trips_its_text() -> None:
    for move in syntactic_moves(13):
        text = move.text()
        assert Move.parse(text) == move, text
        assert eval(repr(move), {"Move": Move}) == move  # repr rebuilds the move


def test_the_one_card_look_ups_answer_what_the_slow_paths_would(monkeypatch: pytest.MonkeyPatch) -> None:
    """``Move.parse`` and ``Move.text`` look one-card moves up in tables; the tables hide no difference."""
    from shared import moves

    looked_up = {m: (m.text(), Move.parse(m.text())) for m in syntactic_moves(13)}
    aliases = {a: Move.parse(a) for a in ("S", "s", "SW", "R", "r", "WS", " ab", "ab ")}
    assert len(moves._PARSED) == 23 * 23 + 4 and len(moves._TEXT_OF) == 23 * 23
    monkeypatch.setattr(moves, "_PARSED", {})
    monkeypatch.setattr(moves, "_TEXT_OF", {})
    assert looked_up == {m: (m.text(), Move.parse(m.text())) for m in syntactic_moves(13)}
    assert aliases == {a: Move.parse(a) for a in aliases}
    assert all(type(m) is Move for _, m in looked_up.values())


def test_move_texts_are_unique() -> None:
    moves = syntactic_moves(13)
    assert len({m.text() for m in moves}) == len(moves)


@pytest.mark.parametrize(
    "text",
    ["", " ", "a", "abc", "0ab", "01ab", "3aF", "3Wa", "2FF", "xa", "aX", "ua", "A b", "ab!", "-1ab", "3", "F", "W", "RR", "a b"],
)
def test_bad_move_text_is_a_move_parse_error(text: str) -> None:
    with pytest.raises(MoveParseError) as info:
        Move.parse(text)
    assert isinstance(info.value, ValueError)
    assert repr(text) in str(info.value)


@pytest.mark.parametrize("text", ["²ab", "٣ab", "9" * 5000 + "ab", "1234ab"])
def test_non_ascii_or_huge_counts_are_move_parse_errors(text: str) -> None:
    """int() accepts Unicode digits and refuses 4,300-digit strings with a bare
    ValueError: both must surface as MoveParseError, which callers catch."""
    with pytest.raises(MoveParseError):
        Move.parse(text)


def test_parse_moves_reads_a_line() -> None:
    assert parse_moves("ab, 3cd  S\tWF R") == [Move(0, 1), Move(2, 3, 3), DRAW, Move(WASTE, FOUNDATION), REDEAL]
    assert parse_moves("") == []
    with pytest.raises(MoveParseError):
        parse_moves("ab zz")


def test_column_letters() -> None:
    assert [column_letter(i) for i in (0, 5, 19)] == ["a", "f", "t"]


def test_illegal_move_message_names_the_move_and_the_reason() -> None:
    err = IllegalMove(Move.parse("ba"), IllegalReason.WRONG_SUIT)
    assert str(err) == "ba: the card may not be packed on a card of that suit"
    assert isinstance(err, ValueError)
    assert str(IllegalMove(None, IllegalReason.NOTHING_TO_UNDO)) == "there is no move to undo"
    assert IllegalReason("wrong_suit") is IllegalReason.WRONG_SUIT


# ------------------------------------------------ docs/notation.md stays true
DOC = Path(__file__).resolve().parent.parent / "docs" / "notation.md"


def doc_lines() -> list[str]:
    return [line.strip() for line in DOC.read_text().splitlines()]


def test_every_full_position_in_the_docs_parses_and_round_trips() -> None:
    from shared.engine import Game
    from shared.variants import VARIANTS

    positions = [l for l in doc_lines() if l.split(" ")[0] in VARIANTS and "..." not in l and "#" not in l]
    assert len(positions) >= 3
    for text in positions:
        assert Game.from_position(text).position() == text


def test_the_docs_deal_one_and_its_view_are_the_engines() -> None:
    from shared.engine import Game
    from shared.variants import FORTY_THIEVES

    lines = doc_lines()
    game = Game.new(FORTY_THIEVES, 1)
    assert game.position() in lines
    assert [m.text() for m in game.legal_moves()] == ["hd", "S"]
    game.push_text("hd")
    game.push_text("S")
    assert game.view().text() in lines


def test_the_docs_binary_example_is_the_engines() -> None:
    from shared.engine import Game

    text = "forty-thieves 1 Jc,Kd,Kh,Qs,Kc,Kd,Kh,Ks QcKc/Ks/-/-/-/-/-/-/-/- - -"
    data = Game.from_position(text).to_bytes()
    assert len(data) == 36
    body = DOC.read_text()
    start = body.index("01 00 01                    version 1")
    block = body[start : body.index("```", start)]
    listed = bytearray()
    for row in block.splitlines():
        hexpart = row[:28].split()
        repeat = 8 if "x 8" in row else 1
        listed += bytes.fromhex("".join(h for h in hexpart if h not in ("x", "8") or repeat == 1)) * repeat
    assert bytes(listed) == data
