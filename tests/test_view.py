"""The player view: everything a racer may see and nothing of the stock's
order; its wire dict, its text form (``#N`` stock) and the plain-text board."""

from __future__ import annotations

import json
import random

import pytest

from enginekit import FACE_DOWN, build, play_randomly, shuffled_game
from shared.cards import card_text, parse_card
from shared.engine import Game
from shared.moves import DRAW, Move
from shared.render import render_text
from shared.view import PlayerView
from shared.variants import FORTY_AND_EIGHT, FORTY_THIEVES, VARIANTS, Variant


def restocked(game: Game, rng: random.Random) -> Game:
    """The same position with the stock in another order."""
    other = game.copy()
    while len(set(other.stock)) > 1 and other.stock == game.stock:
        rng.shuffle(other.stock)
    return other


def everything_shown(game: Game) -> tuple:
    view = game.view()
    return (view, json.dumps(view.to_dict(), sort_keys=True), view.text(), render_text(view), str(game))


# ------------------------------------------------------------------ content
def test_view_fields() -> None:
    game = build(["9s 8s", "Ah"], waste="4d 9c", stock="Jh", found=["5c"])
    game.push(Move.parse("bF"))
    view = game.view()
    assert view.variant == "forty-thieves"
    assert view.tableau[0] == (parse_card("9s"), parse_card("8s")) and view.tableau[1] == ()
    assert view.waste == (parse_card("4d"), parse_card("9c"))
    assert view.foundations == tuple(game.foundations)
    assert view.stock_count == game.stock_count
    assert (view.pass_number, view.stock_passes) == (1, 1)
    assert (view.move_count, view.cards_home, view.total_cards, view.status) == (1, 6, 104, "playing")
    assert view.foundation_cards()[0] == parse_card("5c")


def test_to_dict_shape_for_the_wire() -> None:
    game = Game.new(FORTY_THIEVES, 4)
    game.push(DRAW)
    d = game.view().to_dict()
    assert set(d) == {"variant", "tableau", "waste", "foundations", "stock", "pass", "passes", "moves", "home", "total", "status"}
    assert d["stock"] == 63 and isinstance(d["stock"], int)
    assert d["waste"] == [card_text(game.waste[0])]
    assert d["foundations"] == [None] * 8
    assert all(isinstance(c, str) and len(c) == 2 for col in d["tableau"] for c in col)
    assert json.loads(json.dumps(d)) == d


@pytest.mark.parametrize("variant", list(VARIANTS.values()), ids=list(VARIANTS))
def test_dict_round_trips(variant: Variant) -> None:
    rng = random.Random(8)
    game = play_randomly(shuffled_game(variant, rng), rng, 60)
    view = game.view()
    assert PlayerView.from_dict(view.to_dict()) == view
    assert PlayerView.from_dict(json.loads(json.dumps(view.to_dict()))).text() == view.text()


def test_face_down_cards_are_question_marks_and_round_trip() -> None:
    game = build(["4c 7d Ts 9h", "Js 9s"], hidden=[2, 1], variant=FACE_DOWN)
    view = game.view()
    assert view.to_dict()["tableau"][:2] == [["??", "??", "Ts", "9h"], ["??", "9s"]]
    assert PlayerView.from_dict(view.to_dict()) == view
    assert view.text().split(" ")[3].startswith("????|Ts9h/??|9s/")
    assert "##" in render_text(view)


def test_text_is_the_position_with_the_stock_counted() -> None:
    game = Game.new(FORTY_THIEVES, 5)
    game.push(DRAW)
    head, _, stock = game.position().rpartition(" ")
    assert game.view().text() == f"{head} #63"
    assert len(stock) == 126


def test_view_status_follows_the_game() -> None:
    won = Game.from_position("forty-thieves 1 Kc,Kd,Kh,Ks,Kc,Kd,Kh,Ks -/-/-/-/-/-/-/-/-/- - -")
    assert won.view().status == "won" and won.view().cards_home == 104
    blocked = build(["Kc", "Kd", "Kh", "Ks", "Kc", "Kd", "Kh", "Ks", "Jc", "Jd"], waste="Jh", stock="-", rest_to=0)
    assert blocked.view().status == "blocked"


