"""What a new user trips over (issue 23), through the installed ``thieves`` program against a real
server and Redis: the commands a fresh clone's README leads to, and the words they answer with when
something is wrong. Each test names its item of the issue; each failed before its fix.

The server runs in this test's event loop, so the program runs as an asyncio subprocess (a blocking
one would stall the server). Every test has its own ``$XDG_CONFIG_HOME`` (conftest's autouse fixture);
a second machine is a second directory.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from redis_util import Client, LiveServer, eventually, live_server
from textual.app import App

from client_cli import api
from client_cli.local_store import Account, LocalStore
from client_cli.main import main
from client_cli.race_screens import StandingsScreen
from client_cli.textshot import screen_text
from shared import protocol as p

THIEVES = Path(sys.executable).with_name("thieves")
TOKEN = "organiser-token-of-the-new-user-tests"
KEY_SECRET = "A" * 43
"""A secret of the form every issued key has (43 URL-safe characters), which no account has."""


async def thieves(*argv: str, home: Path | None = None) -> tuple[int, str, str]:
    """Run the installed program as a user would (``home``: another machine's config directory)."""
    env = {**os.environ, **({"XDG_CONFIG_HOME": str(home)} if home is not None else {})}
    proc = await asyncio.create_subprocess_exec(str(THIEVES), *argv, stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.PIPE, env=env)
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    return proc.returncode or 0, out.decode(), err.decode()


@pytest.fixture
async def organised(redis_url: str) -> Any:
    async with live_server(redis_url, organiser_token=TOKEN) as server:
        yield server


# ------------------------------------------------------------------ item 8
async def test_create_suggests_a_play_command_that_works_without_an_account(server: LiveServer) -> None:
    """``thieves create`` said ``you start it with: thieves play CODE``, which without an account stops at
    "--name NAME is needed"."""
    code, out, err = await thieves("create", "--server", server.url)
    assert code == 0, err
    race = re.search(r"join code:\s+(\S+)", out).group(1)  # type: ignore[union-attr]
    assert f"you start it with:  thieves play {race} --name NAME   (" in out, out
    code, _, err = await thieves("register", "Ann", "--server", server.url)
    assert code == 0, err
    code, out, err = await thieves("create", "--server", server.url)
    race = re.search(r"join code:\s+(\S+)", out).group(1)  # type: ignore[union-attr]
    assert f"you start it with:  thieves play {race}   (" in out, "with an account kept, no --name"


# ----------------------------------------------------------------- item 10
async def test_a_daily_play_says_when_its_deal_is_shown_and_its_status_in_words(server: LiveServer) -> None:
    """The end dialog said "deal #0", ``thieves replay`` of the play "has no games in its results", the
    board printed ``gave_up`` raw and, for a day nobody played, "deal None, revealed". (The dialog's and
    the replay's words are the secrecy work's ``Results.secret_words``, landed meanwhile: asserted here
    for the daily deal a new user plays.)"""
    code, _, err = await thieves("register", "Ann", "--server", server.url)
    assert code == 0, err
    account = LocalStore().account(server.url)
    assert account is not None
    play = await asyncio.to_thread(api.play_daily, server.url, "forty-thieves", account.key)
    c = await Client.connect(server)
    await c.hello(play.code, key=account.key)
    await c.send(p.Ready(ready=True))
    await c.expect(p.Countdown)
    await c.give_up()
    finished = await c.expect(p.Finished)
    await c.close()

    code, out, err = await thieves("daily", "board", "--server", server.url)
    assert code == 0, err
    assert re.search(r"^\s+1\s+Ann\s+gave up\s+0\s+\(not counted\)$", out, re.M) and "gave_up" not in out, out
    code, out, err = await thieves("replay", play.code, "--server", server.url)
    assert code == 2 and "has no games" not in err
    tomorrow = (dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=1)).strftime("%Y-%m-%d")
    assert f"stay secret until {tomorrow} 00:00 UTC" in err, err  # the day's end (Results.secret_words)

    yesterday = (dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=1)).strftime("%Y-%m-%d")
    code, out, err = await thieves("daily", "board", "--date", yesterday, "--server", server.url)
    assert code == 0, err
    assert out.splitlines() == [f"the {yesterday} deal of forty-thieves: nobody played it, so no deal was drawn"]

    class Shell(StandingsHost):
        results = finished.results

    app = Shell()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        text = screen_text(app)
    assert "deal #0" not in text and "The race is over — Forty Thieves" in text
    assert f"stay secret until {tomorrow} 00:00 UTC" in text, text


class StandingsHost(App):  # type: ignore[type-arg]
    """An app that shows the end dialog of ``results`` at once."""

    results: p.Results

    def on_mount(self) -> None:
        self.push_screen(StandingsScreen(self.results, 0))


