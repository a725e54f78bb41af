"""``thieves event watch``: an event's standings, live, at 80×24.

It follows the event's stream (``GET /events/{id}/stream``: one whole frame whenever the event or a
heat of its round moves, at most two a second): the event's clock at the top (what it waits for and
how long), then during a round each heat's racers as their race's table shows them, with the
matchpoints the round would give them now, then the standings, best first. It ends by itself a
little after the event has finished and leaves the final standings on the terminal. A dropped
stream is joined again (each frame is whole, so nothing is lost).
"""

from __future__ import annotations

import threading
import time

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Footer, Static

from shared import protocol as p

RECONNECT_SECONDS = 2.0
ROWS = 12
"""Standings lines shown at 24 rows (the clock, the live heats and the footer take the rest)."""
LIVE_ROWS = 5


class EventWatchApp(App[None]):
    BINDINGS = [Binding("q", "quit", "Quit")]
    CSS = "#clock { text-style: bold; } #live { color: $text-muted; }"

    def __init__(self, server: str, event: str) -> None:
        super().__init__()
        self.server = server
        self.event = event
        self.last_text = ""
        self.frame: p.EventLive | None = None
        self._stop = threading.Event()

    def compose(self) -> ComposeResult:
        yield Static(f"event {self.event} at {self.server}: connecting...", id="clock")
        yield Static("", id="live")
        yield Static("", id="table")
        yield Footer()

    def on_mount(self) -> None:
        threading.Thread(target=self._follow, daemon=True).start()
        self.set_interval(1.0, self._tick)

    def on_unmount(self) -> None:
        self._stop.set()

    def _follow(self) -> None:
        """The stream, in a thread (its reads block); each frame goes to the app's own thread."""
        from client_cli import api

        while not self._stop.is_set():
            try:
                for frame in api.event_frames(self.server, self.event):
                    if self._stop.is_set():
                        return
                    self.call_from_thread(self.show, frame)
            except api.ApiError as exc:
                if self._stop.is_set():
                    return
                self.call_from_thread(self._problem, exc.words())
            self._stop.wait(RECONNECT_SECONDS)

    def _problem(self, words: str) -> None:
        self.query_one("#clock", Static).update(f"cannot follow the event: {words} (trying again)")

    def _tick(self) -> None:
        if self.frame is not None:
            self._draw_clock(self.frame)

    def _draw_clock(self, frame: p.EventLive) -> None:
        from client_cli.commands.event import clock, summary

        self.query_one("#clock", Static).update(f"{summary(frame.event)[:78]}\n{clock(frame.event, time.time() * 1000)}")

    def show(self, frame: p.EventLive) -> None:
        from client_cli.commands.event import standings_lines

        self.frame = frame
        self._draw_clock(frame)
        live = sorted(frame.live, key=lambda line: (-line.matchpoints, line.account))
        rows = [f"  heat {line.heat}  {line.account[:20]:<20} {line.status:<12} {line.home:>3} home "
                f"{line.matchpoints:>6g} mp now" for line in live[:LIVE_ROWS]]
        if len(live) > LIVE_ROWS:
            rows.append(f"  ... {len(live) - LIVE_ROWS} more racing")
        self.query_one("#live", Static).update("\n".join(rows))
        lines = standings_lines(frame.standings)
        self.last_text = "\n".join(lines)
        shown = lines[:ROWS + 1] + ([f"  ... {len(lines) - ROWS - 1} more"] if len(lines) > ROWS + 1 else [])
        self.query_one("#table", Static).update("\n".join(shown))
        if frame.event.status in ("finished", "cancelled"):
            self.set_timer(3.0, self.exit)
