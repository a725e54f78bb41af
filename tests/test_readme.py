"""The README as a new user follows it from a fresh clone: its commands as written, ``make``'s targets.

A command written as bare ``thieves`` is not found after the quick start (the programs are in
``.venv/bin``); ``make run`` echoed its ``ARGS`` (an organiser token among them) into the terminal and
its log; ``make demo-event`` could not be given a port.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from process_util import _clean_env
from server.ops.embedded import free_port

ROOT = Path(__file__).resolve().parent.parent
VENV = Path(sys.executable).parent.parent
needs_make = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")

RUNNABLE = re.compile(r"(make|\.venv/bin/\S+|tmux|docker|curl|export)\b")
"""How a command of the README may begin: make, a program of .venv/bin, or a tool of the system's."""


def readme_commands() -> list[str]:
    """Every command of the README's ``sh`` blocks, each part of a ``&&`` or ``|`` chain on its own."""
    text = (ROOT / "README.md").read_text()
    out = []
    for block in re.findall(r"^```sh\n(.*?)^```", text, re.M | re.S):
        for line in block.splitlines():
            command = line.split("#", 1)[0].strip() if not line.lstrip().startswith("#") else ""
            out += [part.strip() for part in re.split(r"&&|\|", command) if part.strip()]
    return out


def test_the_readmes_commands_run_as_written_after_the_quick_start() -> None:
    commands = readme_commands()
    assert len(commands) > 30, "the blocks were read"
    assert [c for c in commands if not RUNNABLE.match(c)] == []
    programs = {c.split()[0].removeprefix(".venv/bin/") for c in commands if c.startswith(".venv/bin/")}
    assert "thieves" in programs and programs <= {"thieves", "thieves-server", "python"}, programs
    assert all((VENV / "bin" / name).exists() for name in programs), "each is installed in the .venv"


def make(*argv: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``make`` in the checkout with this interpreter's environment as its .venv (never rebuilt here)."""
    return subprocess.run(["make", "--no-print-directory", "-o", f"{VENV}/.installed", f"VENV={VENV}", *argv],
                          cwd=ROOT, capture_output=True, text=True, timeout=timeout, env=_clean_env(None))


@needs_make
def test_make_run_passes_args_to_the_server_and_echoes_no_secret() -> None:
    out = make("run", "ARGS=--organiser-token s3cret-of-the-organiser --port 99999")
    assert "thieves-server: --port must be 0 to 65535 (0: any free port), not 99999" in out.stderr, out.stderr
    assert "s3cret" not in out.stdout + out.stderr
    assert out.returncode != 0


@needs_make
def test_make_demo_event_runs_an_event_on_the_port_asked_for() -> None:
    port = free_port()
    out = make("demo-event", f"ARGS=--port {port} --bots 4 --heat 2 --rounds 1 --speed 4 --seed 1", timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert re.search(rf"at http://127\.0\.0\.1:{port}; watch it at http://127\.0\.0\.1:{port}/event/\w+", out.stdout)
    standings = out.stdout.split("final standings of 'Demo Cup'\n")[1].splitlines()[1:]
    assert sorted(line.split()[1] for line in standings) == ["bot01", "bot02", "bot03", "bot04"], standings
