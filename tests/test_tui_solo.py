"""``thieves solo`` headless: keys, clicks, messages, undo/redo, hints, win screen."""

from __future__ import annotations

import pytest

from client_cli.board import HEADER_ROWS, BoardLayout
from client_cli.solo import SoloApp, WinScreen
from client_cli.textshot import screen_text
from shared.cards import parse_card
from shared.engine import Game, Status
from shared.moves import IllegalReason, Move
from shared.variants import get_variant

FORTY = get_variant("forty-thieves")
SIZE = (80, 24)

# Two kings of clubs from a win: one on column 1, one on the waste.
NEAR_WON = "forty-thieves 1 Qc,Kd,Kh,Ks,Qc,Kd,Kh,Ks Kc/-/-/-/-/-/-/-/-/- Kc -"


def solo(number: int = 1, variant: str = "forty-thieves", position: str | None = None) -> SoloApp:
    v = get_variant(variant)
    game = Game.from_position(position) if position else None
    return SoloApp(v, number, game)


async def test_first_screen_shows_the_deal_in_80x24() -> None:
    app = solo(1)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        text = screen_text(app)
        lines = text.splitlines()
        assert len(lines) == 24
        assert "Forty Thieves #1" in lines[0] and "moves 0" in lines[0] and "home 0/104" in lines[0]
        assert "Stock 64" in text
        assert "1     2     3     4     5     6     7     8     9     0" in text
        # deal 1, first row: 3d 5h Jc Kh 5s 5h Kc Kc 8d Jd
        assert "3♦    5♥    J♣    K♥    5♠    5♥    K♣    K♣    8♦    J♦" in text
        assert "Draw" in lines[-1] and "Undo" in lines[-1]


async def test_a_move_by_keys_updates_engine_and_screen() -> None:
    app = solo(1)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("8", "4")  # Th from column 8 onto Jh in column 4
        assert app.game.move_stack == [Move.parse("hd")]
        assert app.game.tableau[3][-1] == parse_card("Th")
        assert app.picker.selection is None
        text = screen_text(app)
        assert "moves 1" in text.splitlines()[0]
        assert "T♥" in text.splitlines()[HEADER_ROWS + 1 + 4]  # fifth card row of the board


async def test_illegal_move_shows_engine_reason_and_play_goes_on() -> None:
    app = solo(1)
    async with app.run_test(size=SIZE) as pilot:
        before = app.game.position()
        await pilot.press("1", "2")  # 7d onto 9s
        assert app.game.position() == before
        assert app.message.text == "1 → 2: " + IllegalReason.NOT_ONE_RANK_LOWER.explanation  # the keys, not "ab"
        assert IllegalReason.NOT_ONE_RANK_LOWER.explanation in screen_text(app)
        await pilot.press("8", "4")  # the next move needs no dismissal
        assert app.game.move_count == 1
        assert app.message.text == ""


async def test_wrong_suit_and_empty_waste_reasons() -> None:
    app = solo(1)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("w")
        assert "waste" in app.message.text and IllegalReason.SOURCE_EMPTY.explanation in app.message.text
        await pilot.press("2", "f")  # 9s has no foundation
        assert app.message.text == "2 → f (home): " + IllegalReason.FOUNDATION_NOT_READY.explanation
        await pilot.press("r")  # single-pass game
        assert app.message.text == "r (turn the waste over): " + IllegalReason.STOCK_NOT_EMPTY.explanation


async def test_undo_redo_by_letters_and_ctrl_keys() -> None:
    app = solo(1)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("8", "4", "space")
        assert [m.text() for m in app.game.move_stack] == ["hd", "S"]
        await pilot.press("u")
        assert [m.text() for m in app.game.move_stack] == ["hd"]
        await pilot.press("ctrl+z")
        assert app.game.move_count == 0
        await pilot.press("u")
        assert app.message.text == IllegalReason.NOTHING_TO_UNDO.explanation
        await pilot.press("y")
        assert app.game.move_count == 1
        await pilot.press("ctrl+y")
        assert [m.text() for m in app.game.move_stack] == ["hd", "S"]
        await pilot.press("y")
        assert app.message.text == IllegalReason.NOTHING_TO_REDO.explanation
        assert "moves 2" in screen_text(app).splitlines()[0]


