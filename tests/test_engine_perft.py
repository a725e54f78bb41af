"""Perft regression: the move-tree sizes of known positions (tests/data/perft.txt).

Each entry's counts are checked with ``legal_moves`` at every listed depth;
up to ``BRUTE_DEPTH`` they are recounted independently by trying every
syntactic move with ``reason()`` and the naive oracle (enginekit.brute_perft),
so a count in the file cannot silently be the engine agreeing with itself.

``python tests/test_engine_perft.py`` prints the file with the counts the
engine gives now, for reviewing a change or adding a position.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from enginekit import brute_perft, perft, relevant_moves
from shared.engine import Game

PERFT_FILE = Path(__file__).parent / "data" / "perft.txt"
BRUTE_DEPTH = 2
BRUTE_DEEPER = {"forty-thieves-deal-1-start", "hand-endgame-three-kings", "lucas-deal-1-start", "forty-and-eight-only-turn-over"}
"""Entries small enough to brute-force one level deeper."""


@dataclass
class Entry:
    name: str
    position: str = ""
    counts: dict[int, int] = field(default_factory=dict)


def load(path: Path = PERFT_FILE) -> list[Entry]:
    entries: list[Entry] = []
    for number, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        word, _, rest = line.partition(" ")
        if word == "id":
            entries.append(Entry(rest))
        elif word == "position":
            entries[-1].position = rest
        elif word == "perft":
            depth, nodes = rest.split()
            entries[-1].counts[int(depth)] = int(nodes)
        else:
            raise ValueError(f"{path}:{number}: unknown line {line!r}")
    return entries


ENTRIES = load()


def test_the_file_is_well_formed() -> None:
    names = [e.name for e in ENTRIES]
    assert len(names) == len(set(names)) >= 15
    for entry in ENTRIES:
        assert entry.position and entry.counts, entry.name
        assert sorted(entry.counts) == list(range(1, max(entry.counts) + 1)), entry.name
    variants = {e.position.split()[0] for e in ENTRIES}
    assert len(variants) == 9  # every registered variant has a position


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.name for e in ENTRIES])
def test_perft_counts(entry: Entry) -> None:
    game = Game.from_position(entry.position)
    assert game.position() == entry.position  # canonical text
    for depth, nodes in entry.counts.items():
        assert perft(game, depth) == nodes, f"{entry.name} perft {depth}"
    assert game.position() == entry.position and game.move_count == 0


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.name for e in ENTRIES])
def test_perft_counts_by_brute_force(entry: Entry) -> None:
    game = Game.from_position(entry.position)
    universe = relevant_moves(game)
    deepest = BRUTE_DEPTH + (entry.name in BRUTE_DEEPER)
    for depth in range(1, min(deepest, max(entry.counts)) + 1):
        assert brute_perft(game, depth, universe) == entry.counts[depth], f"{entry.name} depth {depth}"
    assert game.position() == entry.position


class DropsDraws(Game):
    """An engine with a bug: it never offers the draw."""

    __slots__ = ()

    def legal_moves(self) -> list:
        return [m for m in super().legal_moves() if m.text() != "S"]


def test_perft_catches_a_missing_move() -> None:
    """The suite notices when generation drops a move."""
    entry = ENTRIES[0]
    game = Game.from_position(entry.position)
    game.__class__ = DropsDraws
    assert perft(game, 1) == entry.counts[1] - 1
    assert perft(game, 2) != entry.counts[2]


def regenerate() -> str:
    """The file's text with today's counts (comments and order kept)."""
    out = []
    current: Game | None = None
    for raw in PERFT_FILE.read_text().splitlines():
        if raw.startswith("position "):
            current = Game.from_position(raw.removeprefix("position "))
        if raw.startswith("perft ") and current is not None:
            depth = int(raw.split()[1])
            raw = f"perft {depth} {perft(current, depth)}"
        out.append(raw)
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.stdout.write(regenerate())
