"""The end of a race of an event in ``thieves event play``: the race's standings, then on by itself.

Why: the end screen used to wait for ``q`` ("q quit", no countdown), and a player who stepped away
missed the next round's race and was scored a no-show. Now, below the standings, a line says what the
event does next and when (``round 2 of 3 starts at 20:05:30 (in 0:42)``), looked up again every
:data:`LOOK_SECONDS`; as soon as the player's next race is drawn (or the event is over) the race's app
ends by itself and ``thieves event play`` goes on to it. It never goes on sooner than
:data:`SHOWN_SECONDS` after the end, so the result is seen; ``q`` goes on at once, Esc looks at the
board meanwhile (the app still goes on by itself).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Callable

from textual.css.query import NoMatches
from textual.widgets import Static

from shared import protocol as p

from .race_screens import StandingsScreen

LOOK_SECONDS = 1.0
"""How often the end screen asks the server what the event does next."""
SHOWN_SECONDS = 3.0
"""The least time the standings stay up before the app goes on to the next race by itself."""

NextLook = Callable[[], "tuple[str, bool]"]
"""What the event does next, in words with when, and whether to go on to it now (the player's next race
is drawn, or the event is over); blocking (it asks the server)."""


class EventEndScreen(StandingsScreen):
    """The race's final standings with the event's next step below them."""

    def __init__(self, results: p.Results, me: int | None) -> None:
        super().__init__(results, me)

    def on_mount(self) -> None:
        self.query_one("#dialog").mount(Static("asking the server what comes next…", id="next"),
                                        before="#result-keys")
        self.query_one("#result-keys", Static).update("goes on by itself · q on now · Esc back to the board")

    def show(self, text: str) -> None:
        try:
            self.query_one("#next", Static).update(text)
        except NoMatches:  # not mounted yet, or closed (the player looks at the board)
            pass


async def go_on_when_due(app: Any, screen: EventEndScreen, look: NextLook) -> None:
    """Keep ``screen`` saying what comes next; end ``app`` (closing its link) once it is due. Errors
    asking are said and asked again: a dropped connection must not leave the player waiting on a screen."""
    from . import api

    shown_at = time.monotonic()
    while True:
        try:
            words, due = await asyncio.to_thread(look)
        except api.ApiError as exc:
            words, due = f"cannot ask the server what comes next: {exc.words()} (asking again)", False
        if due and time.monotonic() - shown_at >= SHOWN_SECONDS:
            app.link.close()
            app.exit()
            return
        screen.show(f"next: {words}")
        await asyncio.sleep(LOOK_SECONDS)
