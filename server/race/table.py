"""A race's progress lines as this process knows them, and the version they are complete at (sans I/O).

Why: at a human pace nearly every move of a race was flushed on its own, and each flush read the race's
whole table back from Redis: a round trip, a reply to parse and every line to decode, for a change this
very process had just made (bench/event_round.py, issue 25: two table reads a move, most of a move's cost
on the server). The moves script now answers each stored move with the line it wrote; the hub hands
those lines to its table, which is then complete at the move's version when it was complete at the one
before. A read is needed only for what this process did not make: another process's move, a join, a
leave, a presence change, the end (each announced by a note whose version the table has not reached).
"""

from __future__ import annotations

from ..store import Line, decode_line

EARLY_MAX = 64
"""Lines of later versions kept while the table waits for an earlier one (another process's change,
which only a read brings): past this many the table gives up waiting and the next flush reads."""


class RaceTable:
    """Every seat's stored progress line, complete at :attr:`version` (-1: nothing known yet)."""

    __slots__ = ("lines", "version", "_early", "_sorted")

    def __init__(self) -> None:
        self.lines: dict[int, Line] = {}
        self.version = -1
        self._early: dict[int, tuple[int, bytes]] = {}
        """Lines written at versions past one the table lacks, by version: applied once it has it."""
        self._sorted: list[Line] | None = None
        """:meth:`sorted_lines` as the table stands (None: changed since)."""

    def complete_at(self, version: int) -> bool:
        """Whether the table shows the race as it stood at ``version`` or later (no read needed)."""
        return self.version >= 0 and self.version >= version

    def sorted_lines(self) -> list[Line]:
        """The lines in seat order, as :meth:`server.store.Store.lines` gives them (the same list until the
        table changes: do not change it). Why kept: an event feed takes the table of every heat played
        here five times a second, most of them unchanged since its last look."""
        if self._sorted is None:
            self._sorted = [self.lines[seat] for seat in sorted(self.lines)]
        return self._sorted

    def wrote(self, version: int, seat: int, blob: bytes) -> None:
        """The change stored at ``version`` wrote ``blob`` as ``seat``'s line (a move of this process)."""
        if self.version < 0 or version <= self.version:
            return  # no table to apply it to yet (the first read brings it), or a read brought it already
        if len(self._early) >= EARLY_MAX:
            self._early.clear()
        self._early[version] = (seat, blob)
        self._apply_early()

    def read(self, version: int, lines: list[Line]) -> None:
        """The table as Redis gave it at ``version`` (a read of the whole table)."""
        if version < self.version:
            return  # an older read than what the lines this process wrote since made of it
        self.lines = {line.seat: line for line in lines}
        self.version = version
        self._sorted = None
        self._early = {v: line for v, line in self._early.items() if v > version}
        self._apply_early()

    def _apply_early(self) -> None:
        early = self._early
        while (nxt := early.pop(self.version + 1, None)) is not None:
            seat, blob = nxt
            self.lines[seat] = decode_line(seat, blob)
            self.version += 1
            self._sorted = None


def moves_only(before: Line, after: Line) -> bool:
    """Whether a line changed in its move count alone (which no racer's screen shows: shared.protocol.racer_sees;
    a line's rank depends only on its status, cards home and times: shared.standings.merit_of)."""
    return (before.status == after.status and before.home == after.home and before.helped == after.helped
            and before.online == after.online and before.name == after.name and before.home_at == after.home_at
            and before.finished_at == after.finished_at)
