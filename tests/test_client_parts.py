"""Client pieces that need no terminal or server: keys, picking, bars, URLs, backoff."""

from __future__ import annotations

import random
import socket

import pytest

from client_cli.api import ApiError, create_race, list_races
from client_cli.board import BoardLayout, cell_width
from client_cli.connection import BACKOFF_MAX, LinkState, LinkStatus, backoff_delay, websocket_url
from client_cli.keymap import column_for_key, column_label, column_labels
from client_cli.picker import Cancelled, Picker, Ready, Refused, Selected, choose_count
from client_cli.racers import bar, racer_lines, standings_lines
from client_cli.shadow import shadow_game
from client_cli.table import format_clock
from shared import protocol as p
from shared.engine import Game
from shared.moves import FOUNDATION, WASTE, Move


# ------------------------------------------------------------------ keys
def test_key_scheme_covers_thirteen_columns_and_nothing_else() -> None:
    assert column_labels(10) == list("1234567890")
    assert column_labels(13) == list("1234567890!@#")
    assert [column_for_key(k, 13) for k in "1908!@#"] == [0, 8, 9, 7, 10, 11, 12]
    assert column_for_key("#", 10) is None
    assert column_for_key("w", 13) is None and column_for_key(None, 13) is None
    assert column_for_key("12", 13) is None
    with pytest.raises(ValueError):
        column_label(13)


# --------------------------------------------------------------- picking
def josephine(tableau: str) -> Game:
    # hearts and spades home except the cards placed below; clubs/diamonds fully home
    return Game.from_position(f"josephine 1 Kc,Kd,Th,Ts,Kc,Kd,Kh,Ks {tableau} - -")


def test_choose_count_finds_the_run_that_fits_and_prefers_whole_runs_on_empty_columns() -> None:
    g = josephine("JsQsKs/Kh/QhJh/-/-/-/-/-/-/-")
    # column a (bottom Js, Qs, top Ks) is not a descending run from the top; column c Qh Jh is.
    assert choose_count(2, 1, None, 2, g.reason) == 2  # Qh Jh onto Kh as a unit
    assert choose_count(2, 3, None, 2, g.reason) == 2  # empty column: the whole run
    assert choose_count(2, 3, 1, 2, g.reason) == 1  # a click on the top card alone wins
    assert choose_count(0, 1, None, 3, g.reason) == 1  # nothing fits: one card, the engine says why


def test_picker_flow_select_target_cancel_and_double_tap() -> None:
    g = Game.new()
    view = g.view()
    pk = Picker()
    assert isinstance(pk.pick(FOUNDATION, view, g.reason), Refused)
    assert isinstance(pk.pick(WASTE, view, g.reason), Refused)  # empty waste
    assert pk.pick(7, view, g.reason) == Selected(pk.selection)  # type: ignore[arg-type]
    assert pk.pick(3, view, g.reason) == Ready(Move(7, 3))
    assert pk.selection is None
    pk.pick(4, view, g.reason)
    assert pk.pick(4, view, g.reason) == Ready(Move(4, FOUNDATION))
    pk.pick(4, view, g.reason)
    assert pk.cancel() is True and pk.cancel() is False
    assert isinstance(Cancelled(), Cancelled)


def test_picker_refuses_an_empty_column_with_the_engine_words() -> None:
    g = Game.from_position("forty-thieves 1 Kc,Kd,Kh,Ks,Qc,Kd,Kh,Ks Kc/-/-/-/-/-/-/-/-/- - -")
    result = Picker().pick(1, g.view(), g.reason)
    assert isinstance(result, Refused) and "column 2 is empty" in result.message


def test_picker_waste_then_column_and_waste_reselects() -> None:
    g = Game.new()
    g.push(Move.parse("S"))
    view = g.view()
    pk = Picker()
    pk.pick(2, view, g.reason)
    assert isinstance(pk.pick(WASTE, view, g.reason), Selected) and pk.selection.place == WASTE  # type: ignore[union-attr]
    assert pk.pick(5, view, g.reason) == Ready(Move(WASTE, 5))


