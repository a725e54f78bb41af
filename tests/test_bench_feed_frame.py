"""bench/feed_frame.py runs: frames of a live round built through the feed's own functions, a figure printed."""

from __future__ import annotations

from process_util import run_bench


def test_the_frame_benchmark_builds_frames_and_prints_milliseconds_a_frame() -> None:
    done = run_bench("feed_frame.py", "--entrants", "40", "--frames", "5", "--moves", "12")
    assert done.returncode == 0, done.stderr
    assert "40 entrants in 5 heats, 12 moves between frames, 5 frames" in done.stdout
    figure = [line for line in done.stdout.splitlines() if line.startswith("frame_ms ")]
    assert len(figure) == 1 and float(figure[0].split()[1]) > 0, done.stdout
    refused = run_bench("feed_frame.py", "--entrants", "0", timeout=60)
    assert refused.returncode == 2 and "--entrants, --heat and --frames are at least 1" in refused.stderr
