"""Recorded games: (variant, deal, moves), and replaying them.

A race's result carries each player's record, and the deal is revealed at
the end, so anyone can replay every game and check the server's verdict.
The file form is JSON: ``{"variant": "forty-thieves", "deal": 7,
"moves": ["S", "aF", "Wb", ...]}``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence

if TYPE_CHECKING:
    from .view import PlayerView

from .deals import deal as make_deal
from .engine import Game
from .moves import IllegalMove, Move, MoveParseError
from .variants import get_variant


class RecordError(ValueError):
    """A record that is not well formed (not a move list, unknown variant, ...)."""


@dataclass(frozen=True)
class GameRecord:
    variant: str
    deal: int
    moves: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"variant": self.variant, "deal": self.deal, "moves": list(self.moves)}

    @classmethod
    def from_json(cls, data: Any) -> "GameRecord":
        if not isinstance(data, dict):
            raise RecordError("a game record is a JSON object with variant, deal and moves")
        missing = [k for k in ("variant", "deal", "moves") if k not in data]
        if missing:
            raise RecordError(f"a game record needs {', '.join(missing)}")
        deal, moves = data["deal"], data["moves"]
        if not isinstance(deal, int) or isinstance(deal, bool):
            raise RecordError(f"deal must be a whole number, got {deal!r}")
        if not isinstance(moves, list) or not all(isinstance(m, str) for m in moves):
            raise RecordError("moves must be a list of moves in the text notation")
        return cls(str(data["variant"]), deal, tuple(moves))

    @classmethod
    def loads(cls, text: str) -> "GameRecord":
        try:
            return cls.from_json(json.loads(text))
        except json.JSONDecodeError as exc:
            raise RecordError(f"not JSON: {exc}") from None
        except RecursionError:
            raise RecordError("not a game record: JSON nested too deeply") from None


@dataclass
class ReplayResult:
    """The game after the last legal move, and the first bad move if any.

    ``applied`` is the line of moves that leads to ``game`` (undone moves
    are not in it).
    """

    game: Game
    failed_at: int | None = None
    error: ValueError | None = None
    applied: list[Move] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.failed_at is None


def replay(record: GameRecord) -> ReplayResult:
    """Play the record's moves from its deal, stopping at the first bad one.

    ``U`` in a move list takes back the previous move (races that allow undo
    record it that way), so a replay reaches the same final position.
    """
    try:
        variant = get_variant(record.variant)
    except ValueError as exc:
        raise RecordError(str(exc)) from None
    game = Game.from_deal(make_deal(variant, record.deal))
    result = ReplayResult(game)
    for i, text in enumerate(record.moves):
        try:
            if text == "U":
                game.pop()
                result.applied.pop()
                continue
            move = Move.parse(text)
            game.push(move)
            result.applied.append(move)
        except (MoveParseError, IllegalMove) as exc:
            result.failed_at = i
            result.error = exc
            break
    return result


def replay_steps(variant: str, deal_number: int, moves: Sequence[str]) -> tuple[list["PlayerView"], list[str], str | None]:
    """Every board of a recorded game, as its player saw it (face-down cards stay face down): before
    the first step and after each; the steps that replayed; the first that did not (None: all did).

    One replay for every viewer of a finished race (the terminal's watch, the web page's replay), so
    they cannot show different boards."""
    game = Game.from_deal(make_deal(get_variant(variant), deal_number))
    views = [game.view()]
    done: list[str] = []
    for i, text in enumerate(moves):
        try:
            if text == "U":
                game.pop()
            else:
                game.push_text(text)
        except (IllegalMove, MoveParseError, IndexError) as exc:
            return views, done, f"step {i + 1} ({text}) does not replay: {exc}"
        views.append(game.view())
        done.append(text)
    return views, done, None
