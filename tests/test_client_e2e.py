"""A whole race through the real client: create and list by command, two racers and a
spectator over real WebSockets to the real server, standings on every screen, a replay."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path

from client_cli.play_app import PlayApp
from client_cli.race_screens import StandingsScreen
from client_cli.table import CSS_PATH
from client_cli.textshot import screen_text
from client_cli.watch_app import ReplayScreen, WatchApp
from redis_util import LiveServer
from test_tui_race import SIZE, until


THIEVES = Path(sys.executable).with_name("thieves")


async def thieves(*argv: str) -> tuple[int, str]:
    """Run the installed ``thieves`` program, as a user would, without blocking the server's loop."""
    proc = await asyncio.create_subprocess_exec(
        str(THIEVES), *argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
    )
    out, _ = await proc.communicate()
    return proc.returncode or 0, out.decode()


async def test_two_racers_and_a_spectator_through_a_whole_race(server: LiveServer) -> None:
    status, out = await thieves("create", "--server", server.url, "--seats", "2", "--time-limit", "120",
                                "--deal", "1")
    assert status == 0
    code = re.search(r"join code:\s+(\S+)", out).group(1)  # type: ignore[union-attr]
    token = re.search(r"creator token:\s+(\S+)", out).group(1)  # type: ignore[union-attr]
    assert f"thieves play {code} --name NAME" in out

    status, out = await thieves("list", "--server", server.url)
    assert status == 0 and re.search(rf"^{code}\s+\S+\s+lobby\s+forty-thieves\s+0/2\s", out, re.M)

    ann = PlayApp(server.url, code, "ann", token)
    bob = PlayApp(server.url, code, "bob")
    eve = WatchApp(server.url, code)
    async with eve.run_test(size=SIZE) as pe, ann.run_test(size=SIZE) as pa, bob.run_test(size=SIZE) as pb:
        await until(lambda: len(eve.state.players) == 2 and ann.link.online and bob.link.online, what="seats")
        await pa.press("b")
        await until(lambda: ann.state.can_move() is None and bob.state.can_move() is None, what="the start")

        status, out = await thieves("list", "--server", server.url)
        assert re.search(rf"^{code}\s+\S+\s+running\s+forty-thieves\s+2/2\s", out, re.M)

        await pb.press("8", "4")
        for _ in range(7):  # deal 1 turns up the ace of hearts on the seventh draw
            await pa.press("space")
        await until(lambda: ann.state.view is not None and ann.state.view.stock_count == 57, what="seven draws")
        await pa.press("w", "f")
        await until(lambda: ann.state.view is not None and ann.state.view.cards_home == 1, what="ace home")

        await until(lambda: [pp.name for pp in eve.state.ranking()] == ["ann", "bob"], what="spectator ranks")
        await pe.pause()
        watching = screen_text(eve)
        assert re.search(r"1\. ann\s+1", watching) and re.search(r"2\. bob\s+0", watching)
        assert " left · ● online · not checked · race clock " in watching.splitlines()[0]

        for pilot in (pb, pa):
            await pilot.press("g", "g")
        for app in (ann, bob, eve):
            await until(lambda app=app: isinstance(app.screen, StandingsScreen), what="standings")
        await pa.pause()
        await pb.pause()
        await pe.pause()
        for app in (ann, bob, eve):
            text = screen_text(app)
            assert "deal #1" in text
            assert re.search(r"1.? ann\s+1/104\s+8\s+gave up", text), text
            assert re.search(r"2.? bob\s+0/104\s+1\s+gave up", text), text
        assert ann.state.results == bob.state.results == eve.state.results

        await pe.press("1")  # replay the winner's game
        assert isinstance(eve.screen, ReplayScreen)
        await pe.pause()
        assert "Replay: ann · moves 0 · step 0/8 (start) · home 0/104" in screen_text(eve)
        await pe.press("right")
        assert "moves 1 · step 1/8 (space (draw))" in screen_text(eve)
        await pe.press("end")
        await pe.pause()
        replayed = screen_text(eve)
        assert "moves 8 · step 8/8 (w (waste) → f (home)) · home 1/104" in replayed
        assert "A♥" in replayed.splitlines()[1]
        await pe.press("escape", "2")
        assert isinstance(eve.screen, ReplayScreen) and eve.screen.record.name == "bob"


