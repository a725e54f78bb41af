"""Solo play: one deal on the local engine, with undo, redo, hints and a clock.

The :class:`~shared.engine.Game` is the only game state; every redraw asks
it for a fresh view. Offline by design: practice, and a way to try the
client without a server.
"""

from __future__ import annotations

import importlib
import random
import time
from typing import Callable

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from shared.deals import MIN_DEAL, deal
from shared.engine import Game, Status
from shared.moves import IllegalMove, IllegalReason, Move
from shared.variants import Variant
from shared.view import PlayerView

from .board import Board
from .keymap import describe_move
from .table import TableApp, format_clock, table_layout

HINT_SECONDS = 0.5
"""Time the hint search may take: a hint must feel instant."""

NEW_DEAL_LIMIT = 10**9
"""New shuffles are drawn from 1..this, all of them PySolFC game numbers."""

HintFn = Callable[[Game, float], "tuple[Move | None, str]"]


def load_hinter() -> HintFn:
    """The solver's hint (``shared.hints``) when that module exists, else the first legal move.

    The rules promise a hint that is legal, not one that is good; the note
    says which kind the player got.
    """
    try:
        module = importlib.import_module("shared.hints")
    except ImportError:
        return fallback_hint
    hint = getattr(module, "hint", None)
    if hint is None:
        return fallback_hint

    def solver_hint(game: Game, budget: float) -> tuple[Move | None, str]:
        h = hint(game, budget)
        if h.from_winning_line:
            return h.move, f"starts a winning line of {h.line_length} moves"
        if h.verdict.name == "UNWINNABLE":
            return h.move, "legal, but no winning line exists from here"
        return h.move, "legal; no winning line found in time"

    return solver_hint


def fallback_hint(game: Game, budget: float = 0.0) -> tuple[Move | None, str]:
    """A legal move, foundations first (no solver available)."""
    moves = game.legal_moves()
    return (moves[0] if moves else None), "a legal move"


class SoloClock:
    """Starts at the first move, stops at the win; restarting resets it."""

    def __init__(self, now: Callable[[], float] = time.monotonic) -> None:
        self._now = now
        self.reset()

    def reset(self) -> None:
        self.started: float | None = None
        self.stopped: float | None = None

    def start(self) -> None:
        if self.started is None:
            self.started = self._now()

    def stop(self) -> None:
        if self.started is not None and self.stopped is None:
            self.stopped = self._now()

    def resume(self) -> None:
        self.stopped = None

    @property
    def elapsed(self) -> float:
        if self.started is None:
            return 0.0
        return (self.stopped if self.stopped is not None else self._now()) - self.started


class WinScreen(ModalScreen[str]):
    """Shown when all cards are home; dismissed with what to do next."""

    BINDINGS = [
        Binding("n", "choose('new')", "New deal"),
        Binding("R", "choose('restart')", "Restart"),
        Binding("escape", "choose('look')", "Look at the board"),
        Binding("q", "choose('quit')", "Quit"),
    ]

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(self.text, id="result")
            yield Static("n new deal · R restart · Esc look at the board · q quit", id="result-keys")

    def action_choose(self, what: str) -> None:
        self.dismiss(what)