# ----------------------------------------------------------------- item 11
async def test_errors_are_said_in_the_organisers_and_players_words(organised: LiveServer) -> None:
    """A wrong organiser token answered in HTTP terms, ``verify nosuch`` printed "GET http://…: 404",
    ``event create ""`` spoke of "a player name ... at least 1 characters", ``event list`` printed
    nothing at all."""
    url = organised.url
    code, out, err = await thieves("event", "list", "--server", url)
    assert code == 0 and out.strip() == f"no events on {url} yet (an organiser makes one: thieves event create NAME)"
    code, _, err = await thieves("event", "create", "Cup", "--organiser-token", "wrong", "--server", url)
    assert code == 1 and "Authorization" not in err and "Bearer" not in err, err
    assert "give the organiser token the server was started with (--organiser-token TOKEN" in err, err
    code, _, err = await thieves("event", "create", "", "--organiser-token", TOKEN, "--server", url)
    assert code == 2 and err.strip() == (
        "thieves event create: the event's name must be 1 to 64 characters long (this one has 0)"), err
    code, out, err = await thieves("verify", "nosuch", "--server", url)
    words = err.replace(url, "URL")  # (the server's port may hold "404": port 40459 did)
    assert code == 2 and "404" not in words and "http" not in words.split("(")[0], err
    assert err.startswith("thieves verify: no event nosuch on this server"), err


