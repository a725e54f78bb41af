"""``thieves play`` screens against the real race server (uvicorn on a real port, private Redis).

Each test runs textual apps headless in the same event loop as the server,
so key presses cross a real WebSocket and every board drawn is the
server's view. Deal 1 is used where a test needs known legal moves.
"""

from __future__ import annotations

import asyncio
from typing import Callable

import pytest

from client_cli.api import create_race
from client_cli.connection import LinkState
from client_cli.keymap import describe_move
from client_cli.play_app import PlayApp
from client_cli.race_state import Phase
from client_cli.race_screens import ConfirmQuitScreen, FailedScreen, LeaveLobbyScreen, StandingsScreen
from client_cli.watch_app import WatchApp
from client_cli.wording import reject_words
from client_cli.textshot import screen_text
from enginekit import blocking_line
from redis_util import LiveServer, live_server
from server.ops.embedded import free_port
from shared import protocol as p
from shared.moves import IllegalReason

SIZE = (80, 24)


async def until(check: Callable[[], object], timeout: float = 8.0, what: str = "condition") -> None:
    """Wait for ``check()`` to hold; the server and the apps run meanwhile."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not check():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


async def create(url: str, **fields: object) -> p.Created:
    """``POST /races`` from a thread: the blocking HTTP client must not stall the server's loop."""
    fields.setdefault("deal_source", "number")
    fields.setdefault("deal", 1)
    return await asyncio.to_thread(create_race, url, p.Create(**fields))  # type: ignore[arg-type]


def racing(app: PlayApp) -> bool:
    return app.state.can_move() is None


async def start_alone(app: PlayApp, pilot: object) -> None:
    """The creator, seated alone, starts the race and waits for it to run."""
    await until(lambda: app.link.online, what="online")
    await pilot.press("b")  # type: ignore[attr-defined]
    await until(lambda: racing(app), what="the start")


async def test_lobby_start_moves_reject_and_bars(server: LiveServer) -> None:
    created = await create(server.url, seats=2, time_limit=120)
    code = created.race.code
    ann = PlayApp(server.url, code, "ann", created.creator_token)
    bob = PlayApp(server.url, code, "bob")
    async with ann.run_test(size=SIZE) as pa, bob.run_test(size=SIZE) as pb:
        await until(lambda: len(ann.state.players) == 2 and len(bob.state.players) == 2, what="both seated")
        await pa.pause()
        lobby = screen_text(ann)
        assert f"{code} · lobby 2/2 · ● online" in lobby.splitlines()[0]
        assert "You created this race: press b to start it." in lobby
        assert "Deal not checked: it may have no winning line." in lobby and "hints off" in lobby
        assert " · not checked" in lobby.splitlines()[0]
        assert "ann" in lobby and "bob" in lobby and "Racers · Forty Thieves" in lobby
        await pb.press("b")
        assert bob.message.text == "only the race's creator can start it"
        await pb.press("8")
        assert bob.message.text == "the race has not started yet"

        await pa.press("b")
        await until(lambda: racing(ann) and racing(bob), what="the start")
        await pb.press("8", "4")  # Th onto Jh
        await until(lambda: bob.state.view is not None and bob.state.view.move_count == 1, what="ack")
        await pb.press("1", "2")  # 7d onto 9s: the server refuses
        await until(lambda: bob.message.text != "", what="reject")
        assert bob.message.text == "1 → 2: " + IllegalReason.NOT_ONE_RANK_LOWER.explanation  # keys, not "ab"
        assert bob.state.view is not None and bob.state.view.move_count == 1
        await pb.pause()
        board = screen_text(bob)
        assert "moves 1 · home 0/104" in board.splitlines()[0]
        assert "T♥" in board.splitlines()[9]
        seat = bob.state.seat
        await until(lambda: seat in ann.state.players and ann.state.players[seat].moves == 1, what="bob's progress")

        await pb.press("u")  # undo is on in this race
        await until(lambda: bob.state.view is not None and bob.state.view.move_count == 0, what="undo ack")
        await pb.press("h")
        assert bob.message.text == p.ErrorCode.HINTS_NOT_ALLOWED.explanation


