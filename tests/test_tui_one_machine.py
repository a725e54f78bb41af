"""The README's "Play your first race" on one machine: the creator and a rival in two terminals (tmux at
80x24, as tests/test_tui_tmux.py) whose ``thieves`` share the one default config directory, against a
real server process.

The client keeps the creator token ``thieves create`` printed in that directory so that the creator's
own ``thieves play CODE`` can start the race; a rival playing from the same machine read the same file
and was told "You created this race" (and could start it). The kept token now belongs to one seat.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Iterator

import pytest

from process_util import ServerProcess
from redis_util import PROCESS_ARGS
from test_tui_tmux import THIEVES, Tmux

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

CREATOR = "You created this race: press b to start it."
RIVAL = "Waiting for the race's creator to start it."


@pytest.fixture
def race_server(redis_url: str) -> Iterator[ServerProcess]:
    with ServerProcess(redis_url, args=PROCESS_ARGS) as server:
        yield server


def create(server: ServerProcess) -> tuple[str, str]:
    """``thieves create --seats 2`` as terminal 2 runs it: the join code and the creator token printed."""
    done = subprocess.run([str(THIEVES), "create", "--seats", "2", "--time-limit", "300", "--server", server.url],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    code = re.search(r"join code:\s+(\S+)", done.stdout)
    token = re.search(r"creator token:\s+(\S+)", done.stdout)
    assert code is not None and token is not None, done.stdout
    return code.group(1), token.group(1)


def play(server: ServerProcess, *args: str) -> Tmux:
    return Tmux([str(THIEVES), "play", *args, "--server", server.url])


@pytest.mark.parametrize("creator_passes_token", [True, False], ids=["with-creator-token", "kept-token"])
def test_a_rival_on_the_creators_machine_is_not_taken_for_the_creator(race_server: ServerProcess,
                                                                      creator_passes_token: bool) -> None:
    code, token = create(race_server)
    ann = play(race_server, code, "--name", "ann", *(["--creator-token", token] if creator_passes_token else []))
    try:
        ann.wait_for(lambda s: CREATOR in s)
        bob = play(race_server, code, "--name", "bob")  # terminal 3: the same machine, the same config
        try:
            lobby = bob.wait_for(lambda s: "2/2 seats taken" in s)
            assert RIVAL in lobby and CREATOR not in lobby
            assert "b Start" not in lobby  # the footer offers the start to the creator alone
        finally:
            bob.close()  # a closed terminal: the same command takes the seat back, still as the rival
        again = play(race_server, code, "--name", "bob")
        try:
            lobby = again.wait_for(lambda s: "seats taken" in s)
            assert RIVAL in lobby and CREATOR not in lobby
        finally:
            again.close()
        ann.keys("b")  # the creator still starts the race
        ann.wait_for(lambda s: "left" in s and "moves 0" in s, timeout=30)
    finally:
        ann.close()


def test_two_accounts_on_one_machine_each_with_its_own_config_directory(race_server: ServerProcess,
                                                                         tmp_path: Path) -> None:
    """The README's way to try two accounts on one machine: the rival's terminal exports its own
    ``$XDG_CONFIG_HOME``; each terminal then plays as its own account."""
    def thieves(*argv: str, home: Path | None = None) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, **({"XDG_CONFIG_HOME": str(home)} if home is not None else {})}
        return subprocess.run([str(THIEVES), *argv, "--server", race_server.url], capture_output=True, text=True,
                              timeout=60, env=env)

    rival = tmp_path / ".rival"
    assert thieves("register", "ann").returncode == 0
    assert thieves("register", "bob", home=rival).returncode == 0
    assert (rival / "thieves" / "servers.json").exists()
    ann, bob = thieves("me"), thieves("me", home=rival)
    assert ann.returncode == bob.returncode == 0, ann.stderr + bob.stderr
    assert "ann" in ann.stdout.lower() and "bob" not in ann.stdout.lower()
    assert "bob" in bob.stdout.lower() and "ann" not in bob.stdout.lower()
