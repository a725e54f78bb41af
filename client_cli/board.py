"""The table drawn from a :class:`PlayerView`, and where a click lands on it.

:class:`BoardLayout` is pure: view + size + selection in, styled lines and a
hit map out, so drawing and clicking are tested without a terminal and the
widget is a thin shell that keeps no game state (it only holds the last
view it was handed, to redraw on resize).

Layout (rows)::

    0  f Home  A♣ -- 3♥ ...            foundations (a click sends the selection home)
    1  ␣ Stock 52   w Waste 11 … 4♣ K♠  stock (a click draws), waste (a click selects it)
    2
    3    1   2   3 ...                  the key of each column
    4+  9♥  2♣  Q♦ ...                  columns, bottom card first

A column taller than the space left is folded: its bottom card, a ``⋮+N``
row for the folded cards, then as many top cards as fit.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.style import Style
from rich.text import Text
from textual.events import Click
from textual.message import Message
from textual.widget import Widget

from shared.cards import card_pretty, is_red
from shared.moves import FOUNDATION, STOCK, WASTE, Move
from shared.view import PlayerView

from .keymap import column_labels
from .picker import Selection

HEADER_ROWS = 4
WASTE_SHOWN = 6
_RED = Style(color="red", bold=True)
_BLACK = Style(bold=True)
_DIM = Style(dim=True)
_SELECTED = Style(reverse=True)
_HINT = Style(color="black", bgcolor="green")
_KEY = Style(color="cyan", bold=True)


@dataclass(frozen=True)
class Hit:
    """What is under a point: a place and, on a column card, the cards from it to the top."""

    place: int
    count: int | None = None


def card_style(card: int) -> Style:
    return _RED if is_red(card) else _BLACK


def cell_width(columns: int, width: int) -> int:
    """Width of a column's cell: 4 to 6 characters, as the terminal allows."""
    return max(4, min(6, (width - 1) // max(columns, 1)))


class BoardLayout:
    """The board of one view at one size; ``lines`` to draw, ``hit`` to click."""

    def __init__(
        self,
        view: PlayerView,
        width: int,
        height: int,
        selection: Selection | None = None,
        hint: Move | None = None,
    ) -> None:
        self.view = view
        self.width = width
        self.columns = len(view.tableau)
        self.cell = cell_width(self.columns, width)
        self.rows = max(3, height - HEADER_ROWS)
        self.selection = selection
        self.hint = hint
        self._stock_end = 0
        self.lines: list[Text] = [self._foundation_line(), self._stock_line(), Text(), self._label_line()]
        self._shown: list[list[int | None]] = []
        self.lines.extend(self._column_lines())

    # ------------------------------------------------------------- drawing
    def _hinted(self, place: int, as_source: bool) -> bool:
        h = self.hint
        return h is not None and (h.src if as_source else h.dst) == place

    def _foundation_line(self) -> Text:
        t = Text()
        t.append(" f", _KEY)
        t.append(" Home ", _HINT if self._hinted(FOUNDATION, False) else Style())
        for card in self.view.foundation_cards():
            t.append(" ")
            if card is None:
                t.append("--", _DIM)
            else:
                t.append(card_pretty(card), card_style(card))
        return t

    def _stock_line(self) -> Text:
        v = self.view
        t = Text()
        t.append(" ␣", _KEY)
        t.append(f" Stock {v.stock_count:<3}", _HINT if self._hinted(STOCK, True) else Style())
        if v.stock_passes > 1:
            t.append(f" pass {v.pass_number}/{v.stock_passes}", _DIM)
            if v.stock_count == 0 and v.pass_number < v.stock_passes:
                t.append(" (r: turn over)", _KEY)
        self._stock_end = t.cell_len
        t.append("  w", _KEY)
        t.append(f" Waste {len(v.waste):<3}")
        shown = v.waste[-WASTE_SHOWN:]
        if len(v.waste) > len(shown):
            t.append("…", _DIM)
        for i, card in enumerate(shown):
            top = i == len(shown) - 1
            style = card_style(card)
            if top and self.selection is not None and self.selection.place == WASTE:
                style = style + _SELECTED
            elif top and self._hinted(WASTE, True):
                style = style + _HINT
            elif not top:
                style = style + _DIM
            t.append(" ")
            t.append(card_pretty(card), style)
        if not v.waste:
            t.append(" --", _DIM)
        return t

    def _label_line(self) -> Text:
        t = Text(" ")
        for i, label in enumerate(column_labels(self.columns)):
            style = _HINT if self._hinted(i, False) else _KEY
            t.append(" ")
            t.append(label, style)
            t.append(" " * (self.cell - 2))
        return t

    def _fold(self, column: tuple[int | None, ...]) -> list[int | None]:
        """Indices of the cards shown in each row; ``-1`` marks the folded row."""
        n = len(column)
        if n <= self.rows:
            return list(range(n))
        keep = self.rows - 2
        return [0, -1] + list(range(n - keep, n))

    def _column_lines(self) -> list[Text]:
        view = self.view
        self._shown = [self._fold(col) for col in view.tableau]
        depth = max((len(s) for s in self._shown), default=0)
        lines = []
        for row in range(max(depth, 1)):
            t = Text(" ")
            for ci, col in enumerate(view.tableau):
                text, style = self._cell(ci, col, row)
                t.append(" ")
                t.append(text, style)
                t.append(" " * (self.cell - 1 - len(text)))
            lines.append(t)
        return lines

    def _cell(self, ci: int, col: tuple[int | None, ...], row: int) -> tuple[str, Style]:
        """The text (at most ``cell - 1`` wide) and style of one column's row."""
        shown = self._shown[ci]
        if not col:
            return ("··", _DIM) if row == 0 else ("", Style())
        if row >= len(shown):
            return "", Style()
        index = shown[row]
        if index == -1:
            folded = len(col) - (self.rows - 2) - 1
            return f"+{folded}"[: self.cell - 1], _DIM
        card = col[index]
        if card is None:
            return "##", _DIM
        style = card_style(card)
        sel = self.selection
        from_top = len(col) - index
        if sel is not None and sel.place == ci and from_top <= (sel.count or 1):
            style = style + _SELECTED
        elif from_top == 1 and self._hinted(ci, True):
            style = style + _HINT
        return card_pretty(card), style

    # ------------------------------------------------------------- clicking
    def hit(self, x: int, y: int) -> Hit | None:
        """The place under cell (x, y) of the board, or ``None`` for empty space."""
        if y == 0:
            return Hit(FOUNDATION)
        if y == 1:
            return Hit(STOCK) if x < self._stock_end else Hit(WASTE)
        if y < HEADER_ROWS - 1 or x < 1:
            return None
        ci = (x - 1) // self.cell
        if ci >= self.columns:
            return None
        if y == HEADER_ROWS - 1:
            return Hit(ci)
        row = y - HEADER_ROWS
        column = self.view.tableau[ci]
        shown = self._shown[ci]
        if row >= len(shown):
            return Hit(ci)
        index = shown[row]
        if index == -1:
            index = 1
        return Hit(ci, len(column) - index)

    def column_x(self, index: int) -> int:
        """The x of column ``index``'s card text, for tests and tools that click."""
        return 2 + index * self.cell

    def render(self) -> Text:
        return Text("\n").join(self.lines)


class Board(Widget):
    """Draws the latest view; posts :class:`Board.Picked` when clicked."""

    DEFAULT_CSS = """
    Board { height: 1fr; width: 1fr; }
    """

    class Picked(Message):
        def __init__(self, hit: Hit) -> None:
            super().__init__()
            self.hit = hit

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._view: PlayerView | None = None
        self._selection: Selection | None = None
        self._hint: Move | None = None
        self.layout_cache: BoardLayout | None = None
        self.placeholder = "waiting for the deal…"

    def show(self, view: PlayerView | None, selection: Selection | None = None, hint: Move | None = None) -> None:
        """Redraw from this view (the caller's engine or server is the source of truth)."""
        self._view, self._selection, self._hint = view, selection, hint
        self.refresh()

    def render(self) -> Text:
        if self._view is None:
            self.layout_cache = None
            return Text(self.placeholder)
        self.layout_cache = BoardLayout(self._view, self.size.width, self.size.height, self._selection, self._hint)
        return self.layout_cache.render()

    def on_click(self, event: Click) -> None:
        layout = self.layout_cache
        if layout is None:
            return
        hit = layout.hit(event.x, event.y)
        if hit is not None:
            event.stop()
            self.post_message(self.Picked(hit))