@pytest.mark.parametrize("argv", [
    ["list"], ["create"], ["register", "Zed", "--force"], ["player", "ann"], ["me"], ["leaderboard"], ["replay", "ABCDEF"],
    ["daily", "board"], ["daily", "play"], ["account", "rotate"], ["account", "import", f"ann.{KEY_SECRET}"],
    ["event", "list"], ["event", "show", "e1"], ["event", "standings", "e1"], ["event", "join", "e1"],
    ["event", "create", "Cup", "--organiser-token", "t"], ["event", "start", "e1", "--organiser-token", "t"],
    ["verify", "e1"], ["challenge", "bob", "--no-play"], ["challenges"],
])
def test_every_command_says_no_race_server_answers_when_none_does(argv: list[str],
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """A server that is down printed "[Errno 111] Connection refused"; every request of every command
    goes through client_cli.api, which words it once (client_cli.wording.unreachable_words)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = f"http://127.0.0.1:{port}"
    LocalStore().set_account(server, Account("Ann", f"ann.{KEY_SECRET}"))
    assert main([*argv, "--server", server]) != 0
    err = capsys.readouterr().err
    assert f"no race server answers at {server} (connection refused)" in err and "Errno" not in err, err


# ----------------------------------------------------------------- item 12
async def test_a_key_is_checked_when_imported_and_a_replaced_one_is_said_so(server: LiveServer,
                                                                           tmp_path: Path) -> None:
    """``account import ann.notakey`` was accepted; after a rotation on another machine, ``thieves me``
    showed the profile with no word that the key kept no longer works."""
    url = server.url
    code, _, err = await thieves("register", "Ann", "--server", url)
    assert code == 0, err
    account = LocalStore().account(url)
    assert account is not None
    other = tmp_path / "other-machine"
    code, _, err = await thieves("account", "import", "ann.notakey", "--server", url, home=other)
    assert code == 2 and "not an account key" in err, err
    code, _, err = await thieves("account", "import", f"ann.{KEY_SECRET}", "--server", url, home=other)
    assert code == 1 and p.ErrorCode.BAD_KEY.explanation in err, err
    code, out, err = await thieves("account", "import", account.key, "--server", url, home=other)
    assert code == 0 and f"account Ann kept for {url}" in out, err
    code, out, err = await thieves("me", "--server", url, home=other)
    assert code == 0 and out.startswith("Ann · registered") and err == "", err

    code, _, err = await thieves("account", "rotate", "--server", url)
    assert code == 0, err
    code, out, err = await thieves("me", "--server", url, home=other)
    assert code == 1 and out.startswith("Ann · registered"), "the profile is still shown"
    assert "the key kept here for Ann does not work" in err and "thieves account rotate" in err, err


async def test_the_key_check_endpoint_changes_nothing_and_refuses_what_is_not_the_key(server: LiveServer) -> None:
    """``GET /players/{name}/key`` (docs/protocol.md): 200 with the registered name for the current key,
    401 ``bad_key`` for another or none, 404 for no such account."""
    code, _, err = await thieves("register", "Ann", "--server", server.url)
    assert code == 0, err
    account = LocalStore().account(server.url)
    assert account is not None
    bearer = {"authorization": f"Bearer {account.key}"}
    assert await server.http("GET", "/players/ANN/key", headers=bearer) == (200, {"name": "Ann"})
    status, body = await server.http("GET", "/players/ann/key", headers={"authorization": f"Bearer ann.{KEY_SECRET}"})
    assert (status, body["code"]) == (401, "bad_key")
    status, body = await server.http("GET", "/players/ann/key")
    assert (status, body["code"]) == (401, "bad_key")
    status, body = await server.http("GET", "/players/nobody/key", headers=bearer)
    assert (status, body["code"]) == (404, "player_not_found")
    assert await server.http("GET", "/players/ann/key", headers=bearer) == (200, {"name": "Ann"}), "still good"


def test_issued_keys_have_the_form_clients_check() -> None:
    from server.accounts.keys import new_key

    assert re.match(p.ISSUED_KEY_PATTERN, new_key("Ann-the_2nd")[0])


# ----------------------------------------------------------------- item 13
async def test_event_show_names_entrants_as_registered(organised: LiveServer, tmp_path: Path) -> None:
    """``event show`` printed the heats' entrants in lower case (their account ids)."""
    url = organised.url
    code, out, err = await thieves("event", "create", "Cup", "--organiser-token", TOKEN, "--join-seconds", "600",
                                   "--server", url)
    assert code == 0, err
    event = re.search(r"^event: (\S+)$", out, re.M).group(1)  # type: ignore[union-attr]
    for name in ("Ann", "BoB"):
        home = tmp_path / name
        assert (await thieves("register", name, "--server", url, home=home))[0] == 0
        code, _, err = await thieves("event", "join", event, "--server", url, home=home)
        assert code == 0, err
    code, _, err = await thieves("event", "start", event, "--organiser-token", TOKEN, "--server", url)
    assert code == 0, err

    shown: list[str] = []

    async def drawn() -> bool:
        code, out, err = await thieves("event", "show", event, "--server", url)
        assert code == 0, err
        shown[:] = [out]
        return re.search(r"^  \S{6}  ", out, re.M) is not None

    await eventually(drawn, "the heat drawn in `thieves event show`", timeout=20)
    out = shown[0]
    heat = re.search(r"^  \S{6}  (.*)$", out, re.M).group(1)  # type: ignore[union-attr]
    assert sorted(heat.split(", ")) == ["Ann", "BoB"], out


def test_the_rounds_column_has_a_legend() -> None:
    """The rounds column ("G G", "G P", ". -") had no legend; its words are the shared status words."""
    from client_cli.commands.event import standings_lines

    rounds = [p.EventRoundScore(round=1, race="r1", heat=1, status="gave_up", home=3, time_ms=None, matchpoints=0),
              p.EventRoundScore(round=2, race="r2", heat=1, status="racing", home=9, time_ms=None, matchpoints=1)]
    line = p.EventStandingLine(rank=1, account="ann", name="Ann", matchpoints=1, home=12, time_ms=120_000,
                               rounds=rounds)
    lines = standings_lines(p.EventStandings(event="e", status="finished", round=2, round_state="done", version=1,
                                             lines=[line]))
    assert lines[1].endswith("G P")
    assert lines[-1] == "rounds: W won  P out of time  G gave up  - no show  . absent  B bye"
    assert all(len(text) <= 80 for text in lines)


async def test_the_live_event_names_entrants_as_registered_and_their_status_in_words() -> None:
    """The live heats of ``thieves event watch`` showed the account id and ``gave_up`` raw."""
    import socket

    from client_cli.event_watch import EventWatchApp

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        down = f"http://127.0.0.1:{s.getsockname()[1]}"
    event = p.EventInfo(id="e1", name="Cup", format="duplicate", variant="forty-thieves", rounds=2, heat_size=8,
                        time_limit=60, join_seconds=10, break_seconds=0, rated=False, late_entry=True,
                        status="running", round=1, round_state="running", created_at=1, entrants=1)
    standing = p.EventStandingLine(rank=1, account="ann", name="Ann", matchpoints=0, home=3, time_ms=0)
    frame = p.EventLive(event=event, standings=p.EventStandings(event="e1", status="running", round=1,
                                                                round_state="running", version=1, lines=[standing]),
                        live=[p.EventLiveLine(account="ann", heat=1, race="r1", status="gave_up", home=3,
                                              matchpoints=0)], server_time=1)
    app = EventWatchApp(down, "e1")
    async with app.run_test(size=(80, 24)) as pilot:
        app.show(frame)
        await pilot.pause()
        text = screen_text(app)
    assert re.search(r"heat 1\s+Ann\s+gave up\s+3 home", text), text
