"""``thieves variants``, ``thieves deal`` and ``thieves replay``: output,
JSON shapes and exit codes. Most cases call ``client_cli.main.main`` in
process; a few run the installed console script, as a user would."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from shared.cards import parse_card
from shared.engine import Game
from shared.variants import DEFAULT_VARIANT, VARIANTS
from client_cli.main import main

THIEVES = Path(sys.executable).with_name("thieves")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def write_record(tmp_path: Path, moves: list[str], variant: str = "forty-thieves", deal: int = 1) -> Path:
    path = tmp_path / "game.json"
    path.write_text(json.dumps({"variant": variant, "deal": deal, "moves": moves}))
    return path


# ---------------------------------------------------------------- variants
def test_variants_lists_every_variant_and_marks_the_default(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "variants")
    assert code == 0
    lines = out.strip().splitlines()
    assert [line.split()[0] for line in lines] == list(VARIANTS)
    default = [line for line in lines if "(default)" in line]
    assert len(default) == 1 and default[0].startswith(DEFAULT_VARIANT.key)
    assert "packing alternate-colour" in lines[list(VARIANTS).index("maria")]
    assert "2 stock passes" in lines[list(VARIANTS).index("forty-and-eight")]


def test_variants_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "variants", "--json")
    assert code == 0
    data = json.loads(out)
    assert [v["key"] for v in data] == list(VARIANTS)
    forty = data[0]
    assert forty == {
        "key": "forty-thieves",
        "name": "Forty Thieves",
        "packs": 2,
        "columns": 10,
        "cards_per_column": 4,
        "face_down_per_column": 0,
        "packing": "same-suit",
        "group_moves": "none",
        "empty_column": "any",
        "stock_passes": 1,
        "draw_count": 1,
        "aces_first": False,
        "stock": 64,
        "pysol_id": 13,
    }
    assert {v["key"]: v["stock"] for v in data}["lucas"] == 57


# -------------------------------------------------------------------- deal
def test_deal_json_shape(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "deal", "1", "--json")
    assert code == 0
    data = json.loads(out)
    assert {"variant", "deal", "tableau", "stock"} <= set(data)
    assert data["variant"] == "forty-thieves" and data["deal"] == 1
    assert [len(col) for col in data["tableau"]] == [4] * 10
    assert len(data["stock"]) == 64
    every = [parse_card(c) for col in data["tableau"] for c in col] + [parse_card(c) for c in data["stock"]]
    assert sorted(every) == sorted(list(range(52)) * 2)
    game = Game.new(DEFAULT_VARIANT, 1)
    assert data["tableau"][0] == ["3d", "As", "Kd", "7d"]  # bottom card first
    assert [parse_card(c) for c in data["stock"]] == game.stock_in_draw_order()


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_deal_json_for_every_variant(capsys: pytest.CaptureFixture[str], variant: str) -> None:
    code, out, _ = run(capsys, "deal", "--variant", variant, "3", "--json")
    assert code == 0
    data = json.loads(out)
    v = VARIANTS[variant]
    assert data["variant"] == variant
    assert [len(col) for col in data["tableau"]] == [v.cards_per_column] * v.columns
    assert len(data["stock"]) == v.stock_size


def test_deal_text_shows_the_board_and_the_position(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "deal", "1")
    assert code == 0
    assert out.startswith("Forty Thieves, deal 1\n")
    assert "3d  5h  Jc" in out
    position = next(line for line in out.splitlines() if line.startswith("position: "))
    assert position.removeprefix("position: ") == Game.new(DEFAULT_VARIANT, 1).position()


@pytest.mark.parametrize(("argv", "message"), [(["deal", "0"], "out of range"), (["deal", "-v", "nope", "3"], "unknown variant")])
def test_deal_errors_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and message in err


def test_deal_needs_a_number(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["deal", "seven"])
    assert info.value.code == 2


# ------------------------------------------------------------------ replay
def test_replay_of_a_legal_record(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = run(capsys, "replay", str(write_record(tmp_path, ["hd", "S"])))
    assert code == 0
    game = Game.new(DEFAULT_VARIANT, 1)
    game.push_text("hd")
    game.push_text("S")
    assert f"position: {game.position()}" in out
    assert out.strip().endswith("2 moves replayed; 0/104 home; playing")


def test_replay_quiet_prints_only_the_verdict(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = run(capsys, "replay", "-q", str(write_record(tmp_path, ["hd", "S", "U"])))
    assert code == 0 and out == "3 moves replayed; 0/104 home; playing\n"


def test_replay_of_a_won_game_says_won(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    moves = json.loads((Path(__file__).parent / "data" / "won_games.json").read_text())[0]
    assert moves["variant"] == "forty-thieves"
    path = tmp_path / "won.json"
    path.write_text(json.dumps(moves))
    code, out, _ = run(capsys, "replay", "-q", str(path))
    assert code == 0
    assert out.strip().endswith(f"{len(moves['moves'])} moves replayed; 104/104 home; won")


def test_replay_names_the_illegal_move_and_exits_1(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = run(capsys, "replay", str(write_record(tmp_path, ["hd", "S", "ab"])))
    assert code == 1
    assert "illegal: move 3, 1 → 2: a card must be exactly one rank lower" in out


def test_replay_draws_the_board_in_the_game_screens_notation(capsys: pytest.CaptureFixture[str],
                                                           tmp_path: Path) -> None:
    """Issue 23, item 14: the replay named the columns a..j and wrote ``Ts`` where the game's screen
    has the keys 1..0 and ``T♠``; the board is now the screen's own drawing (client_cli.board)."""
    code, out, _ = run(capsys, "replay", str(write_record(tmp_path, ["hd", "S"])))
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith(" f Home  --") and lines[1].startswith(" ␣ Stock 63   w Waste 1   3♠")
    assert lines[3].split() == ["1", "2", "3", "4", "5", "6", "7", "8", "9", "0"]
    assert lines[4].split() == ["3♦", "5♥", "J♣", "K♥", "5♠", "5♥", "K♣", "K♣", "8♦", "J♦"]
    assert "T♥" in lines[8] and not any(line.split()[:2] == ["a", "b"] for line in lines)