# ---------------------------------------------------------------- layout
def test_cell_width_and_clicks_outside_the_board() -> None:
    assert cell_width(10, 80) == 6 and cell_width(13, 54) == 4 and cell_width(8, 200) == 6
    layout = BoardLayout(Game.new().view(), 60, 20)
    assert layout.hit(0, 2) is None  # the blank row
    assert layout.hit(59, 5) is None  # right of the last column
    assert layout.hit(layout.column_x(2), 3).place == 2  # the key label row  # type: ignore[union-attr]
    assert layout.hit(layout.column_x(2), 19).count is None  # below the cards: the column itself  # type: ignore[union-attr]


def test_shadow_game_judges_visible_moves_like_the_real_one() -> None:
    g = Game.new()
    shadow = shadow_game(g.view())
    for move in Game.new().legal_moves():
        assert shadow.reason(move) is None
    for text in ("ab", "aF", "WF", "Wa", "ja"):
        m = Move.parse(text)
        assert shadow.reason(m) == g.reason(m)


# ------------------------------------------------------------ bars, text
def test_bar_fills_by_eighths_and_keeps_its_width() -> None:
    assert bar(0, 104, 10) == "·" * 10
    assert bar(104, 104, 10) == "█" * 10
    assert bar(52, 104, 10) == "█████" + "·" * 5
    assert bar(13, 104, 4) == "▌···"
    assert all(len(bar(k, 104, 7)) == 7 for k in range(105))


def progress(seat: int, name: str, home: int, rank: int, status: str = "racing") -> p.PlayerProgress:
    return p.PlayerProgress(seat=seat, name=name, home=home, total=104, moves=home * 2, status=status, rank=rank)


def test_racer_lines_rank_name_count_and_status_marks() -> None:
    text = racer_lines([progress(1, "bob", 52, 1), progress(0, "alice-with-a-long-name", 8, 2, "gave_up")], 0, 24)
    lines = text.plain.splitlines()
    assert lines[0].startswith(" 1. bob") and lines[0].endswith(" 52 ")
    assert lines[2].startswith(" 2. alice") and lines[2].endswith("  8✗") and len(lines[2]) == 24
    assert lines[1] == "    " + "██████████" + "·" * 10


def test_a_racer_who_took_a_hint_is_marked_in_bars_and_standings() -> None:
    helped = progress(0, "alice-with-a-long-name", 8, 1)
    helped.helped = True
    lines = racer_lines([helped, progress(1, "bob", 2, 2)], 1, 24).plain.splitlines()
    assert lines[0].startswith(" 1. alice-with-a") and "alice-with-a-long-name"[:14] + " †" in lines[0]
    assert len(lines[0]) == 24 and "†" not in lines[2]
    row = p.Standing(rank=1, seat=0, name="ann", status="gave_up", home=40, total=104, moves=70, helped=True)
    assert standings_lines([row], 0)[1].endswith("gave up †")


def test_standings_lines_show_finish_times_and_results() -> None:
    rows = [
        p.Standing(rank=1, seat=0, name="ann", status="finished", home=104, total=104, moves=180, finished_at=95_000),
        p.Standing(rank=2, seat=1, name="bo", status="gave_up", home=40, total=104, moves=70),
        p.Standing(rank=3, seat=2, name="cy", status="racing", home=12, total=104, moves=9),
    ]
    lines = standings_lines(rows, 20_000, me=1)
    assert "won in 1:15" in lines[1] and lines[1].startswith("  1  ann")
    assert lines[2].startswith("  2▶ bo") and lines[2].endswith("gave up")
    assert lines[3].endswith("out of time")  # the words every reader uses (shared.standings.status_words)


def test_format_clock() -> None:
    assert format_clock(0) == "0:00" and format_clock(75.9) == "1:15"
    assert format_clock(3725) == "1:02:05" and format_clock(-3) == "0:00"


