"""Accounts, seats and ratings through the real ``thieves`` program against a real
``thieves-server`` process and Redis: register and the key kept, rotate, a revoked or forged
key, a ``thieves play`` killed with SIGKILL taking its seat and game back, leaving a lobby,
replaying a finished race from the server, profiles and the leaderboard at 80 columns.

Client processes run as a user runs them (``thieves ...``, in tmux for the terminal
program); every test has its own ``$XDG_CONFIG_HOME`` (conftest's ``private_config``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from client_cli.local_store import Account, LocalStore
from process_util import ServerProcess, http_json
from redis_util import PROCESS_ARGS, LiveServer, until

THIEVES = Path(sys.executable).with_name("thieves")
needs_tmux = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


@pytest.fixture
def srv(redis_url: str, tmp_path: Path) -> Iterator[ServerProcess]:
    """A real server process; a short presence lease, so that a seat left behind is noticed soon."""
    with ServerProcess(redis_url, args=[*PROCESS_ARGS, "--presence-lease", "2"],
                       log_path=tmp_path / "server.ops.log") as server:
        yield server


def thieves(*argv: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run the installed program and wait for it (stdout and stderr kept apart)."""
    return subprocess.run([str(THIEVES), *argv], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})


def command_until(argv: list[str], done: Callable[[str], bool], what: str,
                  env: dict[str, str] | None = None) -> str:
    """Run ``thieves argv`` until it exits 0 with an output ``done`` accepts; that output."""
    seen = [""]

    def attempt() -> str | None:
        out = thieves(*argv, env=env)
        seen[0] = f"exit {out.returncode}: {out.stdout}{out.stderr}"
        return out.stdout if out.returncode == 0 and done(out.stdout) else None

    return until(attempt, what, last=lambda: seen[0])  # type: ignore[no-any-return]


def created(srv: ServerProcess, *args: str, env: dict[str, str] | None = None) -> tuple[str, str]:
    """``thieves create``: the race's id and join code."""
    race, code, _ = created_with_token(srv, *args, env=env)
    return race, code


def created_with_token(srv: ServerProcess, *args: str, env: dict[str, str] | None = None) -> tuple[str, str, str]:
    """``thieves create``: the race's id, join code and creator token."""
    out = thieves("create", "--server", srv.url, "--deal", "1", "--time-limit", "600", *args, env=env)
    assert out.returncode == 0, out.stderr
    found = [re.search(rf"{label}:\s+(\S+)", out.stdout) for label in ("race id", "join code", "creator token")]
    race, code, token = (match.group(1) for match in found)  # type: ignore[union-attr]
    return race, code, token


def race_json(srv: ServerProcess, race: str) -> dict[str, Any]:
    status, body = http_json(f"{srv.url}/races/{race}")
    assert status == 200, body
    return body  # type: ignore[no-any-return]


def seated(srv: ServerProcess, race: str) -> list[tuple[int, str]]:
    """``(seat, name)`` of every racer the server holds now."""
    return sorted((line["seat"], line["name"]) for line in race_json(srv, race)["progress"])


def registered(srv: ServerProcess, name: str, env: dict[str, str] | None = None) -> str:
    out = thieves("register", name, "--server", srv.url, env=env)
    assert out.returncode == 0, out.stderr
    return out.stdout


class Term:
    """``thieves`` in a detached 80x24 tmux session on a private tmux server."""

    def __init__(self, shell: str) -> None:
        from test_tui_tmux import Tmux

        self.tmux = Tmux(["sh", "-c", shell])

    def screen(self) -> str:
        try:
            return self.tmux.screen()
        except subprocess.CalledProcessError:
            return "<session ended>"

    def wait_for(self, text: str) -> str:
        """The screen once ``text`` shows on it."""
        return self.wait_until(lambda screen: text in screen, f"{text!r} on the screen")

    def wait_until(self, check: Callable[[str], bool], what: str) -> str:
        """The screen once ``check`` holds of it (a status line can be drawn a frame before the board)."""
        seen = [""]

        def shown() -> str | None:
            seen[0] = self.screen()
            return seen[0] if check(seen[0]) else None

        return until(shown, what, last=lambda: "\n" + seen[0])  # type: ignore[no-any-return]

    def keys(self, *keys: str) -> None:
        self.tmux.keys(*keys)

    def pid(self) -> int:
        """The ``thieves`` process itself (the shell ``exec``s it)."""
        return int(self.tmux._run("display-message", "-p", "-t", "t", "#{pane_pid}").strip())

    def close(self) -> None:
        self.tmux.close()