async def test_draw_then_waste_to_column_and_escape_cancels() -> None:
    app = solo(1)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("space")
        assert app.game.waste == [parse_card("3s")]
        assert "Stock 63" in screen_text(app) and "3♠" in screen_text(app)
        await pilot.press("w")
        assert app.picker.selection is not None
        await pilot.press("escape")
        assert app.picker.selection is None
        await pilot.press("3")  # nothing selected any more: this selects column 3
        assert app.picker.selection is not None and app.picker.selection.place == 2


async def test_double_tap_and_f_and_enter_send_home() -> None:
    position = "forty-thieves 1 Qc,Kd,Kh,Ks,Jc,Kd,Kh,Ks Kc/Qc/-/-/-/-/-/-/-/Kc - -"
    app = solo(position=position)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("1", "1")
        assert app.game.cards_home == 102
        await pilot.press("2", "enter")
        assert app.game.cards_home == 103
        await pilot.press("f")
        assert "pick a column or the waste first" in app.message.text


async def test_win_screen_then_new_deal() -> None:
    app = solo(position=NEAR_WON)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("1", "f", "w", "f")
        assert app.game.status() is Status.WON
        await pilot.pause()
        assert isinstance(app.screen, WinScreen)
        text = screen_text(app)
        assert "You won Forty Thieves #1!" in text and "104/104 home in 2 moves" in text
        await pilot.press("n")
        assert not isinstance(app.screen, WinScreen)
        assert app.game.cards_home == 0 and app.deal_number != 1
        assert f"#{app.deal_number}" in screen_text(app).splitlines()[0]


async def test_win_screen_escape_keeps_board_and_undo_reopens_play() -> None:
    app = solo(position=NEAR_WON)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("1", "f", "w", "f")
        await pilot.pause()
        await pilot.press("escape")
        assert not isinstance(app.screen, WinScreen)
        assert "WON" in screen_text(app).splitlines()[0]
        await pilot.press("u")
        assert app.game.status() is Status.PLAYING


async def test_mouse_clicks_play_moves_and_draw() -> None:
    app = solo(1)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        layout = app.board.layout_cache
        assert isinstance(layout, BoardLayout)
        await pilot.click("#board", offset=(layout.column_x(7), HEADER_ROWS))  # the bottom card: the column
        assert app.picker.selection is not None and app.picker.selection.place == 7
        await pilot.click("#board", offset=(layout.column_x(3), HEADER_ROWS))
        assert app.game.move_stack == [Move.parse("hd")]
        await pilot.click("#board", offset=(3, 1))  # the stock
        assert app.game.move_stack[-1] == Move.parse("S")
        await pilot.click("#board", offset=(30, 1))  # the waste
        assert app.picker.selection is not None and app.picker.selection.place == Move.parse("WF").src
        await pilot.click("#board", offset=(10, 0))  # the foundations
        assert app.message.text.startswith("w (waste) → f (home): ")


async def test_josephine_click_on_a_card_moves_the_run_from_it() -> None:
    position = "josephine 1 Kc,Kd,Th,Ks,Kc,Kd,Kh,Ks Kh/QhJh/-/-/-/-/-/-/-/- - -"
    app = solo(position=position, variant="josephine")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        layout = app.board.layout_cache
        await pilot.click("#board", offset=(layout.column_x(1), HEADER_ROWS))  # Qh, under Jh
        assert app.picker.selection is not None and app.picker.selection.count == 2
        await pilot.click("#board", offset=(layout.column_x(0), HEADER_ROWS))
        assert app.game.move_stack == [Move.parse("2ba")]
        await pilot.press("1", "3")  # keys only: the longest run that fits an empty column
        assert app.game.move_stack[-1] == Move.parse("3ac")


async def test_lucas_thirteen_columns_fit_and_shift_digits_pick_them() -> None:
    app = solo(1, "lucas")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        text = screen_text(app)
        labels = [line for line in text.splitlines() if line.split()[:2] == ["1", "2"]]
        assert labels and labels[0].split() == list("1234567890!@#")
        assert all(len(line) <= 80 for line in text.splitlines())
        await pilot.press("#")
        assert app.picker.selection is not None and app.picker.selection.place == 12
        await pilot.press("escape", "!")
        assert app.picker.selection.place == 10


