"""The real terminal program in a real terminal: ``thieves solo`` inside tmux.

Headless tests drive textual's own pilot; this one starts the installed
``thieves`` command in a detached tmux session of a fixed 80x24 size, types
keys with ``send-keys`` and reads the screen with ``capture-pane``, as the
README's "Play your first race" section shows. A private tmux server
(``-L``) keeps it away from anyone else's sessions.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Callable, Iterator

import pytest

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

THIEVES = Path(sys.executable).with_name("thieves")


class Tmux:
    """One detached session on a private tmux server."""

    def __init__(self, command: list[str], width: int = 80, height: int = 24) -> None:
        self.socket = f"thieves-test-{uuid.uuid4().hex[:8]}"
        env = dict(os.environ, TERM="xterm-256color", COLORTERM="truecolor")
        self._run("new-session", "-d", "-s", "t", "-x", str(width), "-y", str(height), *command, env=env)

    def _run(self, *args: str, env: dict[str, str] | None = None) -> str:
        out = subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, env=env, check=True)
        return out.stdout

    def keys(self, *keys: str) -> None:
        for key in keys:
            self._run("send-keys", "-t", "t", key)

    def screen(self) -> str:
        return self._run("capture-pane", "-p", "-t", "t")

    def wait_for(self, check: Callable[[str], bool], timeout: float = 15.0) -> str:
        deadline = time.monotonic() + timeout
        text = ""
        while time.monotonic() < deadline:
            try:
                text = self.screen()
            except subprocess.CalledProcessError:
                text = "<session ended>"
            if check(text):
                return text
            time.sleep(0.05)
        raise AssertionError(f"screen never matched; last screen:\n{text}")

    def alive(self) -> bool:
        return subprocess.run(["tmux", "-L", self.socket, "has-session", "-t", "t"], capture_output=True).returncode == 0

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True)


@pytest.fixture
def solo_term() -> Iterator[Tmux]:
    term = Tmux([str(THIEVES), "solo", "1"])
    try:
        yield term
    finally:
        term.close()


def test_thieves_solo_in_a_real_80x24_terminal(solo_term: Tmux) -> None:
    t = solo_term
    first = t.wait_for(lambda s: "Forty Thieves #1" in s and "3♦" in s)
    rows = first.splitlines()
    assert "moves 0" in rows[0] and "Stock 64" in first
    assert "1     2     3     4     5     6     7     8     9     0" in first
    assert len(rows) <= 24 and all(len(r) <= 80 for r in rows)

    t.keys("8", "4")  # Th onto Jh
    after = t.wait_for(lambda s: "moves 1" in s)
    assert "T♥" in after.splitlines()[9]

    t.keys("1", "2")  # 7d onto 9s: illegal, the reason shows, nothing moves
    t.wait_for(lambda s: "one rank lower than the card it goes on" in s)
    t.keys("Space")
    t.wait_for(lambda s: "moves 2" in s and "Stock 63" in s and "3♠" in s)
    t.keys("u", "u")
    t.wait_for(lambda s: "moves 0" in s and "Stock 64" in s)
    t.keys("y")
    t.wait_for(lambda s: "moves 1" in s)

    t.keys("q")
    deadline = time.monotonic() + 10
    while t.alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not t.alive(), "q should end the program"


def dead_server() -> str:
    """``host:port`` where nothing listens."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{sock.getsockname()[1]}"


@pytest.mark.parametrize("command", [["play", "ABCDEF", "--name", "ann"], ["watch", "ABCDEF"]])
def test_no_server_is_said_on_screen_and_in_the_exit_status(command: list[str]) -> None:
    """Issue #12, items 4 and 5: no endless ``retry 5 in 3.8s``, no empty table; the reason, then exit 1."""
    server = dead_server()
    shell = f"{THIEVES} {' '.join(command)} --server {server}; echo \"exit status $?\"; sleep 60"
    term = Tmux(["sh", "-c", shell])
    try:
        screen = term.wait_for(lambda s: "any key quits" in s)
        verb = "join" if command[0] == "play" else "watch"
        assert f"Cannot {verb} race ABCDEF" in screen and f"no race server answers at http://{server}" in screen
        assert "Draw" not in screen and "retry" not in screen
        term.keys("q")
        after = term.wait_for(lambda s: "exit status" in s)
        assert "exit status 1" in after
        assert f"thieves {command[0]}: no race server answers at http://{server} (connection refused)" in after.replace(
            "\n", ""
        )
    finally:
        term.close()