async def test_a_checked_race_with_hints_shows_the_hint_and_the_help_mark(server: LiveServer) -> None:
    created = await create(server.url, seats=2, time_limit=120, deal_source="pool", deal=None, hints=True)
    ann = PlayApp(server.url, created.race.code, "ann", created.creator_token)
    bob = PlayApp(server.url, created.race.code, "bob")
    async with ann.run_test(size=SIZE) as pa, bob.run_test(size=SIZE) as pb:
        await until(lambda: len(ann.state.players) == 2 and len(bob.state.players) == 2, what="both seated")
        await pa.pause()
        lobby = screen_text(ann)
        assert " · checked" in lobby.splitlines()[0]
        assert "Checked deal: a winning line is known." in lobby and "hints allowed" in lobby
        await pa.press("h")
        assert ann.message.text == "the race has not started yet"
        await pa.press("b")
        await until(lambda: racing(ann) and racing(bob), what="the start")
        await pa.press("h")
        await until(lambda: ann.message.text.startswith("hint: "), what="the hint")
        answer = ann.state.hint
        assert answer is not None and answer.move is not None and ann.hint is not None
        assert ann.hint.text() == answer.move
        assert ann.message.text.startswith(f"hint: {describe_move(ann.hint)}, ")  # keys, not "{answer.move}"
        assert ann.state.view is not None and ann.state.view.move_count == 0, "a hint plays nothing"
        await until(lambda: bob.state.players[0].helped, what="ann's help mark at bob's")
        await until(lambda: ann.state.helped, what="ann's own mark")
        await pa.pause()
        await pb.pause()
        assert screen_text(ann).splitlines()[0].rstrip().endswith("† with help")
        racers = screen_text(bob)
        assert "ann †" in racers and "† played with help" in racers and "bob †" not in racers


async def test_countdown_then_race_and_undo_disabled(redis_url: str) -> None:
    async with live_server(redis_url, countdown=1.0) as srv:
        created = await create(srv.url, seats=1, time_limit=60, undo=False)
        ann = PlayApp(srv.url, created.race.code, "ann", created.creator_token)
        async with ann.run_test(size=SIZE) as pa:
            await until(lambda: ann.state.phase() is Phase.LOBBY and ann.link.online, what="lobby")
            await pa.press("b")
            await until(lambda: ann.state.phase() is Phase.COUNTDOWN, what="countdown")
            await pa.pause()
            assert " · starts in " in screen_text(ann).splitlines()[0]
            await pa.press("space")
            assert ann.message.text == "wait for the start"
            await until(lambda: racing(ann), what="the start")
            await pa.press("space")
            await until(lambda: ann.state.view is not None and ann.state.view.stock_count == 63, what="draw ack")
            await pa.press("u")
            assert ann.message.text == p.ErrorCode.UNDO_DISABLED.explanation
            await pa.press("g")
            assert "give up? g or y gives up" in ann.message.text
            await pa.press("g")
            await until(lambda: isinstance(ann.screen, StandingsScreen), what="standings")
            await pa.pause()
            text = screen_text(ann)
            assert "The race is over — Forty Thieves, deal #1" in text and "gave up" in text
            assert " · finished · " in text.splitlines()[0], "the results box leaves the status line in view"
            assert "q Quit" in text.splitlines()[-1]
            await pa.press("escape")
            assert not isinstance(ann.screen, StandingsScreen)
            await pa.press("space")
            assert ann.message.text == "the race is over"


async def test_an_unknown_race_says_why_instead_of_opening_the_table(server: LiveServer) -> None:
    """Issue #12, item 5: the reason is the screen (no board, no game keys), and any key quits."""
    app = PlayApp(server.url, "NOSUCH", "ann")
    async with app.run_test(size=SIZE) as pilot:
        await until(lambda: isinstance(app.screen, FailedScreen), what="the refusal")
        await until(lambda: "Cannot join" in screen_text(app), what="the reason drawn")
        text = screen_text(app)
        assert "Cannot join race NOSUCH" in text and "no race has" in text and "NOSUCH" in text
        assert "Draw" not in text and "Give up" not in text and "Racers" not in text
        await pilot.press("q")
        await until(lambda: not app.is_running, what="the exit")


@pytest.mark.parametrize("role", ["player", "spectator"])
async def test_no_server_at_the_address_says_so_and_stops_retrying(role: str) -> None:
    """Issue #12, item 4: a first connection that reaches nothing is an error, not an endless retry."""
    url = f"http://127.0.0.1:{free_port()}"
    app = PlayApp(url, "ABCDEF", "ann") if role == "player" else WatchApp(url, "ABCDEF")
    async with app.run_test(size=SIZE) as pilot:
        await until(lambda: isinstance(app.screen, FailedScreen), what="the verdict")
        await until(lambda: "Cannot " in screen_text(app), what="the reason drawn")
        text = screen_text(app)
        verb = "join" if role == "player" else "watch"
        assert f"Cannot {verb} race ABCDEF" in text and f"no race server answers at {url}" in text
        assert "connection refused" in text
        assert app.link.status.state is LinkState.CLOSED
        await pilot.press("space")
        await until(lambda: not app.is_running, what="the exit")