# ------------------------------------------------------------ networking
def test_websocket_url_from_any_server_spelling() -> None:
    assert websocket_url("http://127.0.0.1:8000") == "ws://127.0.0.1:8000/ws"
    assert websocket_url("https://race.example/") == "wss://race.example/ws"
    assert websocket_url("localhost:9000") == "ws://localhost:9000/ws"
    assert websocket_url("ws://h:1/ws") == "ws://h:1/ws"


def test_backoff_doubles_with_jitter_and_caps() -> None:
    rng = random.Random(7)
    delays = [backoff_delay(a, rng) for a in range(1, 12)]
    assert 0.2 <= delays[0] <= 0.3 and 0.4 <= delays[1] <= 0.6
    assert all(d <= BACKOFF_MAX * 1.2 for d in delays) and delays[-1] >= BACKOFF_MAX * 0.8


def test_link_status_texts() -> None:
    assert LinkStatus(LinkState.ONLINE).text() == "● online"
    assert LinkStatus(LinkState.RECONNECTING, "x", 3, 1.25).text() == "◌ offline, retry 3 in 1.2s"
    assert LinkStatus(LinkState.CLOSED, "race over").text() == "✗ offline: race over"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_api_says_clearly_when_no_server_answers() -> None:
    server = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(ApiError, match="no race server answers at"):
        list_races(server)
    with pytest.raises(ApiError, match="no race server answers at"):
        create_race(server, p.Create())


# ------------------------------------------------------------- commands
def test_describe_move_names_the_keys_that_play_it() -> None:
    from client_cli.solo import describe_move, fallback_hint

    assert describe_move(Move.parse("hd")) == "8 → 4"
    assert describe_move(Move.parse("WF")) == "w (waste) → f (home)"
    assert describe_move(Move.parse("S")) == "space (draw)" and describe_move(Move.parse("R")).startswith("r ")
    assert fallback_hint(Game.new()) == (Move.parse("hd"), "a legal move")


def test_create_refuses_bad_settings_before_any_request(capsys: pytest.CaptureFixture[str]) -> None:
    from client_cli.main import main

    server = f"http://127.0.0.1:{free_port()}"
    assert main(["create", "--seats", "0", "--server", server]) == 2
    assert "seats" in capsys.readouterr().err
    assert main(["create", "--pool", "--deal", "7", "--server", server]) == 2
    assert "--deal goes with deal source 'number'" in capsys.readouterr().err
    assert main(["create", "--deal-source", "number", "--server", server]) == 2
    assert "needs --deal" in capsys.readouterr().err
    assert main(["list", "--server", server]) == 1
    assert "no race server answers at" in capsys.readouterr().err


def test_solo_command_refuses_unknown_variants_and_deals(capsys: pytest.CaptureFixture[str]) -> None:
    from client_cli.main import main

    assert main(["solo", "--variant", "ninety-thieves", "3"]) == 2
    assert "unknown variant" in capsys.readouterr().err
    assert main(["solo", "0"]) == 2
    assert "out of range" in capsys.readouterr().err


def test_frames_that_arrive_while_no_table_is_shown_draw_nothing() -> None:
    """The socket loop can deliver a frame while the app starts or shuts down;
    redrawing then must not raise (it used to fail a race test now and then)."""
    from client_cli.play_app import PlayApp
    from client_cli.watch_app import WatchApp

    play = PlayApp("http://127.0.0.1:9", "ABCDEF", "ann")
    watch = WatchApp("http://127.0.0.1:9", "ABCDEF")
    assert not play.table_shown()
    play.redraw()
    watch.redraw()


@pytest.mark.parametrize("command", [["list"], ["create"], ["play", "ABCDEF", "--name", "ann"], ["watch", "ABCDEF"],
                                     ["bot", "ABCDEF"]])
