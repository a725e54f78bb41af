"""The transport's libraries held to their tested ranges: the rule, this environment, and a refused start."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from process_util import _clean_env, thieves_server_command

from server.ops import dependencies

ROOT = Path(__file__).resolve().parent.parent
REQUIREMENTS = ["starlette>=0.40", "uvicorn>=0.54,<0.56", "websockets>=17,<18", "redis[hiredis]>=8.0,<8.3",
                'pytest>=8; extra == "dev"']
IN_RANGE = {"uvicorn": "0.55.0", "websockets": "17.4", "redis": "8.2.0"}


def test_versions_in_their_ranges_are_no_problem_and_unpinned_libraries_are_not_looked_at() -> None:
    assert dependencies.problems(REQUIREMENTS, IN_RANGE) == []
    assert dependencies.problems(["starlette>=9", "not a requirement ("], IN_RANGE) == []


def test_a_version_out_of_range_names_the_library_the_range_the_reason_and_the_mend() -> None:
    [problem] = dependencies.problems(REQUIREMENTS, {**IN_RANGE, "uvicorn": "0.57.0"})
    assert problem.startswith("uvicorn 0.57.0 is installed, but this server was tested with uvicorn")
    assert "<0.56" in problem and ">=0.54" in problem and "subclass" in problem
    assert problem.endswith("pip install 'uvicorn<0.56,>=0.54'")
    [older] = dependencies.problems(REQUIREMENTS, {**IN_RANGE, "redis": "5.2.1"})
    assert older.startswith("redis 5.2.1 is installed") and "cluster pipeline" in older
    [missing] = dependencies.problems(REQUIREMENTS, {**IN_RANGE, "websockets": None})
    assert missing.startswith("websockets is not installed; this server needs websockets")


def test_this_environment_is_in_the_pinned_ranges() -> None:
    """The suite runs on the versions pyproject.toml pins (a stale .venv or a hand upgrade says so here)."""
    assert dependencies.installed_problems() == []


def test_the_server_refuses_to_start_on_an_untested_uvicorn(tmp_path: Path) -> None:
    """A uvicorn whose metadata says 0.99.0 (a dist-info ahead of site-packages on the path): exit 2, one
    line naming it, and nothing started (no embedded Redis, no listening line)."""
    info = tmp_path / "uvicorn-0.99.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: uvicorn\nVersion: 0.99.0\n")
    env = _clean_env({"PYTHONPATH": str(tmp_path)})
    done = subprocess.run([*thieves_server_command(), "--port", "0", "--data-dir", str(tmp_path / "data")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("thieves-server: uvicorn 0.99.0 is installed, but this server was tested with"), done.stderr
    assert "Traceback" not in done.stderr and "listening" not in done.stderr
    assert not (tmp_path / "data").exists()