def test_replay_of_text_that_is_not_a_move_exits_1(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = run(capsys, "replay", "-q", str(write_record(tmp_path, ["S", "²ab"])))
    assert code == 1 and "move 2, '²ab'" in out and "not a move" in out


@pytest.mark.parametrize(
    "content",
    [
        b"not json at all",
        b'{"variant": "forty-thieves", "deal": 1}',
        b'{"variant": "fifty-thieves", "deal": 1, "moves": []}',
        b'{"variant": "forty-thieves", "deal": 0, "moves": []}',
        b'{"variant": "forty-thieves", "deal": 1, "moves": [1, 2]}',
        b"[" * 100_000,
        b"\xff\xfe not utf-8",
    ],
    ids=["not-json", "no-moves", "unknown-variant", "deal-zero", "moves-not-text", "deep-nesting", "not-utf8"],
)
def test_replay_of_a_malformed_file_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    code, out, err = run(capsys, "replay", str(path))
    assert code == 2 and out == ""
    assert err.startswith("thieves replay: ")


def test_replay_of_a_missing_file_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(capsys, "replay", str(tmp_path / "nope.json"))
    assert code == 2 and "cannot read" in err


# ------------------------------------------------- the installed console script
def console(*argv: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([str(THIEVES), *argv], input=stdin, capture_output=True, timeout=60)


def test_console_script_replay_reads_standard_input() -> None:
    record = json.dumps({"variant": "forty-thieves", "deal": 1, "moves": ["hd", "S"]}).encode()
    proc = console("replay", "-", stdin=record)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.decode().strip().endswith("2 moves replayed; 0/104 home; playing")


def test_console_script_exit_codes() -> None:
    bad_move = json.dumps({"variant": "forty-thieves", "deal": 1, "moves": ["ab"]}).encode()
    proc = console("replay", "-q", "-", stdin=bad_move)
    assert proc.returncode == 1 and "illegal: move 1, 1 → 2".encode() in proc.stdout
    proc = console("replay", "-", stdin=b"{")
    assert proc.returncode == 2 and b"not JSON" in proc.stderr
    proc = console("variants", "--json")
    assert proc.returncode == 0 and json.loads(proc.stdout)[0]["key"] == "forty-thieves"
    proc = console("--help")
    assert proc.returncode == 0 and b"replay" in proc.stdout and b"deal" in proc.stdout
