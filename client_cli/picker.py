"""Turning key presses and clicks into moves: pick a source, then a target.

Sans I/O and free of textual, so the same rules serve solo play and races
and are tested without a terminal. The picker only remembers what is
selected; the position always comes from the caller (a :class:`PlayerView`
plus a ``reason`` function that asks the rules engine).

- a column or the waste picks the source; a second pick names the target;
- picking the selected column again sends its card to a foundation (a
  double tap, the fastest way home); ``f``/Enter does the same explicitly;
- picking the waste while something is selected re-selects the waste.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Union

from shared.moves import FOUNDATION, WASTE, IllegalReason, Move
from shared.view import PlayerView

ReasonFn = Callable[[Move], "IllegalReason | None"]


@dataclass(frozen=True)
class Selection:
    """A chosen source: a column index or ``WASTE``, and for a click on a
    card inside a column, how many cards from that card to the top."""

    place: int
    count: int | None = None


@dataclass(frozen=True)
class Selected:
    selection: Selection


@dataclass(frozen=True)
class Cancelled:
    pass


@dataclass(frozen=True)
class Ready:
    move: Move


@dataclass(frozen=True)
class Refused:
    message: str


PickResult = Union[Selected, Cancelled, Ready, Refused]


def choose_count(src: int, dst: int, explicit: int | None, column_length: int, reason: ReasonFn) -> int:
    """How many cards a column-to-column move carries.

    Strict games move one card; where runs move as a unit (Josephine) the
    player names only the target, so the legal count is found here: the one
    that fits, or the longest when several do (an empty target takes any
    run, and moving the whole run there is what a player means).
    An explicit count (a click on a card inside the column) wins.
    """
    if explicit is not None:
        return explicit
    legal = [n for n in range(1, column_length + 1) if reason(Move(src, dst, n)) is None]
    return max(legal) if legal else 1


class Picker:
    """The selection half of the table: what is picked, and what a new pick means."""

    def __init__(self) -> None:
        self.selection: Selection | None = None

    def cancel(self) -> bool:
        """Drop the selection; whether there was one."""
        had = self.selection is not None
        self.selection = None
        return had

    def pick(self, place: int, view: PlayerView, reason: ReasonFn, count: int | None = None) -> PickResult:
        """React to the player pointing at ``place`` (column index, ``WASTE`` or ``FOUNDATION``)."""
        sel = self.selection
        if place == FOUNDATION:
            if sel is None:
                return Refused("pick a column or the waste first, then the foundation")
            self.selection = None
            return Ready(Move(sel.place, FOUNDATION))
        if place == WASTE:
            if not view.waste:
                self.selection = None
                return Refused(f"waste: {IllegalReason.SOURCE_EMPTY.explanation}")
            self.selection = Selection(WASTE)
            return Selected(self.selection)
        if sel is None:
            column = view.tableau[place]
            if not column:
                return Refused(f"column {place + 1} is empty: {IllegalReason.SOURCE_EMPTY.explanation}")
            if count is not None and not 1 <= count <= len(column):
                count = None
            self.selection = Selection(place, count if count and count > 1 else None)
            return Selected(self.selection)
        self.selection = None
        if sel.place == place:
            if count is not None and sel.count != count:
                return self.pick(place, view, reason, count)
            return Ready(Move(place, FOUNDATION))
        if sel.place == WASTE:
            return Ready(Move(WASTE, place))
        n = choose_count(sel.place, place, sel.count, len(view.tableau[sel.place]), reason)
        return Ready(Move(sel.place, place, n))