async def test_reconnects_after_a_server_restart_and_keeps_the_game(redis_url: str) -> None:
    port = free_port()
    first_cm = live_server(redis_url, port=port)
    first = await first_cm.__aenter__()
    created = await create(first.url, seats=1, time_limit=300)
    ann = PlayApp(first.url, created.race.code, "ann", created.creator_token)
    async with ann.run_test(size=SIZE) as pa:
        await start_alone(ann, pa)
        await pa.press("8", "4")
        await until(lambda: ann.state.view is not None and ann.state.view.move_count == 1, what="ack")
        await first_cm.__aexit__(None, None, None)  # graceful restart: the server closes with 1012
        await until(lambda: not ann.link.online, what="the drop")
        await until(lambda: ann.message.text.startswith("offline: "), what="why it is offline")
        assert ann.message.text.endswith("; retrying by itself")
        await pa.pause()
        status = screen_text(ann).splitlines()[0]
        assert "◌ offline" in status and status.rstrip().endswith("· moves 1 · home 0/104"), status
        await pa.press("space")  # played while offline: sent after the welcome
        assert len(ann.state.pending) == 1
        async with live_server(redis_url, port=port):
            await until(lambda: ann.link.online, timeout=15, what="reconnection")
            await until(lambda: not ann.state.pending, what="the resent move's ack")
            view = ann.state.view
            assert view is not None and view.move_count == 2 and view.stock_count == 63
            assert ann.state.seat == 0 and ann.state.version > 0
            await pa.pause()
            assert "● online" in screen_text(ann).splitlines()[0]


@pytest.mark.parametrize("variant", ["lucas", "eighty-thieves"])
async def test_widest_variants_fit_beside_the_racers_panel(server: LiveServer, variant: str) -> None:
    created = await create(server.url, seats=1, time_limit=60, variant=variant)
    app = PlayApp(server.url, created.race.code, "ann", created.creator_token)
    async with app.run_test(size=SIZE) as pilot:
        await start_alone(app, pilot)
        await pilot.pause()
        text = screen_text(app)
        assert all(len(line) <= 80 for line in text.splitlines())
        labels = [line for line in text.splitlines() if line.split()[:2] == ["1", "2"]]
        columns = 13 if variant == "lucas" else 10
        assert labels and labels[0].split("▏")[0].split() == list("1234567890!@#")[:columns]


def footer(app: PlayApp) -> str:
    return screen_text(app).splitlines()[-1]


def offered(app: PlayApp) -> set[str]:
    """The keys the footer offers now, by their descriptions: the shown bindings the app's
    ``check_action`` does not hide (what the footer draws on its next recompose, which can lag on a
    busy machine; ``screen.active_bindings`` would ask whichever of the test's apps is active)."""
    return {b.description for b in app.BINDINGS if b.show and app.check_action(b.action, ()) is not False}


async def test_the_footer_offers_only_the_keys_that_work_now(server: LiveServer) -> None:
    """Issue #12, item 6: no ``h Hint`` in a race without hints, no Draw/Home/Give up in the lobby,
    ``b``/``s`` where they apply, and a lobby panel that says who is ready in words."""
    created = await create(server.url, seats=2, time_limit=120)
    ann = PlayApp(server.url, created.race.code, "ann", created.creator_token)
    bob = PlayApp(server.url, created.race.code, "bob")
    async with ann.run_test(size=SIZE) as pa, bob.run_test(size=SIZE) as pb:
        await until(lambda: len(ann.state.players) == 2 and len(bob.state.players) == 2, what="both seated")
        await pb.press("s")
        await until(lambda: any(pp.status == "ready" for pp in ann.state.players.values()), what="bob ready")
        await until(lambda: "✓ ready" in screen_text(ann), what="the ready mark")
        for app, starts in ((ann, True), (bob, False)):
            # The footer recomposes after the lobby redraws (on a busy machine it was seen still blank).
            await until(lambda: "s Ready" in footer(app), what=f"the lobby keys in {footer(app)!r}")
            keys = footer(app)
            assert "s Ready" in keys and "q Quit" in keys and ("b Start" in keys) is starts, keys
            assert not any(word in keys for word in ("Draw", "Home", "Give up", "Undo", "Hint")), keys
        lobby = screen_text(ann)
        assert "bob" in lobby and "✓ ready" in lobby and "ann" in lobby and "… not ready" in lobby
        assert "0…" not in lobby and " 0 " not in lobby.split("Racers")[1]
        await pa.press("space")
        assert ann.message.text == "the race has not started yet", "a hidden key still says why"

        await pa.press("b")
        await until(lambda: racing(ann) and racing(bob), what="the start")
        await until(lambda: "Draw" in footer(ann), what=f"the game keys in {footer(ann)!r}")
        keys = footer(ann)
        assert all(k in keys for k in ("Draw", "f Home", "u Undo", "g Give up", "q Quit")), keys
        assert "Hint" not in keys and "Ready" not in keys and "Start" not in keys, keys
        assert "number: cards home" in screen_text(ann)
        await pa.press("h")
        assert ann.message.text == p.ErrorCode.HINTS_NOT_ALLOWED.explanation


