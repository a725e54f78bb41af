"""The order of racers: who is ahead now, who won, and who cannot be told apart.

Finishers come first, by finish time. Everyone else follows by cards home;
with the same cards home, a player who played on (racing, blocked or
disconnected at the end) is ahead of one who gave up, then whoever reached
that count first, then the seat. One rule for the live progress table and
the final results, so the two never disagree. Giving up must never pay:
before this rule a player who gave up at 1/104 after two moves ranked
above one who played on to the time limit with the same 1/104, only for
having reached it sooner.

The seat is the last resort of the order, not a result: two lines that
differ only by seat are *tied* (:func:`tied`), and ratings (and, later,
matchpoints) treat them as equals.
"""

from __future__ import annotations

from typing import Protocol, Sequence, TypeVar, cast

from shared.protocol import PlayerStatus

from ..store.records import Line

INF = float("inf")


class Placed(Protocol):
    """What the order reads of a line: a live :class:`Line` or a final ``shared.protocol.Standing``
    (where a missing time is None instead of 0)."""

    @property
    def seat(self) -> int: ...
    @property
    def status(self) -> str: ...
    @property
    def home(self) -> int: ...
    @property
    def home_at(self) -> int | None: ...
    @property
    def finished_at(self) -> int | None: ...


L = TypeVar("L", bound=Placed)


def merit(line: Placed) -> tuple[int, float, int, int, float]:
    """Everything the order knows about a line except its seat: equal merits are a tie.

    Finishers: their finish time. Others: cards home (more is better), then
    played on (0) before gave up (1), then when that count was reached
    (never: last).
    """
    if line.status == "finished":
        return (0, line.finished_at or INF, 0, 0, 0.0)
    gave_up = 1 if line.status == "gave_up" else 0
    return (1, 0.0, -line.home, gave_up, line.home_at or INF)


def rank_key(line: Placed) -> tuple[tuple[int, float, int, int, float], int]:
    """The sort key of the standings: the merit, then the seat (so the order is total)."""
    return (merit(line), line.seat)


def ranked(lines: Sequence[L]) -> list[tuple[int, L]]:
    """``(rank, line)`` best first; ranks are 1, 2, 3, ... with no shared places."""
    return [(i + 1, line) for i, line in enumerate(sorted(lines, key=rank_key))]


def tied(a: Placed, b: Placed) -> bool:
    """True when the standings cannot tell the two apart, only their seats:
    two finishers with the same finish time; or two non-finishers with the
    same cards home, reached at the same moment, who both played on or
    both gave up."""
    return merit(a) == merit(b)


def places(ordered: Sequence[Placed]) -> list[int]:
    """Shared places of lines already in standings order: a line tied with
    the one before it shares its place, and the next line's place counts
    everyone above it (1, 1, 3: "competition" ranking)."""
    out: list[int] = []
    for i, line in enumerate(ordered):
        out.append(out[-1] if i and tied(ordered[i - 1], line) else i + 1)
    return out


def shown_status(stored: str, race_started: bool, online: int) -> PlayerStatus:
    """The status a client sees: lobby states turn into racing at the start;
    a racer (blocked or not) with no live connection shows as disconnected."""
    if race_started and stored in ("waiting", "ready"):
        stored = "racing"
    if stored in ("racing", "blocked") and online <= 0:
        return "disconnected"
    return cast(PlayerStatus, stored)  # a stored status is one of the protocol's (records.SeatStatus)
