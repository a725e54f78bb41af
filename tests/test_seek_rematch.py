"""After a race found by ``thieves seek``, in real 80x24 terminals against a real server process: the
rematch both racers ask for is joined and started by both clients (they exited silently, leaving the new
race in its lobby), a rated race's end screen shows the rating change, and ``a`` seeks again with the
same settings."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Iterator

import pytest

from process_util import ServerProcess
from redis_util import PROCESS_ARGS
from test_accounts_e2e import thieves
from test_tui_tmux import THIEVES, Tmux

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
SLOW = 60.0
"""Seconds a screen may take to come (a busy machine, two clients and a server)."""


@pytest.fixture
def seek_server(redis_url: str) -> Iterator[ServerProcess]:
    with ServerProcess(redis_url, args=[*PROCESS_ARGS, "--seek-wave", "0.2", "--seek-deals", "random"]) as server:
        yield server


def seeker(server: ServerProcess, *argv: str, home: Path | None = None) -> Tmux:
    """``thieves seek ARGV`` in a terminal of its own; its exit status stays on the screen."""
    env = f"XDG_CONFIG_HOME={home} " if home is not None else ""
    shell = (f"{env}{THIEVES} seek {' '.join(argv)} --time-limit 60 --server {server.url}; "
             "echo \"exit status $?\"; sleep 60")
    return Tmux(["sh", "-c", shell])


def race_code(screen: str) -> str | None:
    """The code of the race on the table, once it runs (no move made yet)."""
    found = re.search(r"^ (\w{6}) · .*moves 0", screen, re.M)
    return found.group(1) if found and "Stock" in screen else None


def test_both_seekers_rematch_into_a_started_race_after_a_rated_race(seek_server: ServerProcess,
                                                                     tmp_path: Path) -> None:
    homes = {}
    for name in ("ann", "bob"):
        homes[name] = tmp_path / name
        homes[name].mkdir()
        out = thieves("register", name, "--server", seek_server.url, env={"XDG_CONFIG_HOME": str(homes[name])})
        assert out.returncode == 0, out.stderr
    terms = [seeker(seek_server, "--rated", home=homes[name]) for name in ("ann", "bob")]
    try:
        ann, bob = terms
        first = [term.wait_for(race_code, timeout=SLOW) for term in terms]
        code = race_code(first[0])
        assert code is not None and code == race_code(first[1])
        for term in terms:
            term.keys("g", "g")
        end = ann.wait_for(lambda s: "m: offer bob a rematch" in s, timeout=SLOW)
        assert "m rematch" in end
        ann.keys("m")
        bob.wait_for(lambda s: "ann wants a rematch: m accepts" in s, timeout=SLOW)
        bob.keys("m")
        anew = [term.wait_for(lambda s: race_code(s) not in (None, code), timeout=SLOW) for term in terms]
        assert race_code(anew[0]) == race_code(anew[1])  # both in the new race, started
        for term in terms:
            term.keys("g", "g")
        # The rematch is rated too: its end screen shows the rating change once the results are applied.
        for term in terms:
            end = term.wait_for(lambda s: re.search(r"rating \d+ → \d+ \([+-]\d+\)", s) is not None, timeout=SLOW)
            assert "The race is over" in end
            term.keys("q")
        for term in terms:
            assert "exit status 0" in term.wait_for(lambda s: "exit status" in s, timeout=SLOW)
    finally:
        for term in terms:
            term.close()


def test_a_seeks_again_with_the_same_settings(seek_server: ServerProcess) -> None:
    terms = [seeker(seek_server, "--name", name) for name in ("cy", "dee")]
    try:
        first = [term.wait_for(race_code, timeout=SLOW) for term in terms]
        code = race_code(first[0])
        for term in terms:
            term.keys("g", "g")
        for term in terms:
            end = term.wait_for(lambda s: "The race is over" in s, timeout=SLOW)
            assert "a seek again" in end and "rematch" not in end  # casual names: no rematch to offer
            term.keys("a")
        again = [term.wait_for(lambda s: race_code(s) not in (None, code), timeout=SLOW) for term in terms]
        assert race_code(again[0]) == race_code(again[1])
        assert "seeking forty-thieves, 2 players, 60 s, casual" not in again[0]  # on the table, not waiting
    finally:
        for term in terms:
            term.close()
