"""bench/engine.py still runs and reports what it promises (no timing asserted)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench" / "engine.py"


def _load_bench() -> ModuleType:
    """bench/engine.py as a module (bench/ is not a package)."""
    spec = importlib.util.spec_from_file_location("bench_engine", BENCH)
    assert spec and spec.loader
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench


def test_bench_runs_on_a_tiny_corpus(capsys: pytest.CaptureFixture[str]) -> None:
    bench = _load_bench()
    assert bench.main(["--deals", "3", "--per-deal", "2", "--runs", "1", "--repeat", "1", "--unchecked", "--json", "--no-pin"]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert figures["variant"] == "forty-thieves" and figures["positions"] == 6
    for key in ("legal_move_generations_per_s", "apply_undo_pairs_per_s", "unchecked_apply_undo_pairs_per_s"):
        assert figures[key]["median"] > 0


def test_move_path_bench_runs_on_a_tiny_replay(capsys: pytest.CaptureFixture[str]) -> None:
    bench = _load_bench()
    assert bench.main(["--move-path", "--deals", "2", "--max-moves", "40", "--runs", "1", "--repeat", "1", "--json", "--no-pin"]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert figures["games"] == 3 and figures["moves_per_replay"] > 219
    for pipeline in bench.PIPELINES:
        if pipeline in figures:
            assert set(figures[pipeline]) == {*bench.STEPS, "total"} and figures[pipeline]["total"] > 0
    assert "server" in figures