async def test_ten_column_game_ignores_keys_beyond_its_columns() -> None:
    app = solo(1)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("#")
        assert app.picker.selection is None and app.message.text == ""


async def test_hint_marks_game_as_helped_and_shows_a_legal_move() -> None:
    app = solo(1)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("h")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.hint is not None and app.game.reason(app.hint) is None
        assert app.message.text.startswith("hint: ") and app.message.text.endswith(")")
        assert any(note in app.message.text for note in ("winning line", "legal"))
        assert "with help" in screen_text(app).splitlines()[0]
        await pilot.press("space")
        assert app.hint is None


async def test_restart_takes_all_back_and_redo_replays() -> None:
    app = solo(1)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("8", "4", "space", "space")
        start = Game.new(FORTY, 1)
        await pilot.press("R")
        assert app.game.same_position(start) and app.game.move_count == 0
        await pilot.press("y", "y", "y")
        assert [m.text() for m in app.game.move_stack] == ["hd", "S", "S"]


async def test_new_deal_asks_twice_once_moves_were_made() -> None:
    app = solo(1)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("space", "n")
        assert app.deal_number == 1 and "press n again" in app.message.text
        await pilot.press("n")
        assert app.deal_number != 1 and app.game.move_count == 0


async def test_blocked_game_says_so() -> None:
    # Tc, Td and Qh are buried under kings and jacks; no top card packs or goes home.
    blocked = "forty-thieves 1 9c,9d,Jh,Ks,9c,9d,Jh,Ks TcKc/TcKc/TdKd/TdKd/QcJc/QcJc/QdJd/QdJd/QhKh/QhKh - -"
    assert Game.from_position(blocked).status() is Status.BLOCKED
    app = solo(position=blocked)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert "BLOCKED" in screen_text(app).splitlines()[0]
        assert app.message.text.startswith("blocked: no legal move is left")


async def test_tall_column_folds_and_clicks_map_to_cards() -> None:
    run = "".join(r + "s" for r in "KQJT98765432A")
    position = f"forty-thieves 1 Kc,Kd,Kh,-,Kc,Kd,Kh,- {run}/{run}/-/-/-/-/-/-/-/- - -"
    app = solo(position=position)
    async with app.run_test(size=(80, 16)) as pilot:
        await pilot.pause()
        layout = app.board.layout_cache
        rows = layout.rows
        assert rows < 13 and len(layout.lines) == HEADER_ROWS + rows
        text = screen_text(app).splitlines()
        assert f"+{13 - (rows - 2) - 1}" in text[1 + HEADER_ROWS + 1]
        assert "A♠" in text[1 + HEADER_ROWS + rows - 1]
        top_hit = layout.hit(layout.column_x(0), HEADER_ROWS + rows - 1)
        assert top_hit is not None and top_hit.place == 0 and top_hit.count == 1
        bottom_hit = layout.hit(layout.column_x(1), HEADER_ROWS)
        assert bottom_hit is not None and bottom_hit.place == 1 and bottom_hit.count == 13
        await pilot.press("1", "f")
        assert app.game.cards_home == 79


@pytest.mark.parametrize("variant", ["sixty-thieves", "eighty-thieves", "forty-and-eight", "maria"])
async def test_every_width_of_the_family_fits_80x24(variant: str) -> None:
    app = solo(7, variant)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        text = screen_text(app)
        assert all(len(line) <= 80 for line in text.splitlines())
        assert "Stock" in text and get_variant(variant).name in text


async def test_forty_and_eight_turns_the_waste_over_with_r() -> None:
    position = "forty-and-eight 1 Kc,Kd,Kh,Ks,Qc,Kd,Kh,Ks -/-/-/-/-/-/-/- Kc -"
    app = solo(position=position, variant="forty-and-eight")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert "pass 1/2" in screen_text(app) and "r: turn over" in screen_text(app)
        await pilot.press("r")
        assert app.game.stock_count == 1 and app.game.pass_number == 2
        await pilot.press("space", "w", "f")
        assert app.game.status() is Status.WON
