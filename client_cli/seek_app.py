"""The waiting screen of ``thieves seek``: the pool, how many wait, the gap accepted now, the time
waited; ``q`` or Ctrl-C cancels the seek on the server (client_cli/commands/seek.py)."""

from __future__ import annotations

import time
from typing import Any

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Footer, Static

from shared import protocol as p

from .play_app import PlayApp
from .wording import error_words

POLL_SECONDS = 0.1


class SeekApp(App[None]):
    """Waits for ``matched`` on a seek link; ends with :attr:`matched`, :attr:`cancelled` or :attr:`error`."""

    BINDINGS = [Binding("q", "cancel", "Cancel the seek"), Binding("ctrl+c", "cancel", "Cancel", show=False,
                                                                   priority=True)]
    ENABLE_COMMAND_PALETTE = False
    """No ``^p palette`` in the footer (as on every screen of the client): nothing to run but q."""

    def __init__(self, link: Any) -> None:
        super().__init__()
        self.link = link
        self.matched: p.Matched | None = None
        self.cancelled = False
        self.error: str | None = None
        self.error_code = ""
        self.last: p.Seeking | None = None
        self.started = time.monotonic()
        self.cancelling = False

    def compose(self) -> ComposeResult:
        yield Static("seeking…", id="seek")
        yield Footer()

    def on_mount(self) -> None:
        self.title = "thieves — find a race"
        self.set_interval(POLL_SECONDS, self._drain)

    def _drain(self) -> None:
        from client_cli.commands.seek import waiting_words

        while not self.link.frames.empty():
            msg = self.link.frames.get_nowait()
            if isinstance(msg, p.Seeking):
                if self.last is None or msg.requeued:
                    self.started = time.monotonic() - msg.waited_ms / 1000
                self.last = msg
            elif isinstance(msg, p.Matched):
                self.matched = msg
                self.exit()
                return
            elif isinstance(msg, p.SeekCancelled):
                self.cancelled = msg.cancelled
                if msg.cancelled:
                    self.exit()
                    return
            elif isinstance(msg, p.Error):
                self.error, self.error_code = error_words(msg.code, msg.message), msg.code
                self.exit()
                return
            elif isinstance(msg, Exception):
                self.exit()
                return
        if self.last is not None:
            words = waiting_words(self.last, self.started)
            self.query_one("#seek", Static).update(words + ("\ncancelling…" if self.cancelling else "\nq cancels"))

    def action_cancel(self) -> None:
        self.cancelling = True
        self.link.cancel()


class SeekPlayApp(PlayApp):
    """The play table of a race formed from a seek: it steps aside by itself when the seek is put back
    in its pool (a player did not come, the race is gone), for the waiting screen to come back; after
    the race, ``a`` on the end screen ends it with :attr:`seek_again` set, for ``thieves seek`` to seek
    once more with the same settings."""

    def __init__(self, link: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.seek_link = link
        self.seek_again = False

    def again_words(self) -> str | None:
        return "seek again"

    def action_again(self) -> None:
        """After the race: leave it and seek another with the same settings."""
        if self.state.results is None:
            return
        self.seek_again = True
        self.link.close()
        self.exit()

    def on_mount(self) -> None:
        super().on_mount()
        self.set_interval(POLL_SECONDS, self._requeued)

    def _requeued(self) -> None:
        if any(isinstance(m, p.Seeking) and m.requeued for m in list(self.seek_link.frames.queue)):
            self.link.close()
            self.exit()