class SoloApp(TableApp):
    """``thieves solo``: a deal alone, offline."""

    TITLE = "Forty Thieves — solo"

    BINDINGS = [
        Binding("u", "undo", "Undo"),
        Binding("ctrl+z", "undo", "Undo", show=False),
        Binding("y", "redo", "Redo"),
        Binding("ctrl+y", "redo", "Redo", show=False),
        Binding("h", "hint", "Hint"),
        Binding("R", "restart", "Restart"),
        Binding("n", "new_deal", "New"),
    ]

    def __init__(self, variant: Variant, deal_number: int, game: Game | None = None) -> None:
        super().__init__()
        self.variant = variant
        self.deal_number = deal_number
        self.game = game if game is not None else Game.from_deal(deal(variant, deal_number))
        self.clock = SoloClock()
        self.helped = False
        self._confirm_new = False
        self._hinter = load_hinter()

    def compose(self) -> ComposeResult:
        yield from table_layout(Board(id="board"))

    def on_mount(self) -> None:
        self.redraw()
        self._after_move()
        self.set_interval(0.5, self._tick)

    def _tick(self) -> None:
        """The clock in the table's status line; the table's screen, even while another (the win
        screen, a confirmation) is on top: App.query_one would look there and find nothing."""
        for status in self.screen_stack[0].query("#status").results(Static):
            status.update(self.status_text())

    # ---------------------------------------------------- TableApp hooks
    def current_view(self) -> PlayerView:
        return self.game.view()

    def reason(self, move: Move) -> IllegalReason | None:
        return self.game.reason(move)

    def status_text(self) -> str:
        g = self.game
        parts = [
            f"{self.variant.name} #{self.deal_number}",
            f"moves {g.move_count}",
            format_clock(self.clock.elapsed),
            f"home {g.cards_home}/{g.total_cards}",
        ]
        if self.helped:
            parts.append("with help")
        status = g.status()
        if status is not Status.PLAYING:
            parts.append(status.value.upper())
        return "  ·  ".join(parts)

    def submit(self, move: Move) -> None:
        self._confirm_new = False
        try:
            self.game.push(move)
        except IllegalMove as exc:
            self.flash(f"{describe_move(move)}: {exc.reason.explanation}")
            return
        self.clock.start()
        self.message.clear()
        self._after_move()

    def _after_move(self) -> None:
        status = self.game.status()
        if status is Status.WON:
            self.clock.stop()
            self.redraw()
            self.push_screen(WinScreen(self._win_text()), self._after_win)
        elif status is Status.BLOCKED:
            self.flash("blocked: no legal move is left (u undo, R restart, n new deal)", seconds=0)

    def _win_text(self) -> str:
        g = self.game
        help_note = " (played with help)" if self.helped else ""
        return (
            f"You won {self.variant.name} #{self.deal_number}!\n"
            f"{g.cards_home}/{g.total_cards} home in {g.move_count} moves and "
            f"{format_clock(self.clock.elapsed)}{help_note}."
        )

    def _after_win(self, choice: str | None) -> None:
        if choice == "new":
            self.start_deal(random.randint(MIN_DEAL, NEW_DEAL_LIMIT))
        elif choice == "restart":
            self.action_restart()
        elif choice == "quit":
            self.exit()

    # ---------------------------------------------------- commands
    def action_undo(self) -> None:
        self.picker.cancel()
        self.hint = None
        try:
            self.game.pop()
        except IllegalMove as exc:
            self.flash(exc.reason.explanation)
        else:
            self.clock.resume()
            self.message.clear()
        self.redraw()

    def action_redo(self) -> None:
        self.picker.cancel()
        self.hint = None
        try:
            self.game.redo()
        except IllegalMove as exc:
            self.flash(exc.reason.explanation)
            self.redraw()
            return
        self.message.clear()
        self.redraw()
        self._after_move()

    def action_restart(self) -> None:
        """Back to the deal by taking every move back, so redo can replay them."""
        self.picker.cancel()
        self.hint = None
        while self.game.move_stack:
            self.game.pop()
        self.clock.reset()
        self.flash("restarted: y redoes the moves one by one", error=False)
        self.redraw()

    def action_new_deal(self) -> None:
        if self.game.move_count and not self._confirm_new:
            self._confirm_new = True
            self.flash("press n again for a new deal (this game is lost)", error=False)
            return
        self.start_deal(random.randint(MIN_DEAL, NEW_DEAL_LIMIT))

    def start_deal(self, number: int) -> None:
        self._confirm_new = False
        self.deal_number = number
        self.game = Game.from_deal(deal(self.variant, number))
        self.clock.reset()
        self.helped = False
        self.picker.cancel()
        self.hint = None
        self.flash(f"new deal: {self.variant.name} #{number}", error=False)
        self.redraw()

    def action_hint(self) -> None:
        if self.game.status() is not Status.PLAYING:
            self.flash("no hint: the game is over")
            return
        self.flash("thinking…", error=False)
        self._find_hint(self.game.copy(history=False), self.game.move_count)

    @work(thread=True, exclusive=True, group="hint")
    def _find_hint(self, game: Game, at_move: int) -> None:
        move, note = self._hinter(game, HINT_SECONDS)
        self.call_from_thread(self._show_hint, move, note, at_move)

    def _show_hint(self, move: Move | None, note: str, at_move: int) -> None:
        if at_move != self.game.move_count:
            return
        if move is None:
            self.flash("no legal move is left")
            return
        self.helped = True
        self.hint = move
        self.flash(f"hint: {describe_move(move)} ({note})", error=False, seconds=0)
        self.redraw()