@pytest.fixture
def terms() -> Iterator[list[Term]]:
    made: list[Term] = []
    try:
        yield made
    finally:
        for term in made:
            term.close()


def play_shell(*argv: str) -> str:
    """A shell that ``exec``s ``thieves play`` (so the pane's pid is the client's)."""
    return f"exec {THIEVES} play {' '.join(argv)}"


def play_then_report(*argv: str) -> str:
    """``thieves play`` whose exit status and last words stay on the screen after it ends."""
    return f"{THIEVES} play {' '.join(argv)}; echo \"exit status $?\"; sleep 120"


# ---------------------------------------------------------------- accounts
def test_register_keeps_the_key_and_refuses_a_name_taken_in_another_case(srv: ServerProcess,
                                                                         private_config: str) -> None:
    out = registered(srv, "Bob", env=None)
    store = LocalStore()
    account = store.account(srv.url)
    assert account is not None and account.name == "Bob" and account.key.startswith("bob.")
    assert f"registered Bob on {srv.url}" in out and str(store.path) in out
    assert store.path.stat().st_mode & 0o777 == 0o600
    assert account.key not in out  # the key is kept, not printed

    again = thieves("register", "ann", "--server", srv.url.removeprefix("http://"))  # the same server
    assert again.returncode == 1 and "already keeps the account Bob" in again.stderr

    taken = thieves("register", "BOB", "--force", "--server", srv.url)
    assert taken.returncode == 1
    assert "cannot register BOB: BOB is taken: the account Bob has it" in taken.stderr
    assert "pick another" in taken.stderr
    assert LocalStore().account(srv.url) == account  # a refused registration changes nothing here

    bad = thieves("register", "b", "--server", srv.url)
    assert bad.returncode == 2 and "2 to 24 letters" in bad.stderr


