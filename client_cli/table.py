"""The playing table shared by solo play and races: keys, clicks, messages.

:class:`TableApp` owns the key scheme and the selection; where a move goes
(a local engine, or the race server) is up to the subclass, which says what
the current view is (:meth:`TableApp.current_view`), how to check a move
locally (:meth:`TableApp.reason`) and what to do with one
(:meth:`TableApp.submit`). The widgets only draw what they are handed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from textual import events
from textual.app import App, ComposeResult, ScreenStackError
from textual.binding import Binding
from textual.containers import Horizontal
from textual.css.query import NoMatches
from textual.widget import Widget
from textual.widgets import Footer, Static

from shared.moves import DRAW, FOUNDATION, REDEAL, STOCK, WASTE, IllegalReason, Move
from shared.variants import GroupMoves, get_variant
from shared.view import PlayerView

from .board import Board
from .keymap import MAX_KEYED_COLUMNS, column_for_key
from .picker import Cancelled, Picker, Ready, Refused, Selected

MESSAGE_SECONDS = 3.0
"""How long an illegal-move reason stays on screen: long enough to read,
short enough not to linger over the next moves."""

CSS_PATH = Path(__file__).with_name("thieves.tcss")


def format_clock(seconds: float) -> str:
    """``m:ss`` (``h:mm:ss`` past an hour); negative values count down to zero."""
    s = max(0, int(seconds))
    h, rest = divmod(s, 3600)
    m, sec = divmod(rest, 60)
    return f"{h}:{m:02}:{sec:02}" if h else f"{m}:{sec:02}"


class MessageLine(Static):
    """One line under the board for reasons and notices; clears itself."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self._timer = None
        self._standing = ("", False)

    def flash(self, text: str, error: bool = True, seconds: float = MESSAGE_SECONDS) -> None:
        self.set_class(error, "error")
        self.update(text)
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_timer(seconds, self.clear) if seconds > 0 else None

    def stand(self, text: str, error: bool = False) -> None:
        """A notice that stays while it holds (``""``: none): shown now (it is news, over any reason
        shown), and again whenever a later flashed reason clears, so that cannot hide it for good."""
        self._standing = (text, error)
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self.clear()

    def clear(self) -> None:
        text, error = self._standing
        self.update(text)
        self.set_class(error, "error")

    @property
    def text(self) -> str:
        return str(self.content)


def table_layout(*middle: Widget, row: bool = False) -> ComposeResult:
    """Every table screen's frame: status line, ``middle`` (side by side in
    ``#middle`` when ``row``), message line, key footer."""
    yield Static(id="status")
    if row:
        with Horizontal(id="middle"):
            yield from middle
    else:
        yield from middle
    yield MessageLine(id="message")
    yield Footer()


def shows(app: App, part: str) -> bool:
    """Whether ``app``'s active screen holds ``part``: not while the app starts or stops, nor under a
    dialog (a frame can arrive at any of those times)."""
    try:
        return bool(app.screen.query(part))
    except ScreenStackError:
        return False


def draw_shown(app: App, part: str, draw: Callable[[], None]) -> None:
    """``draw()`` if ``app`` shows the screen holding ``part`` and all of it is there: while the app starts
    or stops its widgets are mounted and removed one by one, and a frame arriving then draws nothing."""
    if not shows(app, part):
        return
    try:
        draw()
    except NoMatches:  # a part of the table mounted not yet, or removed already
        return


def with_reasons(bindings: list[Binding], actions: set[str] | frozenset[str]) -> list[Binding]:
    """``bindings``, each one whose action is in ``actions`` followed by a hidden twin.

    An app hides a key from the footer while it does nothing (its
    ``check_action`` returns ``False``); the twin, run then in its place,
    calls ``action_unoffered(action)``, so the player still learns why not.
    """
    out: list[Binding] = []
    for binding in bindings:
        out.append(binding)
        if binding.action in actions:
            out.append(Binding(binding.key, f"unoffered('{binding.action}')", show=False))
    return out