async def test_q_mid_race_asks_first_and_quits_at_once_otherwise(server: LiveServer) -> None:
    """Issue #12, item 11: a stray ``q`` ended a running race at once."""
    created = await create(server.url, seats=1, time_limit=120)
    ann = PlayApp(server.url, created.race.code, "ann", created.creator_token)
    async with ann.run_test(size=SIZE) as pa:
        await start_alone(ann, pa)
        await pa.press("q")
        await until(lambda: isinstance(ann.screen, ConfirmQuitScreen), what="the question")
        await until(lambda: "Quit the race?" in screen_text(ann), what="the question drawn")
        await pa.press("x")
        await until(lambda: not isinstance(ann.screen, ConfirmQuitScreen), what="back to the race")
        assert ann.is_running and ann.message.text == "still racing"
        await pa.press("8")  # keys play again
        assert ann.picker.selection is not None
        await pa.press("escape", "q", "y")
        await until(lambda: not ann.is_running, what="the confirmed quit")

    created2 = await create(server.url, seats=2, time_limit=120)
    lobby = PlayApp(server.url, created2.race.code, "bob")
    async with lobby.run_test(size=SIZE) as pl:
        await until(lambda: lobby.link.online, what="online")
        await pl.press("q")  # in the lobby q asks whether to give the seat back; q again keeps it and quits
        await until(lambda: isinstance(lobby.screen, LeaveLobbyScreen), what="the lobby's question")
        await pl.press("q")
        await until(lambda: not lobby.is_running, what="quitting the lobby, the seat kept")
    assert not lobby.state.left


async def test_a_frame_that_finds_the_table_only_partly_there_draws_nothing(server: LiveServer) -> None:
    """While an app starts or stops its widgets are mounted or removed one by one: a frame arriving when
    the board is there but the status line is not must draw nothing, not raise (a race test failed so
    once). The app draws again once the table is whole."""
    from textual.widgets import Static

    created = await create(server.url, seats=2, time_limit=120)
    for app, part in ((PlayApp(server.url, created.race.code, "ann"), "#board"),
                      (WatchApp(server.url, created.race.code), "#racers")):
        async with app.run_test(size=SIZE):
            await until(lambda: app.link.online, what="online")
            status = app.query_one("#status", Static)
            parent = status.parent
            assert parent is not None and app.screen.query(part)
            await status.remove()
            app.redraw()  # no status line: nothing drawn, nothing raised
            await parent.mount(Static("not drawn", id="status"), before=0)
            app.redraw()
            assert app.query_one("#status", Static).content == app.status_text(), "drawn again once whole"


async def test_a_stuck_player_is_told_so_and_offered_only_what_works(server: LiveServer) -> None:
    """Issue 23, item 9: stuck (no legal move, the stock empty) in a race without undo, the footer still
    offered ``space Draw`` and ``u Undo`` and nothing said no move was left; after giving up the
    player's own screen showed only ✗ beside its name."""
    line = blocking_line(3)
    created = await create(server.url, seats=2, time_limit=120, deal=3, undo=False)
    ann = PlayApp(server.url, created.race.code, "ann", created.creator_token)
    bob = PlayApp(server.url, created.race.code, "bob")
    async with ann.run_test(size=SIZE) as pa, bob.run_test(size=SIZE):
        await until(lambda: len(ann.state.players) == 2, what="both seated")
        await pa.press("b")
        await until(lambda: racing(ann), what="the start")
        for text in line:
            ann.link.send_move(text)
        await until(lambda: ann.state.my_status == "blocked", timeout=60, what="ann stuck")
        await until(lambda: "no legal move" in ann.message.text, what="the notice")
        assert ann.message.text == "no legal move is left: g gives up (your cards home still count)"
        keys = offered(ann)  # what the footer draws (read from the bindings: its redraw can lag on a busy machine)
        assert "Give up" in keys and "Draw" not in keys and "Undo" not in keys, keys
        notice = ann.message.text
        await pa.press("space")
        await until(lambda: ann.message.text != notice, what="the draw refused")
        assert ann.message.text == reject_words("S", IllegalReason.STOCK_EMPTY.value), "a hidden key says why"
        ann.message.clear()  # as the reason's timer does
        assert ann.message.text == notice, "the notice stays while it holds"
        await pa.press("g", "g")
        await until(lambda: ann.state.my_status == "gave_up", what="ann gave up")
        await until(lambda: "you gave up" in screen_text(ann).splitlines()[0], what="the status line")
        assert ann.message.text.startswith("you gave up: your ")
        assert not {"Draw", "Home", "Give up"} & offered(ann), offered(ann)
