"""A finished race's games move by move: the boards a browser steps through.

Why the server computes the positions: the rules engine lives in Python
(shared/), and a second engine in JavaScript would have to follow every
variant's rules, undo and group moves exactly; the record and the deal are
public once the race is over, so nothing secret is given away, and a
player's whole game is a few hundred small boards (tens of KB gzipped),
after which stepping back and forth costs no round trip.
"""

from __future__ import annotations

import gzip
from functools import lru_cache

import msgspec

from shared import protocol as p
from shared.record import replay_steps as replay_boards


class ReplaySteps(msgspec.Struct, kw_only=True):
    """One player's game: the board before the first step and after each one."""

    race: str
    seat: int
    name: str
    moves: list[str]
    """The stored record, one step each (``"U"`` takes the previous move back)."""
    views: list[p.View]
    """``len(moves) + 1`` boards: ``views[i]`` after ``i`` steps (fewer only if ``error``)."""
    error: str | None = None
    """The step that did not replay (a server bug if it ever appears)."""


def replay_steps(results: p.Results, record: p.PlayerRecord) -> ReplaySteps:
    """Replay ``record`` on the revealed deal, keeping every board (as a player saw it: face-down stays)."""
    views, _, error = replay_boards(results.variant, results.deal, record.moves)
    return ReplaySteps(race=results.race, seat=record.seat, name=record.name, moves=list(record.moves),
                       views=[p.View.from_player_view(v) for v in views], error=error)


LINE_SEAT = -1
"""The seat the proved winning line is replayed as (no player's: seats count from 0)."""
LINE_NAME = "the proved winning line"


@lru_cache(maxsize=64)
def replay_body(results_blob: bytes, seat: int | None) -> tuple[bytes, bytes] | None:
    """The JSON of a seat's replay (``None``: the proved winning line's) and its gzip, or None for a seat
    with no record (a race with no proved line).

    Cached by the stored results (immutable once the race is over), so a
    crowd opening the same replay costs one computation. The caller checks the deal is revealed first.
    """
    results = msgspec.msgpack.decode(results_blob, type=p.Results)
    if seat is None:
        line = results.winning_line
        record = p.PlayerRecord(seat=LINE_SEAT, name=LINE_NAME, moves=line, position="") if line else None
    else:
        record = next((r for r in results.records if r.seat == seat), None)
    if record is None:
        return None
    body = msgspec.json.encode(replay_steps(results, record))
    return body, gzip.compress(body, 6)
