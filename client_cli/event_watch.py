"""``thieves event watch``: an event live, at 80×24.

It follows the event's stream (``GET /events/{id}/stream``: one whole frame whenever the event or a
heat of its round moves, at most five a second). The top two rows are the event and its clock (what
it waits for and when); below, one scrolling page (↑/↓, PgUp/PgDn, Home/End): first the races under
way, with whoever is still racing at the top (a duplicate round's heats as their tables show them, with
the matchpoints the round would give now; an arena's pairings and since when), then the standings,
best first. Nothing is cut off and no row is left blank while there is more to show: a round's live
lines used to stop at five with "… 1 more racing" over a dozen empty rows, and the one hidden was the
only entrant still racing.

It ends by itself a little after the event has finished and leaves the final standings on the
terminal. A dropped stream is joined again (each frame is whole, so nothing is lost); an event the
server does not know ends the watch with that one reason.
"""

from __future__ import annotations

import textwrap
import threading
import time

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Footer, Static

from shared import protocol as p
from shared.event_words import race_word, score_word
from shared.standings import status_words

RECONNECT_SECONDS = 2.0
DONE = ("finished", "gave_up")
"""A duplicate heat's statuses of entrants who are no longer racing (the others are shown first)."""


def live_lines(frame: p.EventLive, now_ms: float) -> list[str]:
    """The races under way at 80 columns, whoever is still racing first.

    A duplicate round lists every entrant as its heat's table shows it (``frame.live``); an arena's
    frame has no such lines, so its pairings come from the standings (each entrant ``playing`` in a
    race) and the event's schedule (the race's code and start).
    """
    if frame.live:
        still = [line for line in frame.live if line.status not in DONE]
        done = [line for line in frame.live if line.status in DONE]
        order = sorted(still, key=lambda x: (-x.matchpoints, -x.home, x.account)) + \
            sorted(done, key=lambda x: (-x.matchpoints, -x.home, x.account))
        head = f"round {frame.event.round} live: {len(still)} of {len(frame.live)} still racing"
        names = {line.account: line.name for line in frame.standings.lines}  # as registered
        race, score = race_word(frame.event.format), score_word(frame.event.score_field)
        out = [head] + [f"  {race} {line.heat:<3} {names.get(line.account, line.account)[:20]:<20} "
                        f"{status_words(line.status):<12} {line.home:>3} home "
                        f"{line.matchpoints:>4g} {score} now" for line in order]
        byes = [b for r in frame.event.schedule if r.round == frame.event.round for b in r.byes]
        return out + [f"  {'bye':<{len(race) + 4}} {names.get(b, b)[:20]:<20} a bye: no race this round" for b in byes]
    pairs: dict[str, list[str]] = {}
    for line in frame.standings.lines:
        if line.status == "playing" and line.race:
            pairs.setdefault(line.race, []).append(line.name)
    if not pairs:
        return []
    races = {h.race: (h.code, r.starts_at) for r in frame.event.schedule for h in r.heats}
    out = [f"racing now: {len(pairs)} race{'s' if len(pairs) != 1 else ''}"]
    for race, names in sorted(pairs.items(), key=lambda kv: races.get(kv[0], ("", 0))[1]):
        code, starts = races.get(race, (race[:6], 0))
        seconds = int(abs(now_ms - starts) / 1000)
        since = (f"starts in {seconds // 60}:{seconds % 60:02d}" if starts > now_ms
                 else f"racing {seconds // 60}:{seconds % 60:02d}")
        out.append(f"  {code:<7} {' vs '.join(names)[:50]:<50} {since}")
    return out


def header_lines(info: p.EventInfo, now_ms: float, width: int = 80) -> list[str]:
    """The event's summary and its clock, wrapped to ``width`` columns: cut at 80, the header lost what
    ends the summary (the entrants, the round) on an 80-column terminal."""
    from client_cli.commands.event import clock, summary

    text = " ".join(summary(info).split())  # the list's column padding means nothing on a line of its own
    return [*textwrap.wrap(text, width), *textwrap.wrap(clock(info, now_ms), width)]


class EventWatchApp(App[None]):
    """The live page of one event (module docstring)."""

    BINDINGS = [Binding("q", "quit", "Quit"),
                Binding("pagedown,space", "scroll('page_down')", "more"),
                Binding("pageup", "scroll('page_up')", "back"),
                Binding("down", "scroll('down')", show=False), Binding("up", "scroll('up')", show=False),
                Binding("home", "scroll('home')", show=False), Binding("end", "scroll('end')", show=False)]
    AUTO_FOCUS = None
    """Nothing takes the focus: the page's keys are the app's (and so in the footer)."""
    ENABLE_COMMAND_PALETTE = False
    """No ``^p palette`` in the footer: the page has no commands but its keys."""
    CSS = """
    #clock { text-style: bold; height: auto; }
    #body { height: 1fr; scrollbar-size-vertical: 1; }
    #table { text-wrap: nowrap; }
    """

    def __init__(self, server: str, event: str) -> None:
        super().__init__()
        self.server = server
        self.event = event
        self.last_text = ""
        """The standings as last shown (printed on the terminal once the watch ends)."""
        self.problem: str | None = None
        """Why the watch ended without the event (the server does not know it)."""
        self.frame: p.EventLive | None = None
        self._stop = threading.Event()

    def compose(self) -> ComposeResult:
        yield Static(f"event {self.event} at {self.server}: connecting...", id="clock")
        with VerticalScroll(id="body"):
            yield Static("", id="table")
        yield Footer()

    def on_mount(self) -> None:
        threading.Thread(target=self._follow, daemon=True).start()
        self.set_interval(1.0, self._tick)

    def on_unmount(self) -> None:
        self._stop.set()

    def action_scroll(self, how: str) -> None:
        """Move the page: ``page_down``, ``page_up``, ``down``, ``up``, ``home`` or ``end``."""
        body = self.query_one("#body", VerticalScroll)
        getattr(body, f"scroll_{how}")(animate=False)

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
                if exc.code == p.ErrorCode.EVENT_NOT_FOUND:  # (gone while watched): no retrying brings it back
                    self.call_from_thread(self._gone, exc.words())
                    return
                self.call_from_thread(self._problem, exc.words())
            self._stop.wait(RECONNECT_SECONDS)

    def _gone(self, words: str) -> None:
        self.problem = words
        self.exit()

    def _problem(self, words: str) -> None:
        self.query_one("#clock", Static).update(f"cannot follow the event: {words}\n(trying again)")

    def _tick(self) -> None:
        if self.frame is not None:
            self._draw(self.frame)

    def show(self, frame: p.EventLive) -> None:
        self.frame = frame
        self._draw(frame)
        if frame.event.status in ("finished", "cancelled"):
            self.set_timer(3.0, self.exit)

    def _draw(self, frame: p.EventLive) -> None:
        from client_cli.commands.event import standings_lines

        now = time.time() * 1000
        self.query_one("#clock", Static).update("\n".join(header_lines(frame.event, now, self.size.width or 80)))
        lines = standings_lines(frame.standings)
        self.last_text = "\n".join(lines)
        live = live_lines(frame, now)
        self.query_one("#table", Static).update("\n".join([*live, *lines]))
