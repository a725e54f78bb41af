"""``thieves event play`` as an entrant runs it: the installed command in a real 80×24 terminal (tmux),
against a real ``thieves-server`` process, through a whole duplicate event and a whole arena.

The command waits (saying for what and when), joins each heat or pairing with the account's key, shows
the normal play table (whose lobby names the event, the round and the start), and once the event is
over prints the final standings and exits 0. The test plays as a person would: ``g g`` gives up each
race as soon as its board shows, ``q`` closes the race's standings, and it checks from the server's
own records that every race drawn for the entrant was joined.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import Callable, Iterator

import pytest
from process_util import ServerProcess, http_json
from redis_util import PROCESS_ARGS
from test_tui_tmux import THIEVES, Tmux

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

TOKEN = "organiser-token-of-the-event-play-tests"
DEADLINE = 60.0


@pytest.fixture
def organised(redis_url: str, tmp_path: Path) -> Iterator[ServerProcess]:
    with ServerProcess(redis_url, args=[*PROCESS_ARGS, "--organiser-token", TOKEN],
                       log_path=tmp_path / "server.log") as server:
        yield server


def thieves_env(home: Path, organiser: bool) -> dict[str, str]:
    """The environment of a ``thieves`` process on one person's machine: ``home`` as its config directory
    (its account), and the organiser's shell exports the organiser token."""
    return dict(os.environ, XDG_CONFIG_HOME=str(home), **({"THIEVES_ORGANISER_TOKEN": TOKEN} if organiser else {}))


def thieves(server: ServerProcess, home: Path, *argv: str, organiser: bool = False) -> str:
    """One ``thieves`` command as its own process, with ``home`` as its config directory (one player's
    machine); its output, after checking that it exited 0."""
    env = thieves_env(home, organiser)
    done = subprocess.run([str(THIEVES), *argv, "--server", server.url], capture_output=True, text=True, env=env,
                          timeout=60)
    assert done.returncode == 0, f"thieves {' '.join(argv)}: {done.returncode}\n{done.stdout}{done.stderr}"
    return done.stdout


def entrant(server: ServerProcess, tmp_path: Path, name: str, event: str) -> Tmux:
    """``name`` registers and enters on a machine of its own, then runs ``thieves event play`` in tmux."""
    home = tmp_path / name
    thieves(server, home, "register", name)
    thieves(server, home, "event", "join", event)
    shell = (f"XDG_CONFIG_HOME={home} {THIEVES} event play {event} --server {server.url}; "
             "echo \"exit status $?\"; sleep 120")
    return Tmux(["sh", "-c", shell])


ACTIONS = (("The race is over", ("q",)), ("Give up", ("g", "g")), ("s Ready", ("s",)))
"""What a player does on seeing each screen: closes a race's standings, gives up a race as soon as its
board is up, says ready where the race waits for it (the daily deal)."""


def play_through(terms: list[Tmux], done: Callable[[], bool], lobby_seen: list[str],
                 look: Callable[[int, str], None] = lambda i, screen: None,
                 actions: tuple[tuple[str, tuple[str, ...]], ...] = ACTIONS) -> None:
    """Act as each terminal's player (``actions``) until ``done()``, keeping every lobby screen seen;
    ``look`` sees each screen first (terminal ``i``). An action is not repeated until its screen has gone:
    a key typed ahead would reach the next race."""
    deadline = time.monotonic() + DEADLINE
    pending: dict[int, str] = {}
    while not done():
        assert time.monotonic() < deadline, "the event never ended; screens:\n" + "\n---\n".join(
            t.screen() for t in terms)
        for i, term in enumerate(terms):
            screen = term.screen()
            assert "any key quits" not in screen, f"a race could not be joined:\n{screen}"
            if "The server starts the race at" in screen or "Get ready" in screen:
                lobby_seen.append(screen)
            look(i, screen)
            if i in pending and pending[i] in screen:
                continue
            pending.pop(i, None)
            for trigger, keys in actions:
                if trigger in screen:
                    term.keys(*keys)
                    pending[i] = trigger
                    break
        time.sleep(0.1)


def dialog_text(screen: str) -> str:
    """The words of the dialog over the table (between its borders, █), its rows joined as one text."""
    return " ".join(row.split("█")[1] for row in screen.splitlines() if row.count("█") >= 2)


def races_of(server: ServerProcess, event: str, account: str) -> list[str]:
    _, info = http_json(f"{server.url}/events/{event}")
    return [h["race"] for r in info["schedule"] for h in r["heats"] if account in h["entrants"]]


def joined(server: ServerProcess, race: str, name: str) -> bool:
    """Whether ``name`` played in the race (its results list only those who joined)."""
    status, results = http_json(f"{server.url}/races/{race}/results")
    return status == 200 and name in [s["name"] for s in results["standings"]]


