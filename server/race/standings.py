"""The order of racers: who is ahead now, and who won.

Finishers come first, by finish time; then everyone else by cards home,
ties broken by who reached that count first, then by seat. One rule for
the live progress table and the final results, so the two never disagree.
"""

from __future__ import annotations

from typing import cast

from shared.protocol import PlayerStatus

from ..store.records import Line

INF = float("inf")


def rank_key(line: Line) -> tuple[int, float, int, float, int]:
    if line.status == "finished":
        return (0, line.finished_at, 0, 0, line.seat)
    return (1, 0, -line.home, line.home_at or INF, line.seat)


def ranked(lines: list[Line]) -> list[tuple[int, Line]]:
    """``(rank, line)`` best first; ranks are 1, 2, 3, ... with no shared places."""
    return [(i + 1, line) for i, line in enumerate(sorted(lines, key=rank_key))]


def shown_status(stored: str, race_started: bool, online: int) -> PlayerStatus:
    """The status a client sees: lobby states turn into racing at the start;
    a racer (blocked or not) with no live connection shows as disconnected."""
    if race_started and stored in ("waiting", "ready"):
        stored = "racing"
    if stored in ("racing", "blocked") and online <= 0:
        return "disconnected"
    return cast(PlayerStatus, stored)  # a stored status is one of the protocol's (records.SeatStatus)
