"""bench/io_floor.py runs end to end, with Redis and without, and its server did what it claims to measure:
group-committed script calls and their notes with Redis, none without (no figure of speed asserted)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _floor(*args: str) -> dict[str, float]:
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "io_floor.py"), "--clients", "16", "--seconds", "2",
                          "--warmup", "0.5", "--rate", "4", *args], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    for figure in ("frames answered:", "us a frame", "of a core per 1,000 clients"):
        assert figure in out.stdout, out.stdout
    found = re.search(r"per frame: 1 ack and ([\d.]+) progress frames sent, ([\d.]+) round trips to Redis, "
                      r"([\d.]+) notes heard", out.stdout)
    assert found, out.stdout
    return dict(zip(("progress", "round_trips", "notes"), map(float, found.groups())))


def test_with_redis_every_frame_waits_for_a_script_call_whose_note_is_heard() -> None:
    figures = _floor()
    assert 0 < figures["round_trips"] <= 1  # group commit: at most one call a frame
    assert figures["notes"] > 0  # the server's own subscription hears the script's notes
    assert figures["progress"] > 0


def test_without_redis_no_call_is_made() -> None:
    figures = _floor("--no-redis")
    assert figures["round_trips"] == 0 and figures["notes"] == 0
    assert figures["progress"] > 0
