"""bench/event_round.py runs end to end on a small round over two server processes (no figure asserted:
speed is measured, not asserted) and prints every figure it promises."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_a_small_round_over_two_servers_prints_its_figures() -> None:
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "event_round.py"), "--entrants", "8", "--heat", "4",
                          "--servers", "2", "--pace", "0.02", "--time-limit", "30", "--join-seconds", "6",
                          "--join-spread", "0.5", "--watchers", "3"], cwd=ROOT, capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stdout + out.stderr
    for figure in ("moves/s", "us a move", "of a core per 1,000 racers", "p50", "p99", "KiB an entrant",
                   "acks and", "progress frames sent", "round trips to Redis for moves", "move answered",
                   "2 server process(es) on one Redis", "3 watcher(s)", "the event finished",
                   "the middle half of the round", "of a core per 1,000 racers moving once a second"):
        assert figure in out.stdout, out.stdout