async def test_create_and_list_take_host_colon_port_like_play(server: LiveServer) -> None:
    hostport = server.url.removeprefix("http://")
    status, out = await thieves("create", "--server", hostport, "--seats", "1")
    assert status == 0, out
    code = re.search(r"join code:\s+(\S+)", out).group(1)  # type: ignore[union-attr]
    status, out = await thieves("list", "--server", hostport)
    assert status == 0 and code in out


async def test_list_all_shows_the_finished_races_with_nothing_of_their_deals(server: LiveServer) -> None:
    """``thieves list --all`` never showed a finished race: ``GET /races`` lists only the lobby and running
    ones. ``?finished=yes`` adds the latest finished ones, as the front page lists them (no deal)."""
    from web_util import new_race

    over = await new_race(server, names=("ann",))
    await over.move(0, 3)
    await over.end(server)
    running = await new_race(server, names=("bob",))
    status, out = await thieves("list", "--server", server.url)
    assert status == 0 and running.created.race.code in out and over.created.race.code not in out
    status, out = await thieves("list", "--all", "--server", server.url)
    assert status == 0 and re.search(rf"^{running.created.race.code}\s+\S+\s+running\s", out, re.M), out
    assert re.search(rf"^{over.created.race.code}\s+{over.id}\s+finished\s.*\sfinished$", out, re.M), out
    status, out = await thieves("list", "--all", "--json", "--server", server.url)
    listed = {race["code"]: race for race in json.loads(out)}
    assert listed[over.created.race.code]["status"] == "finished"
    assert not {"deal", "salt", "records", "standings"} & set(listed[over.created.race.code]), "nothing of the deal"
    status, answer = await server.http("GET", "/races?finished=maybe")
    assert status == 400 and answer["code"] == "bad_field"
    await over.close()
    await running.close()


async def test_create_with_a_name_that_cannot_join_creates_nothing(server: LiveServer) -> None:
    """Issue #12, item 10: the name is checked before the race exists; an empty one is refused too."""
    for name in ("x" * 40, ""):
        status, out = await thieves("create", "--server", server.url, "--join", name)
        assert status == 2 and out.startswith("thieves create: --join must be 1 to 32 characters long"), out
    status, out = await thieves("list", "--server", server.url)
    assert status == 0 and out.startswith("no open or running races"), out


async def test_a_replay_counts_moves_as_the_standings_do_and_steps_through_undos() -> None:
    """Issue #12, item 8: standings said 5 moves, the replay of the same game 7/7 (undos included)."""
    from textual.app import App

    from shared import protocol as p

    moves = ["hd", "S", "U", "S", "U", "S", "S"]  # 3 on the board: the server's (and the standings') count
    record = p.PlayerRecord(seat=0, name="ann", moves=moves, position="")
    results = p.Results(race="r", variant="forty-thieves", deal=1, salt="s", commitment="c", starts_at=0,
                        ended_at=1, standings=[p.Standing(rank=1, seat=0, name="ann", status="gave_up", home=0,
                                                          total=104, moves=3, helped=False)], records=[record])

    class Viewer(App):
        CSS_PATH = CSS_PATH

        def on_mount(self) -> None:
            self.push_screen(ReplayScreen(results, record))

    app = Viewer()
    async with app.run_test(size=SIZE) as pilot:
        await until(lambda: isinstance(app.screen, ReplayScreen), what="the replay")
        await pilot.press("end")
        await pilot.pause()
        status = screen_text(app).splitlines()[0]
        assert "moves 3 · step 7/7 (space (draw))" in status, status
        await pilot.press("left", "left")
        await pilot.pause()
        assert "moves 1 · step 5/7 (u (undo))" in screen_text(app).splitlines()[0]
