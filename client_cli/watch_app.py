"""``thieves watch``: a spectator's view of a race, and replays after the end.

While the race runs a spectator sees every racer's bar, rank and the race
clock (never a board: boards are the racers' own). When it ends the server
reveals the deal and every racer's moves, so any game can be replayed here
move by move on the local engine, which also checks the server's verdict.
"""

from __future__ import annotations

from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Static

from shared import protocol as p
from shared.record import replay_steps
from shared.view import PlayerView

from .board import Board
from .connection import RaceLink
from .race_screens import LinkStatusChanged, LinkUpdated, StandingsScreen, fit_parts, make_link, panel_title
from .race_screens import race_parts, show_failure, show_link_status, status_width
from .race_state import Phase, RaceState
from .racers import RacersPanel
from .table import CSS_PATH, MessageLine, draw_shown, format_clock, table_layout
from .wording import move_text_words

TICK_SECONDS = 0.25


def replay_views(results: p.Results, record: p.PlayerRecord) -> tuple[list[PlayerView], list[str], str | None]:
    """The board before the first move and after each one, the moves, and
    the first error if the record does not replay (which would be a server bug)."""
    return replay_steps(results.variant, results.deal, record.moves)


class ReplayScreen(Screen[None]):
    """One racer's game, stepped with the arrow keys."""

    BINDINGS = [
        Binding("right,l", "step(1)", "Next"),
        Binding("left,h", "step(-1)", "Back"),
        Binding("pagedown", "step(10)", "+10", show=False),
        Binding("pageup", "step(-10)", "-10", show=False),
        Binding("end", "step(100000)", "End"),
        Binding("home", "step(-100000)", "Start"),
        Binding("escape", "app.pop_screen", "Standings"),
    ]

    def __init__(self, results: p.Results, record: p.PlayerRecord) -> None:
        super().__init__()
        self.results = results
        self.record = record
        self.views, self.moves, self.error = replay_views(results, record)
        self.index = 0

    def compose(self) -> ComposeResult:
        yield from table_layout(Board(id="board"))

    def on_mount(self) -> None:
        self.draw()
        if self.error:
            self.query_one(MessageLine).flash(self.error, seconds=0)

    def action_step(self, delta: int) -> None:
        self.index = max(0, min(len(self.views) - 1, self.index + delta))
        self.draw()

    def draw(self) -> None:
        """The board after ``index`` steps of the record, and the status line counting both ways.

        ``moves`` is the count the standings show (the server's: moves on the
        board, an undo takes one back); ``step`` walks the record, in which an
        undo is a step of its own (docs/notation.md, "Counting moves").
        """
        view = self.views[self.index]
        last = move_text_words(self.moves[self.index - 1]) if self.index else "start"
        parts = [
            (2, f"Replay: {self.record.name}"),
            (0, f"moves {view.move_count}"),
            (0, f"step {self.index}/{len(self.moves)} ({last})"),
            (1, f"home {view.cards_home}/{view.total_cards}"),
        ]
        self.query_one("#status", Static).update(fit_parts(parts, status_width(self.app)))
        self.query_one(Board).show(view)


class WatchApp(App):
    """Live bars for every racer; standings and replays at the end."""

    CSS_PATH = CSS_PATH
    ENABLE_COMMAND_PALETTE = False
    BINDINGS = [
        Binding("q", "quit", "Quit"),
        Binding("s", "standings", "Standings", show=False),
    ]

    def __init__(self, server: str, race: str) -> None:
        super().__init__()
        self.state = RaceState(race_ref=race, role="spectator")
        self.link: RaceLink = make_link(self, server, self.state)
        self._shown_results = False
        self._shown_failure = False

    def compose(self) -> ComposeResult:
        yield from table_layout(RacersPanel(id="racers"), row=True)

    def on_mount(self) -> None:
        self.redraw()
        self.run_worker(self.link.run(), exclusive=True, group="link", exit_on_error=False)
        self.set_interval(TICK_SECONDS, self.redraw)

    async def action_quit(self) -> None:
        self.link.close()
        self.exit()

    def status_text(self) -> str:
        parts = race_parts(self.state, self.link.status)
        elapsed = self.state.seconds_elapsed()
        if elapsed is not None and self.state.phase() in (Phase.RUNNING, Phase.FINISHED):
            parts.append((2, f"race clock {format_clock(elapsed)}"))
        return fit_parts(parts, status_width(self))

    def redraw(self) -> None:
        draw_shown(self, "#racers", self._draw)

    def _draw(self) -> None:
        self.query_one("#status", Static).update(self.status_text())
        self.query_one("#status").set_class(not self.link.online, "offline")
        title = panel_title(self.state)
        if self.state.results is not None:
            title += " · final (s standings, 1-9 replay)" if self.state.results.revealed else " · final (s standings)"
        lobby = self.state.phase() in (Phase.JOINING, Phase.LOBBY)
        self.query_one("#racers", RacersPanel).show(self.state.ranking(), None, title, lobby)

    def on_link_updated(self, message: LinkUpdated) -> None:
        self.redraw()
        self._shown_failure = show_failure(self, self.state, self._shown_failure)
        if self.state.results is not None and not self._shown_results:
            self._shown_results = True
            self.action_standings()

    def on_link_status_changed(self, message: LinkStatusChanged) -> None:
        self.redraw()
        show_link_status(self, message.status)
        self._shown_failure = show_failure(self, self.state, self._shown_failure)

    def action_standings(self) -> None:
        results = self.state.results
        if results is None:
            self.query_one(MessageLine).flash("the race is not over yet")
            return
        keys = "1-9 replay that rank's game · " if results.revealed else ""  # (no game to replay while secret)
        self.push_screen(StandingsScreen(results, None, keys), self._after_standings)

    def _after_standings(self, choice: str | None) -> None:
        if choice == "quit":
            self.link.close()
            self.exit()

    def on_key(self, event: events.Key) -> None:
        """Digits 1-9 replay the game of that rank (from the board or the standings)."""
        results = self.state.results
        if results is None or not event.character or not event.character.isdigit() or event.character == "0":
            return
        event.stop()
        self.replay_rank(int(event.character))

    def replay_rank(self, rank: int) -> None:
        results = self.state.results
        if results is None:
            return
        standings = sorted(results.standings, key=lambda s: (s.rank, s.seat))
        if rank > len(standings):
            self.query_one(MessageLine).flash(f"no racer at rank {rank}")
            return
        seat = standings[rank - 1].seat
        record = next((r for r in results.records if r.seat == seat), None)
        if record is None:
            self.query_one(MessageLine).flash(results.secret_words()
                                              or f"the results carry no game for {standings[rank - 1].name}")
            return
        while isinstance(self.screen, (StandingsScreen, ReplayScreen)):
            self.pop_screen()
        self.push_screen(ReplayScreen(results, record))
