"""Game records (variant, deal, moves) and replaying them to the same end."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from enginekit import play_randomly
from shared.deals import DealNumberError
from shared.engine import Game
from shared.moves import IllegalMove, IllegalReason, MoveParseError
from shared.record import GameRecord, RecordError, replay
from shared.variants import VARIANTS


def record_of_random_play(variant_key: str, deal: int, seed: int, undo_rate: float = 0.1) -> tuple[GameRecord, Game]:
    """Random legal play from a deal, with some undos written ``U``."""
    rng = random.Random(seed)
    game = Game.new(VARIANTS[variant_key], deal)
    texts: list[str] = []
    for _ in range(120):
        if game.move_stack and rng.random() < undo_rate:
            game.pop()
            texts.append("U")
            continue
        before = game.move_count
        play_randomly(game, rng, 1)
        if game.move_count == before:
            break
        texts.append(game.move_stack[-1].text())
    return GameRecord(variant_key, deal, tuple(texts)), game


def test_json_form_round_trips() -> None:
    record = GameRecord("forty-thieves", 7, ("S", "aF", "Wb"))
    assert record.to_json() == {"variant": "forty-thieves", "deal": 7, "moves": ["S", "aF", "Wb"]}
    assert GameRecord.loads(json.dumps(record.to_json())) == record
    assert GameRecord.from_json(record.to_json()) == record


@pytest.mark.parametrize(
    "text",
    [
        "not json",
        "[]",
        '"forty-thieves"',
        '{"variant": "forty-thieves", "deal": 1}',
        '{"deal": 1, "moves": []}',
        '{"variant": "forty-thieves", "deal": "1", "moves": []}',
        '{"variant": "forty-thieves", "deal": true, "moves": []}',
        '{"variant": "forty-thieves", "deal": 1.5, "moves": []}',
        '{"variant": "forty-thieves", "deal": 1, "moves": "ab S"}',
        '{"variant": "forty-thieves", "deal": 1, "moves": ["ab", 3]}',
    ],
)
def test_malformed_records_are_record_errors(text: str) -> None:
    with pytest.raises(RecordError):
        GameRecord.loads(text)


def test_deeply_nested_json_is_a_record_error() -> None:
    """json.loads raises RecursionError, not JSONDecodeError, on deep nesting."""
    with pytest.raises(RecordError, match="nested too deeply"):
        GameRecord.loads("[" * 100_000)


def test_unknown_variant_is_a_record_error() -> None:
    with pytest.raises(RecordError, match="unknown variant"):
        replay(GameRecord("fifty-thieves", 1, ()))


def test_deal_out_of_range_is_a_deal_number_error() -> None:
    with pytest.raises(DealNumberError):
        replay(GameRecord("forty-thieves", 0, ()))


@pytest.mark.parametrize("variant_key", ["forty-thieves", "josephine", "forty-and-eight", "lucas", "maria"])
def test_replay_reaches_the_same_final_position(variant_key: str) -> None:
    for seed in range(3):
        record, game = record_of_random_play(variant_key, 100 + seed, seed)
        result = replay(record)
        assert result.ok and result.failed_at is None and result.error is None
        assert result.game.position() == game.position()
        assert result.game.move_stack == game.move_stack


def test_replay_of_no_moves_is_the_deal() -> None:
    result = replay(GameRecord("sixty-thieves", 775, ()))
    assert result.ok
    assert result.game.position() == Game.new(VARIANTS["sixty-thieves"], 775).position()


def test_replay_stops_at_the_first_illegal_move() -> None:
    game = Game.new(VARIANTS["forty-thieves"], 1)
    assert [m.text() for m in game.legal_moves()] == ["hd", "S"]  # see docs/notation.md
    result = replay(GameRecord("forty-thieves", 1, ("hd", "S", "ab", "S")))
    assert not result.ok and result.failed_at == 2
    assert isinstance(result.error, IllegalMove)
    assert result.error.reason is IllegalReason.NOT_ONE_RANK_LOWER  # 7d onto 9s
    assert [m.text() for m in result.applied] == ["hd", "S"]
    assert result.game.move_count == 2  # the position before the bad move


def test_replay_stops_at_text_that_is_not_a_move() -> None:
    for bad in ("zz", "²ab", "3aF"):
        result = replay(GameRecord("forty-thieves", 1, ("S", bad)))
        assert result.failed_at == 1 and isinstance(result.error, MoveParseError)


def test_replay_undo_takes_back_the_previous_move() -> None:
    result = replay(GameRecord("forty-thieves", 1, ("hd", "U", "S", "U", "U")))
    assert result.failed_at == 4
    assert isinstance(result.error, IllegalMove) and result.error.reason is IllegalReason.NOTHING_TO_UNDO
    assert result.game.position() == Game.new(VARIANTS["forty-thieves"], 1).position()


def test_replay_undo_at_the_start_is_refused() -> None:
    result = replay(GameRecord("forty-thieves", 1, ("U",)))
    assert result.failed_at == 0 and result.error.reason is IllegalReason.NOTHING_TO_UNDO


WON_GAMES = json.loads((Path(__file__).parent / "data" / "won_games.json").read_text())


@pytest.mark.parametrize("data", WON_GAMES, ids=[f"{g['variant']}-{g['deal']}" for g in WON_GAMES])
def test_recorded_wins_replay_to_a_won_game(data: dict) -> None:
    """Wins found by a best-first search over the engine's own moves (kept as data)."""
    result = replay(GameRecord.from_json(data))
    assert result.ok
    game = result.game
    assert game.is_won() and game.cards_home == game.total_cards and game.legal_moves() == []
    assert game.view().status == "won"
    game.pop()  # one step before the end the game is still being played
    assert not game.is_won() and game.legal_moves()


def test_replay_applied_line_leaves_out_undone_moves() -> None:
    from shared.record import GameRecord, replay

    result = replay(GameRecord("forty-thieves", 1, ("S", "S", "U")))
    assert result.ok
    assert [m.text() for m in result.applied] == ["S"]
    assert result.game.move_count == 1
