"""The deal pool: its file form, the shipped pools (every line replays to a win),
and ``thieves pool build`` / ``thieves solve`` end to end."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from client_cli.main import main
from shared.pool import (
    Pool,
    PoolError,
    is_checked,
    load_pool,
    parse_pool,
    pool_deals,
    random_pool_deal,
    winning_line,
)
from shared.record import GameRecord, replay
from shared.solver import fast, wilson_interval, percentile

SHIPPED = ("forty-thieves", "sixty-thieves")


@pytest.mark.parametrize("key", SHIPPED)
def test_every_shipped_pool_deal_replays_to_a_win(key: str) -> None:
    deals = pool_deals(key)
    assert deals, f"no pool ships for {key}"
    for n in deals:
        result = replay(GameRecord(key, n, winning_line(key, n)))
        assert result.ok and result.game.is_won(), (key, n)
    pool = load_pool(key)
    assert not (set(pool.lines) & (pool.unwinnable | pool.unknown))


def test_checked_and_random_choice() -> None:
    deals = pool_deals("forty-thieves")
    assert is_checked("forty-thieves", deals[0])
    outside = next(n for n in range(1, 10**6) if n not in deals)
    assert not is_checked("forty-thieves", outside)
    assert winning_line("forty-thieves", outside) is None
    picks = [random_pool_deal("forty-thieves", random.Random(s)) for s in range(20)]
    assert set(picks) <= set(deals)
    assert picks == [random_pool_deal("forty-thieves", random.Random(s)) for s in range(20)]


def test_a_variant_without_a_pool_has_none_to_offer() -> None:
    assert pool_deals("lucas") == ()
    with pytest.raises(PoolError):
        random_pool_deal("lucas", random.Random(1))


def test_pool_text_round_trips_and_records_verdicts() -> None:
    pool = Pool("forty-thieves", time_limit=5.0, solver=1)
    pool.record(7, "unknown")
    pool.record(7, "won", ["S", "aF"], nodes=10, seconds=0.5)
    pool.record(9, "unwinnable")
    pool.record(9, "unknown")  # a weaker answer never overrides a proof
    back = parse_pool(pool.dumps())
    assert back.lines == {7: ("S", "aF")} and back.unwinnable == {9} and back.unknown == set()
    assert back.stats[7] == {"nodes": 10, "seconds": 0.5}
    assert back.tried(7) and back.tried(9) and not back.tried(8)
    with pytest.raises(PoolError):
        pool.record(1, "maybe")


@pytest.mark.parametrize(
    "text",
    [
        "not json",
        "[]",
        json.dumps({"format": 99, "variant": "forty-thieves"}),
        json.dumps({"format": 1}),
        json.dumps({"format": 1, "variant": "forty-thieves", "deals": [{"deal": 0, "moves": []}]}),
        json.dumps({"format": 1, "variant": "forty-thieves", "deals": [{"deal": 3, "moves": "S aF"}]}),
        json.dumps({"format": 1, "variant": "forty-thieves", "unwinnable": ["x"]}),
    ],
)
def test_malformed_pool_files_are_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_pool(text)


def test_pool_build_writes_resumable_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "pool.json"
    args = ["pool", "build", "--variant", "forty-thieves", "--count", "1", "--start", "1",
            "--time-limit", "1", "--jobs", "1", "--out", str(out), "--max-tries", "2"]
    assert main(args) == 0
    pool = parse_pool(out.read_text())
    assert pool.lines.keys() == {2} and pool.tried(1)
    replayed = replay(GameRecord("forty-thieves", 2, pool.lines[2]))
    assert replayed.ok and replayed.game.is_won()
    before = out.read_text()
    assert main(args) == 0  # the pool already holds one winnable deal: nothing to do
    assert out.read_text() == before
    assert main(["pool", "show", "--variant", "forty-thieves", "--file", str(out)]) == 0
    assert "1 deals proven winnable" in capsys.readouterr().out


def test_pool_build_refuses_bad_arguments(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    other = tmp_path / "sixty.json"
    other.write_text(Pool("sixty-thieves").dumps())
    assert main(["pool", "build", "--count", "1", "--out", str(other)]) == 2
    assert "not forty-thieves" in capsys.readouterr().err
    assert main(["pool", "build", "--count", "0", "--out", str(tmp_path / "x.json")]) == 2
    assert main(["pool", "build", "--count", "1", "--start", "0", "--out", str(tmp_path / "x.json")]) == 2
    assert not (tmp_path / "x.json").exists()


def test_solve_json_is_a_record_that_replays(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["solve", "2", "--json", "--nodes", "50000"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["verdict"] == "won" and data["variant"] == "forty-thieves" and data["deal"] == 2
    assert data["nodes"] > 0 and data["seconds"] >= 0
    record = tmp_path / "line.json"
    record.write_text(json.dumps(data))
    assert main(["replay", "-q", str(record)]) == 0
    assert "104/104 home; won" in capsys.readouterr().out


def test_solve_prints_the_verdict_for_people(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["solve", "1", "--nodes", "2000"]) == 0
    out = capsys.readouterr().out
    assert "deal 1: unknown (position limit reached" in out and "positions/s" in out
    assert main(["solve", "2"]) == 0
    out = capsys.readouterr().out
    assert "deal 2: won in" in out
    assert ("compiled search)" if fast.available() else "pure-Python search)") in out


def test_solve_python_runs_the_same_search_in_python(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["solve", "1", "--nodes", "3000", "--json"]) == 0
    compiled = json.loads(capsys.readouterr().out)
    assert main(["solve", "1", "--nodes", "3000", "--json", "--python"]) == 0
    python = json.loads(capsys.readouterr().out)
    assert python["nodes"] == compiled["nodes"] and python["verdict"] == compiled["verdict"] == "unknown"
    assert main(["solve", "1", "--nodes", "3000", "--python"]) == 0
    assert "pure-Python search)" in capsys.readouterr().out


def test_solve_refuses_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["solve", "0"]) == 2
    assert main(["solve", "5", "--variant", "nope"]) == 2
    assert main(["solve", "5", "--time-limit", "0"]) == 2
    err = capsys.readouterr().err
    assert "out of range" in err and "unknown variant" in err and "positive" in err


def test_wilson_interval_and_percentiles() -> None:
    lo, hi = wilson_interval(3, 100)
    assert 0.010 < lo < 0.011 and 0.084 < hi < 0.086  # textbook values 1.03%-8.45%
    assert wilson_interval(0, 10)[0] == 0.0 and wilson_interval(10, 10)[1] == 1.0
    assert wilson_interval(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError):
        wilson_interval(5, 4)
    assert percentile([3, 1, 2], 50) == 2 and percentile([1, 2, 3, 4], 90) == pytest.approx(3.7)