# --------------------------------------------------------- no stock order
@pytest.mark.parametrize("variant", list(VARIANTS.values()), ids=list(VARIANTS))
def test_games_differing_only_in_stock_order_look_the_same(variant: Variant) -> None:
    rng = random.Random(variant.columns)
    game = Game.new(variant, 17)
    other = restocked(game, rng)
    assert other.stock != game.stock and sorted(other.stock) == sorted(game.stock)
    assert everything_shown(game) == everything_shown(other)
    # and they stay alike through the same moves that draw nothing
    for _ in range(30):
        moves = [m for m in game.legal_moves() if m != DRAW]
        if not moves:
            break
        move = rng.choice(moves)
        game.push(move)
        other.push(move)
        assert everything_shown(game) == everything_shown(other)


def test_same_drawn_cards_and_differing_rest_look_the_same() -> None:
    rng = random.Random(3)
    game = Game.new(FORTY_THIEVES, 9)
    for _ in range(5):
        game.push(DRAW)
    other = restocked(game, rng)  # the five drawn cards agree; the 59 unseen do not
    assert everything_shown(game) == everything_shown(other)


def test_view_shows_no_stock_card() -> None:
    game = Game.new(FORTY_THIEVES, 6)
    shown = {c for col in game.tableau for c in col}
    text = json.dumps(game.view().to_dict())
    for card in set(game.stock) - shown:
        assert card_text(card) not in text


# -------------------------------------------------------------------- render
def test_render_text_board() -> None:
    game = build(["9s 8s", "Ah", ""], waste="4d 9c")
    game.push(Move.parse("bF"))
    lines = render_text(game.view()).splitlines()
    assert lines[0].startswith("forty-thieves  home 1/104  moves 1  playing")
    assert lines[1] == "foundations: -- -- Ah -- -- -- -- --"
    assert lines[2].startswith("stock:  ") and "waste: 9c (2)" in lines[2]
    assert lines[3].split() == list("abcdefghij")
    assert lines[4].split() == ["9s"] and lines[5].split() == ["8s"]


def test_render_shows_the_pass_where_there_are_two() -> None:
    kings = ["Kc", "Kd", "Kh", "Ks", "Kc", "Kd", "Kh", "Ks"]
    game = build(kings, variant=FORTY_AND_EIGHT, waste="5c", stock="-", rest_to=0)
    assert "pass 1/2" in render_text(game.view())
    assert "pass" not in render_text(build(["Kc"]).view())


# ---------------------------------------------------------- the wire board
def test_wire_view_is_the_player_view_on_the_wire() -> None:
    from shared import protocol as p

    game = build(["4c 7d Ts 9h", "Js 9s", ""], hidden=[2, 1], variant=FACE_DOWN, waste="5c")
    assert p.View.of_game(game) == p.View.from_player_view(game.view())
    for text in ("bc", "S", "U", "ad"):  # a flip, a draw, an undo of the draw, a plain move
        game.pop() if text == "U" else game.push(Move.parse(text))
        assert p.View.of_game(game) == p.View.from_player_view(game.view())
    assert p.View.of_game(game).tableau[:4] == [["??", "??", "Ts"], ["Js"], ["9s"], ["9h"]]


def test_wire_view_checks_the_position_rather_than_trusting_its_memo() -> None:
    """A position changed without a move (tests and tools do it) still shows as it is."""
    from shared import protocol as p

    game = build(["4c 7d Ts 9h", "Js 9s"], variant=FACE_DOWN)
    p.View.of_game(game)
    game.hidden[0] = 2
    game.tableau[1].append(game.tableau[1].pop(0))
    game.waste.append(game.stock.pop())
    assert p.View.of_game(game).tableau[:2] == [["??", "??", "Ts", "9h"], ["9s", "Js"]]
    assert p.View.of_game(game) == p.View.from_player_view(game.view())


def test_wire_view_of_an_inconsistent_position_is_still_the_player_views() -> None:
    """More face-down cards than a column holds (only a hand-made position can): no shortcut differs."""
    from shared import protocol as p

    game = build(["4c 7d Ts", "Js 9s"], variant=FACE_DOWN)
    p.View.of_game(game)
    game.hidden[0] = 5
    assert p.View.of_game(game) == p.View.from_player_view(game.view())
    game.tableau[0].append(game.tableau[1].pop())
    assert p.View.of_game(game) == p.View.from_player_view(game.view())
    game.tableau[0][:] = game.tableau[0][:1]
    assert p.View.of_game(game) == p.View.from_player_view(game.view())
