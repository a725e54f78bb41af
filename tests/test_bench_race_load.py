"""bench/race_load.py's parts that need no server: its precomputed lines are legal, its /proc readings sane.

The benchmark itself is run by hand (``make bench``); these guard what its
figures rest on (no timing asserted).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

import procfs  # noqa: E402
from redis_util import until  # noqa: E402
import race_load  # noqa: E402

from shared import protocol as p  # noqa: E402
from shared.engine import Game  # noqa: E402
from shared.variants import get_variant  # noqa: E402


def test_a_precomputed_line_is_legal_move_frames_in_seq_order() -> None:
    frames = race_load.playout(4242, 7, 300)
    assert len(frames) == 300
    game = Game.new(get_variant("forty-thieves"), 4242)
    for seq, frame in enumerate(frames, 1):
        msg = p.decode_client(frame)
        assert isinstance(msg, p.Move) and msg.seq == seq
        game.push_text(msg.move)  # raises on an illegal move


def test_lines_are_the_same_on_every_core_and_sized_for_the_run() -> None:
    jobs = [(10 + i, i, 3000) for i in range(8)]  # over the parallel threshold
    assert race_load.playouts(jobs) == [race_load.playout(*job) for job in jobs]
    assert race_load.line_moves(200, 10.0, 12.0) >= 150
    assert race_load.line_moves(200, 0.0, 12.0) > race_load.line_moves(200, 10.0, 12.0)


def test_proc_readings_of_a_child(tmp_path: Path) -> None:
    probe = tmp_path / "bench-probe"  # a command name no other child of the test run has
    probe.symlink_to(shutil.which("sleep") or "/bin/sleep")
    child = subprocess.Popen([str(probe), "30"])
    try:
        # Popen may return (vfork) a moment before the kernel renames the child at exec: wait for the name.
        assert until(lambda: procfs.child_named(os.getpid(), "bench-probe"), "the child's name at exec") == child.pid
        assert procfs.child_named(os.getpid(), "no-such-command") is None
        assert procfs.cpu_seconds(os.getpid()) > 0
        before = procfs.io_calls(os.getpid())
        Path(os.devnull).read_bytes()  # one open, a read or two, a close
        assert procfs.io_calls(os.getpid()) > before
        assert procfs.rss_kb(child.pid) > 0
    finally:
        child.kill()
        child.wait()


def test_repeated_runs_are_summed_up_as_medians_ranges_and_goals_met(capsys: Any) -> None:
    runs = [{"race": {"server_cpu_us_per_move": cpu, "redis_cpu_us_per_move": 14.0, "client_cpu_us_per_move": 20.0},
             "echo": {"server_cpu_us_per_frame": 14.0, "client_cpu_us_per_frame": client},
             "cpu_ratio": cpu / 14, "ratio": ratio}
            for cpu, ratio, client in ((26.0, 0.45, 16.0), (30.0, 0.52, 17.0), (42.0, 0.30, 21.0))]
    race_load.summarize(runs)  # type: ignore[arg-type]
    out = capsys.readouterr().out
    assert "over 3 runs" in out
    assert "server CPU per move (us)           median    30.00   range 26.00 .. 42.00" in out
    assert "client CPU per echo (us)           median    17.00   range 16.00 .. 21.00" in out
    assert "(goal <= 2: met in 1 of 3)" in out  # 26/14 only
    assert "(goal >= 0.5: met in 1 of 3)" in out
