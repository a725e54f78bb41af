"""bench/seek_load.py runs end to end for a few seconds (its figures are printed, never asserted)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench" / "seek_load.py"


def test_the_seek_load_bench_places_every_seeker_and_reports_its_figures() -> None:
    done = subprocess.run([sys.executable, str(BENCH), "--seekers", "24", "--seconds", "2", "--wave", "0.2"],
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert report["placed"] == 24 and report["failures"] == 0 and report["races"] == 12
    assert report["seek_to_race_s"]["n"] == 24
    assert sum(report["rating_gap"]["histogram"].values()) == 12
    assert report["rating_gap"]["min_slack_to_bound"] >= 0  # every race within its documented bound
    assert report["server_cpu_ms_per_race"] > 0 and report["wave_cpu_ms_per_race"] > 0
