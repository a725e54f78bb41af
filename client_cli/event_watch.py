"""``thieves event watch``: an event's standings, live, at 80×24.

It reads the event and its standings once a second (the server computes them anew from the rounds
on every read, so what shows is always what the rounds say) and redraws: the event's clock at the
top (what it waits for and how long), the current round's heats with their join codes, and the
standings below, best first. It ends by itself a little after the event has finished, leaving the
final standings on the terminal.
"""

from __future__ import annotations

import asyncio
import time

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Footer, Static

from shared import protocol as p

POLL_SECONDS = 1.0
ROWS = 14
"""Standings lines shown at 24 rows (the header, heats and footer take the rest)."""


class EventWatchApp(App[None]):
    BINDINGS = [Binding("q", "quit", "Quit")]
    CSS = "#clock { text-style: bold; } #heats { color: $text-muted; }"

    def __init__(self, server: str, event: str) -> None:
        super().__init__()
        self.server = server
        self.event = event
        self.last_text = ""
        self.failure: str | None = None

    def compose(self) -> ComposeResult:
        yield Static(f"event {self.event} at {self.server}", id="clock")
        yield Static("", id="heats")
        yield Static("", id="table")
        yield Footer()

    async def on_mount(self) -> None:
        self.run_worker(self._poll(), exclusive=True)

    async def _poll(self) -> None:
        from client_cli import api
        from client_cli.commands.event import clock, standings_lines, summary

        while True:
            try:
                info = await asyncio.to_thread(api.event, self.server, self.event)
                st = await asyncio.to_thread(api.event_standings, self.server, self.event)
            except api.ApiError as exc:
                self.query_one("#clock", Static).update(f"cannot read the event: {exc.words()} (retrying)")
                await asyncio.sleep(POLL_SECONDS * 3)
                continue
            self.query_one("#clock", Static).update(f"{summary(info)[:78]}\n{clock(info, time.time() * 1000)}")
            current = info.schedule[-1] if info.schedule and info.status != "finished" else None
            heats = [f"{h.code} {', '.join(h.entrants)}"[:78] for h in current.heats[:4]] if current else []
            self.query_one("#heats", Static).update("\n".join(heats))
            lines = standings_lines(st)
            self.last_text = "\n".join(lines)
            shown = lines[:ROWS + 1] + ([f"  ... {len(lines) - ROWS - 1} more"] if len(lines) > ROWS + 1 else [])
            self.query_one("#table", Static).update("\n".join(shown))
            if info.status == "finished":
                await asyncio.sleep(POLL_SECONDS * 3)
                self.exit()
                return
            await asyncio.sleep(POLL_SECONDS)
