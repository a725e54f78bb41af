"""bench/soak_edge.py runs: a few seconds of honest races under every attack, against its own server.

The soak itself is run by hand (``python bench/soak_edge.py --minutes 10``); this guards that it starts
its server, plays whole races, runs every attack, stops by itself and reports (no timing asserted).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KINDS = {"slow_header", "slow_body", "sse_streams", "oversized_body", "nested_body", "non_ascii_token",
         "lookalike_name", "cross_site_text_plain", "organiser_guess", "pool_flood", "daily_flood"}


def test_a_short_soak_plays_honest_races_under_every_attack_and_reports() -> None:
    run = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "soak_edge.py"), "--seconds", "4", "--tables", "1", "--pace", "60",
         "--slow-sockets", "2", "--sse-streams", "3", "--flood", "1", "--oversize-kb", "64", "--checked-wait", "1",
         "--max-per-kind", "200", "--json"],
        cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stderr[-2000:]
    figures = json.loads(run.stdout.strip().splitlines()[-1])
    honest = figures["honest"]
    assert honest["errors"] == 0, honest["first_errors"]
    assert honest["moves_sent"] > 0 and honest["moves_acked"] == honest["moves_sent"] - honest["moves_lost"]
    assert set(figures["attacks"]) == KINDS, "every attack ran"
    assert all(0 < sum(outcomes.values()) <= 200 for outcomes in figures["attacks"].values()), "bounded in count"
    assert set(figures["attacks"]["organiser_guess"]) <= {"403 organiser_required", "429 organiser_rate_limited"}, \
        "every guess refused"
    assert figures["health"]["checks"] > 0 and figures["health"]["p50_ms"] is not None
    assert "honest:" in run.stdout and "health:" in run.stdout
