"""The house's type rule as a check: mypy --strict over shared/ and server/ (the settings in pyproject.toml)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_shared_and_server_pass_mypy_strict() -> None:
    """Public functions keep their types, and a change that breaks one fails the suite, not a review."""
    done = subprocess.run([sys.executable, "-m", "mypy", "--no-error-summary"], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
