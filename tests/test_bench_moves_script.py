"""bench/moves_script.py runs: a race made through the Store, rounds of moves committed, a figure printed."""

from __future__ import annotations

from process_util import run_bench


def test_the_script_benchmark_commits_every_move_and_prints_redis_time_a_move() -> None:
    done = run_bench("moves_script.py", "--rounds", "3", "--seats", "2", "--per-seat", "2")
    assert done.returncode == 0, done.stderr
    assert "3 calls of 4 moves" in done.stdout
    figure = [line for line in done.stdout.splitlines() if "redis_us_per_move" in line]
    assert len(figure) == 1 and float(figure[0].split()[1]) > 0, done.stdout