def test_rotate_replaces_the_key_and_a_revoked_or_forged_key_is_explained(srv: ServerProcess) -> None:
    registered(srv, "Bob")
    old = LocalStore().account(srv.url)
    assert old is not None
    out = thieves("account", "rotate", "--server", srv.url)
    assert out.returncode == 0, out.stderr
    assert "the old key no longer works" in out.stdout
    new = LocalStore().account(srv.url)
    assert new is not None and new.name == "Bob" and new.key != old.key

    req = urllib.request.Request(f"{srv.url}/players/Bob/key", data=b"{}", method="POST",
                                 headers={"Authorization": f"Bearer {old.key}", "Content-Type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(req, timeout=10)
    assert refused.value.code == 401 and json.loads(refused.value.read())["code"] == "bad_key"

    race, code = created(srv, "--seats", "2")
    for stale in (old.key, "bob." + "x" * 43):  # the revoked key, then a forged one
        LocalStore().set_account(srv.url, Account("Bob", stale))
        bot = thieves("bot", code, "--server", srv.url, "--pace", "0")
        assert bot.returncode == 1
        assert "the account key is not valid on this server" in bot.stderr, bot.stderr
        assert "thieves account forget" in bot.stderr
        rotate = thieves("account", "rotate", "--server", srv.url)
        assert rotate.returncode == 1 and "account key is not valid" in rotate.stderr
    assert seated(srv, race) == []


def test_a_bot_plays_as_the_stored_account_and_the_race_replays_from_the_server(srv: ServerProcess) -> None:
    registered(srv, "Bob")
    race, code, token = created_with_token(srv, "--seats", "1")
    bot = thieves("bot", code, "--server", srv.url, "--pace", "0", "--quiet", "--creator-token", token)
    assert bot.returncode == 0, bot.stderr
    status, results = http_json(f"{srv.url}/races/{race}/results")
    assert status == 200
    assert [(s["name"], s["account"]) for s in results["standings"]] == [("Bob", "bob")]

    out = thieves("replay", code, "--server", srv.url, "--quiet")
    assert out.returncode == 0, out.stderr
    first = out.stdout.splitlines()[0]
    assert first.startswith(f"race {race}, forty-thieves deal #1: Bob's game (seat 0, place 1 of 1")
    assert re.search(r"\d+ moves replayed; \d+/104 home", out.stdout)

    saved = Path(LocalStore().path.parent, "results.json")
    saved.write_text(json.dumps(results))
    out = thieves("replay", str(saved), "--quiet")
    assert out.returncode == 0 and "Bob's game" in out.stdout

    missing = thieves("replay", "NOSUCH", "--server", srv.url)
    assert missing.returncode == 2 and "neither a file nor a race" in missing.stderr
    _, lobby = created(srv, "--seats", "2")
    early = thieves("replay", lobby, "--server", srv.url)
    assert early.returncode == 2 and "has not ended yet" in early.stderr


def test_a_key_copied_to_another_machine_is_the_same_account_there(srv: ServerProcess, tmp_path: Path) -> None:
    registered(srv, "Bob")
    shown = thieves("account", "show", "--key", "--server", srv.url)
    key = re.search(r"^key: (\S+)$", shown.stdout, re.M).group(1)  # type: ignore[union-attr]
    other = {"XDG_CONFIG_HOME": str(tmp_path / "other-machine")}
    out = thieves("account", "import", key, "--server", srv.url, env=other)
    assert out.returncode == 0, out.stderr
    assert f"account Bob kept for {srv.url}" in out.stdout
    rotated = thieves("account", "rotate", "--server", srv.url, env=other)
    assert rotated.returncode == 0, rotated.stderr
    stale = thieves("account", "rotate", "--server", srv.url)  # this machine's copy was replaced
    assert stale.returncode == 1 and "account key is not valid" in stale.stderr
    forgot = thieves("account", "forget", "--server", srv.url)
    assert forgot.returncode == 0 and "forgot the account Bob" in forgot.stdout
    assert LocalStore().account(srv.url) is None


# ---------------------------------------------------------------- seats
@needs_tmux
def test_a_killed_play_takes_the_same_seat_and_game_back(srv: ServerProcess, terms: list[Term]) -> None:
    """``kill -9`` of ``thieves play`` mid-race; ``thieves play CODE`` (no --name) resumes it."""
    race, code = created(srv, "--seats", "2")
    first = Term(play_shell(code, "--name", "ann", "--server", srv.url))
    terms.append(first)
    first.wait_for("You created this race: press b to start it.")  # the creator token kept by create
    first.keys("b")
    first.wait_for("moves 0")
    first.keys("8", "4")  # deal 1: the ten of hearts onto the jack of hearts
    first.wait_for("moves 1")
    seat = LocalStore().seats(srv.url, code)
    assert [(s.race, s.name, s.account) for s in seat] == [(race, "ann", None)]

    os.kill(first.pid(), signal.SIGKILL)
    until(lambda: not first.tmux.alive(), "the killed client's session to end")

    second = Term(play_shell(code, "--server", srv.url))
    terms.append(second)
    second.wait_until(lambda s: "moves 1" in s and "T♥" in s.splitlines()[9] and "● online" in s,
                      "the game back: moves 1, the ten of hearts on column 8, online")
    assert seated(srv, race) == [(0, "ann")]  # the same seat, not a second one
    until(lambda: race_json(srv, race)["progress"][0]["status"] == "racing", "ann racing again")
    second.keys("u")  # the game goes on from where it was
    second.wait_for("moves 0")

    second.keys("q")
    second.wait_for("Quit the race?")
    assert f"thieves play {code}` takes your seat back" in " ".join(second.screen().split())


@needs_tmux
def test_an_account_takes_its_lobby_seat_back_with_the_key_alone(srv: ServerProcess, terms: list[Term]) -> None:
    registered(srv, "Bob")
    race, code = created(srv, "--seats", "3")
    first = Term(play_shell(code, "--server", srv.url))
    terms.append(first)
    first.wait_for("press b to start it")
    assert seated(srv, race) == [(0, "Bob")]
    os.kill(first.pid(), signal.SIGKILL)
    until(lambda: not first.tmux.alive(), "the killed client's session to end")
    LocalStore().forget_seat(srv.url, race, "Bob")  # no token kept: the key alone must do

    again = Term(play_shell(code, "--server", srv.url))
    terms.append(again)
    again.wait_for("press b to start it")
    assert seated(srv, race) == [(0, "Bob")]
    assert [s.account for s in LocalStore().seats(srv.url, race)] == ["bob"]  # the renewed token kept again


@needs_tmux
def test_q_in_the_lobby_leaves_the_seat_or_quits_for_now(redis_url: str, tmp_path: Path, terms: list[Term]) -> None:
    """``l`` frees the seat at once; ``k`` quits with the token kept, and the same command takes the
    seat back. A long presence lease here: the server frees an empty lobby seat once it runs out."""
    with ServerProcess(redis_url, args=[*PROCESS_ARGS, "--presence-lease", "600"],
                       log_path=tmp_path / "server.ops.log") as srv:
        race, code = created(srv, "--seats", "2")
        leaver = Term(play_then_report(code, "--name", "bob", "--anonymous", "--server", srv.url))
        terms.append(leaver)
        leaver.wait_for("press b to start it")
        assert seated(srv, race) == [(0, "bob")]
        leaver.keys("q")
        leaver.wait_for("Quit the lobby?")
        leaver.keys("l")
        screen = leaver.wait_for("exit status 0")
        assert f"you left race {code}: the seat is free" in screen
        assert seated(srv, race) == []
        assert LocalStore().seats(srv.url, race) == []  # nothing left to take back

        quitter = Term(play_then_report(code, "--name", "cy", "--server", srv.url))
        terms.append(quitter)
        quitter.wait_for("press b to start it")
        quitter.keys("s")  # ready: the seat's state comes back with it
        until(lambda: race_json(srv, race)["progress"][0]["status"] == "ready", "cy ready")
        quitter.keys("q")
        quitter.wait_for("Quit the lobby?")
        quitter.keys("k")
        screen = " ".join(quitter.wait_for("exit status 0").split())
        assert f"your seat in race {code} is held" in screen and f"`thieves play {code}` takes it back" in screen
        assert seated(srv, race) == [(0, "cy")]
        token = LocalStore().seats(srv.url, race)[0].token

        back = Term(play_shell(code, "--server", srv.url))  # no --name: the seat kept here
        terms.append(back)
        back.wait_for("press b to start it")
        assert seated(srv, race) == [(0, "cy")]
        assert race_json(srv, race)["progress"][0]["status"] == "ready"
        until(lambda: LocalStore().seats(srv.url, race)[0].token != token, "the renewed token kept")


# ---------------------------------------------------------------- history and ratings
def rated_race(srv: ServerProcess, tmp_path: Path) -> tuple[str, str, dict[str, str]]:
    """Bob (this test's own config) and ann (a second config directory) race a rated race by bot."""
    ann_env = {"XDG_CONFIG_HOME": str(tmp_path / "ann-config")}
    registered(srv, "Bob")
    registered(srv, "ann", env=ann_env)
    race, code, token = created_with_token(srv, "--seats", "2", "--rated")
    bob = subprocess.Popen([str(THIEVES), "bot", code, "--server", srv.url, "--pace", "0", "--quiet",
                            "--creator-token", token], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ann = thieves("bot", code, "--server", srv.url, "--pace", "0", "--quiet", env=ann_env)
    _, bob_err = bob.communicate(timeout=120)
    assert ann.returncode == 0 and bob.returncode == 0, (ann.stderr, bob_err)
    return race, code, ann_env


def test_a_rated_race_shows_on_the_leaderboard_at_80_columns(srv: ServerProcess, tmp_path: Path) -> None:
    rated_race(srv, tmp_path)

    text = command_until(["leaderboard", "--server", srv.url], lambda out: "Bob" in out and "ann" in out,
                         "both racers on the leaderboard")
    lines = text.splitlines()
    assert all(len(line) <= 80 for line in lines), lines
    assert lines[0] == "Leaderboard · Forty Thieves (forty-thieves)"
    ranks = [line.split() for line in lines[2:4]]
    assert sorted(r[1] for r in ranks) == ["Bob", "ann"]
    assert [r[0] for r in ranks] in (["1", "2"], ["1", "1"])  # two bots on one deal may tie
    assert all(r[2].endswith("?") and r[3] == "1" for r in ranks)  # one rated race: provisional
    assert lines[-1].startswith("? provisional")
    sixty = thieves("leaderboard", "--variant", "sixty-thieves", "--server", srv.url)
    assert sixty.returncode == 0 and "no rated players yet" in sixty.stdout


def test_me_and_player_show_the_rated_race(srv: ServerProcess, tmp_path: Path) -> None:
    race, code, ann_env = rated_race(srv, tmp_path)

    text = command_until(["me", "--server", srv.url], lambda out: code in out, "the race in Bob's history")
    lines = text.splitlines()
    assert all(len(line) <= 80 for line in lines), lines
    assert lines[0].startswith("Bob · registered ") and "1 race" in lines[0]
    forty = next(line for line in lines if line.startswith("Forty Thieves"))
    assert re.search(r"\d+\?", forty), forty
    row = next(line for line in lines if code in line)
    assert re.search(r"\b[12]/2\b", row) and re.search(r"\d+ \([+-]\d+\)", row), row

    ann = thieves("player", "ANN", "--server", srv.url, "--races", "1")
    assert ann.returncode == 0, ann.stderr
    assert ann.stdout.startswith("ann · registered ") and code in ann.stdout
    as_json = json.loads(thieves("me", "--json", "--server", srv.url, env=ann_env).stdout)
    assert as_json["profile"]["name"] == "ann" and as_json["races"][0]["race"] == race

    nobody = thieves("player", "nobody", "--server", srv.url)
    assert nobody.returncode == 1 and "no account has that name" in nobody.stderr


async def test_a_kept_seat_that_was_freed_is_replaced_by_a_new_one(server: LiveServer) -> None:
    """The lobby seat this machine kept was given back (here by another connection holding it): its
    token is refused (``bad_token``), and ``thieves play`` asks for a seat afresh instead of failing."""
    from client_cli.identity import SeatKeeper, resolve
    from client_cli.play_app import PlayApp
    from redis_util import Client
    from shared import protocol as p
    from test_tui_race import SIZE, create, until

    made = await create(server.url, seats=2, time_limit=120)
    code = made.race.code
    holder = await Client.connect(server)
    welcome = await holder.hello(code, "ann")
    store = LocalStore()
    store.save_seat(server.url, made.race.id, welcome.token, code, "ann", None)
    await holder.send(p.Leave())
    await holder.expect(p.Left)

    joining = resolve(store, server.url, code, None, anonymous=False)
    assert (joining.name, joining.token) == ("ann", welcome.token)
    keeper = SeatKeeper(store, server.url, joining)
    app = PlayApp(server.url, code, joining.name, key=None, token=joining.token, keeper=keeper)
    async with app.run_test(size=SIZE):
        await until(lambda: app.link.online, what="a new seat")
        assert app.state.fatal is None and app.state.seat is not None
    kept = store.seats(server.url, code)
    assert [s.name for s in kept] == ["ann"] and kept[0].token != welcome.token