def test_event_play_plays_both_rounds_of_a_duplicate_event_and_exits_with_the_standing(
        organised: ServerProcess, tmp_path: Path) -> None:
    """The player never presses a key on a race's end screen: it says when the next round starts, counting
    down, and goes on by itself (it used to wait for q, and a player who stepped away missed round 2)."""
    org = tmp_path / "organiser"
    out = thieves(organised, org, "event", "create", "Tmux Cup", "--rounds", "2", "--heat-size", "4",
                  "--time-limit", "30", "--join-seconds", "6", "--break-seconds", "4", "--deal-source", "random",
                  organiser=True)
    event = out.split()[1]
    term = entrant(organised, tmp_path, "ann", event)
    try:
        term.wait_for(lambda s: "waiting for the organiser to start 'Tmux Cup' (1 entrants)" in s)
        thieves(organised, org, "event", "start", event, organiser=True)
        lobbies: list[str] = []
        ends: list[str] = []

        def end_screens(i: int, screen: str) -> None:
            if "The race is over" in screen:
                ends.append(screen)

        play_through([term], lambda: "exit status" in term.screen(), lobbies, end_screens,
                     actions=tuple(a for a in ACTIONS if a[0] != "The race is over"))
        end = term.screen()
        assert "exit status 0" in end, end
        assert "'Tmux Cup' is over:" in end and "ann: rank 1 of 1, 0 matchpoints" in end
        said = "\n".join(" ".join(dialog_text(screen).split()) for screen in ends)
        assert "goes on by itself" in said, said
        assert re.search(r"next: waiting · Tmux Cup: round 2 of 2 starts at \d\d:\d\d:\d\d \(in 0:\d\d\)", said), \
            "round 1's end screen says when round 2 starts, what it waits for"
        lobby = "\n".join(lobbies)
        assert "Tmux Cup · round 1 of 2 · heat 1 of 1" in lobby and "Tmux Cup · round 2 of 2 · heat 1 of 1" in lobby
        assert "The server starts the race at" in lobby and " Ready" not in lobby, "a heat starts on time, not on ready"
        mine = races_of(organised, event, "ann")
        assert len(mine) == 2 and all(joined(organised, race, "ann") for race in mine), "both heats were played"
    finally:
        term.close()


def test_event_play_plays_every_arena_pairing_until_the_arena_ends(organised: ServerProcess, tmp_path: Path) -> None:
    org = tmp_path / "organiser"
    out = thieves(organised, org, "event", "create", "Tmux Blitz", "--format", "arena", "--duration", "15",
                  "--time-limit", "30", "--join-seconds", "5", "--deal-source", "random", organiser=True)
    event = out.split()[1]
    ann, bob = entrant(organised, tmp_path, "ann", event), entrant(organised, tmp_path, "bob", event)
    try:
        for term in (ann, bob):
            term.wait_for(lambda s: "waiting for the organiser to start 'Tmux Blitz'" in s)
        thieves(organised, org, "event", "start", event, organiser=True)
        lobbies: list[str] = []
        play_through([ann, bob], lambda: all("exit status" in t.screen() for t in (ann, bob)), lobbies)
        for term, name in ((ann, "ann"), (bob, "bob")):
            end = term.screen()
            assert "exit status 0" in end and "'Tmux Blitz' is over:" in end, end
            assert f"{name}: rank " in end and " points from " in end
        assert "Tmux Blitz · arena race" in "\n".join(lobbies)
        pairings = races_of(organised, event, "ann")
        assert pairings and all(joined(organised, race, "ann") and joined(organised, race, "bob") for race in pairings)
    finally:
        ann.close()
        bob.close()


def test_event_play_counts_down_to_a_scheduled_events_own_start(organised: ServerProcess, tmp_path: Path) -> None:
    """A scheduled event starts by itself: `event play` said "waiting for the organiser". It says when the
    event starts, and on a terminal its one line counts down in place."""
    org = tmp_path / "organiser"
    out = thieves(organised, org, "event", "create", "Timed Cup", "--starts-at", "+10", organiser=True)
    event = out.split()[1]
    term = entrant(organised, tmp_path, "ann", event)
    try:
        pattern = re.compile(r"waiting for 'Timed Cup' to start by itself at \d\d:\d\d:\d\d "
                             r"\(in (\d+:\d\d); 1 entrants\)")

        def shown(screen: str) -> list[str]:
            return pattern.findall(screen)

        first = shown(term.wait_for(lambda s: bool(shown(s))))
        later = shown(term.wait_for(lambda s: bool(shown(s)) and shown(s) != first))
        assert len(first) == len(later) == 1, "one line, redrawn in place"
        seconds = [int(m) * 60 + int(s) for m, s in (first[0].split(":"), later[0].split(":"))]
        assert seconds[1] < seconds[0], "counting down"
        assert "organiser" not in term.screen()
    finally:
        term.close()
