"""bench/faults.py runs: one short round of ``aof-kill`` against its own Redis and servers, and its verdict's parts.

The harness itself is run by hand (``python bench/faults.py``); this guards that it starts its
deployment, kills and restarts Redis, plays through it, and prints its figures in the shape the
report is made of (no timing asserted: a stall is printed, never checked).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from process_util import run_bench

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

from fault_play import Acked, Player, Stored, longest_gap, verdict  # noqa: E402

COLUMNS = {"acked", "lost", "diverged", "stranded", "unended", "stall_failed_s", "stall_healthy_s", "fault_s",
           "tracebacks", "never_retrieved", "move_conflicts"}


def test_one_short_round_of_aof_kill_prints_every_figure() -> None:
    run = run_bench("faults.py", "--fault", "aof-kill", "--rounds", "1", "--races", "3", "--late", "1",
                    "--before", "1", "--after", "1", "--json", timeout=55)
    assert run.returncode == 0, run.stderr[-3000:]
    lines = run.stdout.strip().splitlines()
    assert lines[0].startswith("command: ") and "server under test: " in run.stdout
    assert "load average" in run.stdout
    assert any(line.startswith("aof-kill round 1/1: acked ") for line in lines)
    header = next(line for line in lines if line.startswith("fault "))
    assert "lost" in header and "stall healthy" in header
    figures = json.loads(lines[-1])
    assert set(figures) == {"aof-kill"}
    total = figures["aof-kill"]["total"]
    assert set(total) == COLUMNS
    assert total["acked"] > 0, "players played before and after the kill"
    assert total["stall_failed_s"] is not None and total["stall_healthy_s"] is None, "one Redis: no healthy node"
    assert all(isinstance(total[key], int) and total[key] >= 0 for key in ("lost", "diverged", "stranded", "unended"))


def player(line: list[str], acked: int, sent: int, seat: int = 0) -> Player:
    pl = Player("r", f"p{seat}", "ws://nowhere", line, 1.0, token="t", seat=seat)
    pl.acked = [Acked("r", seat, i + 1, line[i], float(i)) for i in range(acked)]
    pl.sent = sent
    return pl


def test_the_verdict_counts_lost_acks_divergence_and_ghost_seats() -> None:
    line = ["a", "b", "c", "d"]
    # stored: the acked moves and one whose ack was lost: all well
    ok = verdict([player(line, 2, 3)], Stored("finished", [["a", "b", "c"]]), True)
    assert (ok.lost, ok.diverged, ok.stranded) == (0, False, 0)
    # an acked move dropped (a master that rejoined as a replica): lost and diverged
    dropped = verdict([player(line, 3, 3)], Stored("finished", [["a"]]), True)
    assert (dropped.lost, dropped.diverged) == (2, True)
    # a stored seat nobody holds, and its player without a token (one join, counted once)
    ghost = player(line, 0, 0, seat=1)
    ghost.token, ghost.seat, ghost.refused = None, None, "name_taken"
    stranded = verdict([player(line, 1, 1), ghost], Stored("running", [["a"], []]), True)
    assert (stranded.lost, stranded.diverged, stranded.stranded) == (0, False, 1)


def test_the_longest_gap_runs_to_the_first_ack_after_the_fault() -> None:
    assert longest_gap([0.0, 1.0, 5.0, 5.1], start=1.5, end=2.0, last=9.0) == (4.0, 1.0)
    assert longest_gap([0.0], start=1.0, end=2.0, last=3.0) == (3.0, 0.0)  # nothing after: up to the stop