def test_every_network_command_refuses_a_bad_server_address_in_words(
    command: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """No traceback, exit 2, the same words from every command (issue #12, item 3)."""
    from client_cli.main import main

    assert main([*command, "--server", "notaurl"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"thieves {command[0]}: --server notaurl: ") and "host:port" in err
    monkeypatch.setenv("THIEVES_SERVER", "ftp://x")
    assert main(command) == 2
    assert "$THIEVES_SERVER" in capsys.readouterr().err


def test_host_and_port_alone_reach_the_server_for_create_and_list(capsys: pytest.CaptureFixture[str]) -> None:
    from client_cli.main import main

    server = f"127.0.0.1:{free_port()}"
    assert main(["list", "--server", server]) == 1
    assert f"no race server answers at http://{server} (connection refused)" in capsys.readouterr().err


def test_arguments_are_checked_against_the_schema_before_anything_is_sent(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Issue #12, items 2 and 10: limits in words, and no race is created for a name that cannot join."""
    from client_cli.main import main

    server = f"http://127.0.0.1:{free_port()}"  # nothing listens: a request would say so instead
    long_name = "x" * 40
    cases = [
        (["create", "--seats", "0"], "thieves create: --seats must be from 1 to 500, not 0"),
        (["create", "--time-limit", "100000"], f"thieves create: --time-limit must be from {p.MIN_TIME_LIMIT} to 86400, not 100000"),
        (["create", "--join", long_name], "thieves create: --join must be 1 to 32 characters long (this one has 40)"),
        (["create", "--join", ""], "thieves create: --join must be 1 to 32 characters long (this one has 0)"),
        (["play", "ABCDEF", "--name", long_name], "thieves play: --name must be 1 to 32 characters long (this one has 40)"),
        (["bot", "ABCDEF", "--name", ""], "thieves bot: --name must be 1 to 32 characters long (this one has 0)"),
        (["watch", "x" * 65], "thieves watch: RACE_OR_CODE must be 1 to 64 characters long (this one has 65)"),
    ]
    for argv, words in cases:
        assert main([*argv, "--server", server]) == 2, argv
        assert capsys.readouterr().err == words + "\n"


def test_a_dropped_racer_keeps_one_line_at_any_width() -> None:
    """⚡ is two cells wide: the row used to wrap (``2. bob`` / `` 1⚡``) in an 80x24 pane (issue #12, item 7)."""
    from rich.cells import cell_len

    for width in (23, 24, 40):
        lines = racer_lines([progress(0, "ann", 3, 1), progress(1, "bob", 1, 2, "disconnected")], 0, width).plain
        rows = lines.splitlines()
        assert len(rows) == 4 and all(cell_len(r) <= width for r in rows), rows
        assert rows[2].startswith(" 2. bob") and rows[2].endswith("  1⚡")


def test_the_lobby_says_ready_or_not_in_words_and_the_race_legend_explains_every_mark() -> None:
    """Issue #12, item 6: ``0…`` and ``✓`` were not explained in the lobby."""
    from client_cli.racers import legend_lines, lobby_lines
    from rich.cells import cell_len

    rows = lobby_lines([progress(0, "ann", 0, 1, "ready"), progress(1, "bob", 0, 1, "waiting")], 0, 23).plain.splitlines()
    assert rows == ["  ann           ✓ ready", "  bob       … not ready"]
    legend = legend_lines(helped=True, width=23)
    assert legend == ["number: cards home", "★ won  ✗ gave up", "⚡ offline  ■ blocked", "† played with help"]
    assert all(cell_len(line) <= 23 for line in legend)
    assert legend_lines(helped=False, width=60) == ["number: cards home  ★ won  ✗ gave up  ⚡ offline  ■ blocked"]


def test_a_status_has_one_word_in_the_terminal_and_on_the_web_pages() -> None:
    """Issue 23, item 9: the terminal's legend said "■ stuck" where the web said "■ blocked"; item 10:
    ``gave_up`` was shown raw. Every reader takes the words from shared.standings.status_words."""
    from client_cli.racers import RACE_LEGEND
    from client_cli.standings_text import history_lines
    from server.web.render import status_html
    from shared.standings import status_words

    for status, mark in (("blocked", "■"), ("gave_up", "✗"), ("finished", "★"), ("disconnected", "⚡")):
        assert f"{mark} {status_words(status)}" in RACE_LEGEND
        assert str(status_html(status)).endswith(f"</span> {status_words(status)}")
    assert status_words("blocked") == "blocked" and status_words("gave_up") == "gave up"
    assert status_words("racing", final=True) == str(status_html("racing", final=True)).split("</span> ")[1]
    entry = p.HistoryEntry(race="r", code="C", variant="forty-thieves", ended_at=0, place=1, players=1,
                           status="racing", home=3, total=104)
    assert history_lines([entry])[1].split()[-2:] == ["time", "-"] and "out of time" in history_lines([entry])[1]


def test_standings_fit_the_results_box_and_mark_help_with_a_legend() -> None:
    """``gave up, with help †`` wrapped under the ``#`` column of a 54-cell box (issue #12, item 7)."""
    row = p.Standing(rank=1, seat=0, name="a-long-player-name-here", status="gave_up", home=40, total=104,
                     moves=170, helped=True)
    lines = standings_lines([row], 0, 0)
    assert all(len(line) <= 54 for line in lines), lines
    assert lines[1].endswith("gave up †") and lines[-1] == "† played with help (took hints)"


def test_thieves_list_fits_80_columns_with_its_widest_values() -> None:
    """``thieves list`` printed rows 82 and more wide (cut or wrapped in an 80-column terminal)."""
    from client_cli.commands.races import HEADER, race_row
    from shared.variants import VARIANTS

    widest = max(VARIANTS, key=len)
    now = 1_800_000_000_000
    for status, ends_at in (("running", now + 86_400_000), ("lobby", None), ("countdown", None), ("finished", None)):
        race = p.RaceInfo(id="x" * 12, code="ABCDEF", variant=widest, deal_source="random", seats=500, players=500,
                          time_limit=86_400, undo=True, start_mode="creator", status=status, commitment="c",
                          created_at=now - 86_400_000, ends_at=ends_at)
        row = race_row(race, now)
        assert len(row) <= 80, row
        assert row.split()[:4] == ["ABCDEF", "x" * 12, status, widest]
    assert len(HEADER) <= 80 and HEADER.split()[:4] == ["code", "id", "status", "variant"]


def test_every_screen_of_the_client_hides_the_command_palette() -> None:
    """Footers showed ``^p palette`` (textual's command palette), a key that does nothing for a player."""
    import importlib
    import pkgutil

    import client_cli
    from textual.app import App

    for module in pkgutil.walk_packages(client_cli.__path__, "client_cli."):
        importlib.import_module(module.name)
    apps, todo = [], [App]
    while todo:
        for sub in todo.pop().__subclasses__():
            todo.append(sub)
            if sub.__module__.startswith("client_cli."):
                apps.append(sub)
    assert {a.__name__ for a in apps} >= {"SeekApp", "EventWatchApp", "WatchApp", "PlayApp", "SoloApp"}
    assert [a.__name__ for a in apps if a.ENABLE_COMMAND_PALETTE] == []


def test_the_event_watch_header_is_wrapped_to_80_columns_not_cut() -> None:
    """``thieves event watch`` cut its summary at 80 columns: the entrants and the round were lost."""
    from client_cli.event_watch import header_lines

    info = p.EventInfo(id="ev0123456789", name="The Spring Cup of the Thursday Club", format="swiss",
                       variant="forty-and-eight", rounds=7, heat_size=2, time_limit=600, join_seconds=60,
                       break_seconds=30, rated=True, late_entry=True, status="running", round=3,
                       round_state="running", created_at=1, entrants=123, summary="7 rounds of pairs, rated")
    lines = header_lines(info, 2_000_000_000_000)
    assert all(len(line) <= 80 for line in lines), lines
    text = " ".join(lines)
    assert "123 entrants" in text and "round 3/7 running" in text, lines