class TableApp(App):
    """Keys and clicks to moves, for any source of views."""

    CSS_PATH = CSS_PATH
    ENABLE_COMMAND_PALETTE = False

    BINDINGS = [
        Binding("space", "draw", "Draw"),
        Binding("w", "pick_waste", "Waste", show=False),
        Binding("f", "to_foundation", "Home"),
        Binding("enter", "to_foundation", "Home", show=False),
        Binding("r", "redeal", "Turn over", show=False),
        Binding("escape", "cancel", "Cancel", show=False),
        Binding("q", "quit", "Quit"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.picker = Picker()
        self.hint: Move | None = None

    # ------------------------------------------------ for subclasses
    def current_view(self) -> PlayerView | None:
        raise NotImplementedError

    def reason(self, move: Move) -> IllegalReason | None:
        """A local check used to pick the count of a group move; ``None`` = legal."""
        raise NotImplementedError

    def submit(self, move: Move) -> None:
        raise NotImplementedError

    def accepting_moves(self) -> str | None:
        """``None`` when moves may be made now, else why not (shown to the player)."""
        return None

    def status_text(self) -> str:
        return ""

    # ------------------------------------------------ drawing
    @property
    def board(self) -> Board:
        return self.query_one("#board", Board)

    @property
    def message(self) -> MessageLine:
        return self.query_one("#message", MessageLine)

    def table_shown(self) -> bool:
        """Whether the table is the active screen (see :func:`shows`)."""
        return shows(self, "#board")

    def redraw(self) -> None:
        """Draw the table from the current view, if it is shown and whole (see :func:`draw_shown`)."""
        draw_shown(self, "#board", self.draw)

    def draw(self) -> None:
        """Draw the board and the status line from the current view."""
        self.board.show(self.current_view(), self.picker.selection, self.hint)
        self.query_one("#status", Static).update(self.status_text())

    def flash(self, text: str, error: bool = True, seconds: float = MESSAGE_SECONDS) -> None:
        """Show a reason or notice under the board; ``seconds=0`` keeps it until the next one."""
        self.message.flash(text, error, seconds)

    # ------------------------------------------------ input
    def on_key(self, event: events.Key) -> None:
        view = self.current_view()
        columns = len(view.tableau) if view is not None else MAX_KEYED_COLUMNS
        column = column_for_key(event.character, columns)
        if column is not None:
            event.stop()
            self.pick(column)

    def on_board_picked(self, message: Board.Picked) -> None:
        hit = message.hit
        if hit.place == STOCK:
            self.action_draw()
        else:
            self.pick(hit.place, hit.count)

    def pick(self, place: int, count: int | None = None) -> None:
        why = self.accepting_moves()
        if why is not None:
            self.picker.cancel()
            self.flash(why)
            self.redraw()
            return
        view = self.current_view()
        if view is None:
            return
        if count is not None and get_variant(view.variant).group_moves is GroupMoves.NONE:
            count = None  # a click anywhere in a column picks its top card where runs never move
        result = self.picker.pick(place, view, self.reason, count)
        if isinstance(result, Refused):
            self.flash(result.message)
        elif isinstance(result, Ready):
            self.play(result.move)
            return
        elif isinstance(result, (Selected, Cancelled)):
            self.message.clear()
        self.redraw()

    def play(self, move: Move) -> None:
        """Hand a finished move to the subclass (after the common checks)."""
        why = self.accepting_moves()
        if why is not None:
            self.flash(why)
        else:
            self.hint = None
            self.submit(move)
        self.redraw()

    def action_draw(self) -> None:
        self.picker.cancel()
        self.play(DRAW)

    def action_redeal(self) -> None:
        self.picker.cancel()
        self.play(REDEAL)

    def action_pick_waste(self) -> None:
        self.pick(WASTE)

    def action_to_foundation(self) -> None:
        self.pick(FOUNDATION)

    def action_cancel(self) -> None:
        if self.picker.cancel():
            self.message.clear()
            self.redraw()
