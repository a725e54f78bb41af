"""bench/seek_idle.py runs end to end for a few seconds (its figures are printed, never asserted)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench" / "seek_idle.py"


def test_the_seek_idle_bench_holds_its_lone_seeks_and_reports_its_figures() -> None:
    done = subprocess.run([sys.executable, str(BENCH), "--seeks", "6", "--seconds", "1", "--settle", "0.5"],
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert report["seeks"] == 6 and report["pools"] == 6 and report["seconds"] >= 1
    # CPU is read in clock ticks (10 ms): an idle second of six lone seeks may well read 0.
    assert report["server_core"] >= 0 and report["redis_core"] >= 0 and report["wave_core"] >= 0
