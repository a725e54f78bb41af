"""Pieces the player's and the spectator's apps share: the standings screen,
the race line of the status bar, and the wiring of a :class:`RaceLink`."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Static

from shared import protocol as p
from shared.variants import UnknownVariant, get_variant

from .connection import LinkState, LinkStatus, RaceLink
from .race_state import Phase, RaceState
from .racers import standings_lines
from .table import format_clock


class LinkUpdated(Message):
    """The race state changed (``kind`` is the frame type that changed it)."""

    def __init__(self, kind: str) -> None:
        super().__init__()
        self.kind = kind


class LinkStatusChanged(Message):
    def __init__(self, status: LinkStatus) -> None:
        super().__init__()
        self.status = status


def make_link(app: App, server: str, state: RaceState) -> RaceLink:
    """A link whose callbacks become messages to ``app`` (handled in its event loop turn)."""
    return RaceLink(
        server,
        state,
        on_update=lambda kind: app.post_message(LinkUpdated(kind)),
        on_status=lambda status: app.post_message(LinkStatusChanged(status)),
    )


def variant_name(key: str) -> str:
    try:
        return get_variant(key).name
    except UnknownVariant:
        return key


def panel_title(state: RaceState) -> str:
    """``Racers · Forty Thieves`` once the race is known."""
    return f"Racers · {variant_name(state.info.variant)}" if state.info is not None else "Racers"


def race_line(state: RaceState, link: LinkStatus) -> str:
    """Race, phase and clock, the connection, and checked or not: the part of the status bar every
    race screen shows (a spectator, too, wants to know whether the deal has a known winning line)."""
    info = state.info
    parts = []
    parts.append(info.code if info is not None else state.race_ref)
    phase = state.phase()
    if phase is Phase.LOBBY and info is not None:
        parts.append(f"lobby {state.seats_taken()}/{info.seats}")
    elif phase is Phase.COUNTDOWN:
        left = state.seconds_to_start()
        parts.append(f"starts in {max(0, int(left) + 1) if left is not None else '…'}")
    elif phase is Phase.RUNNING:
        left = state.seconds_left()
        parts.append(f"{format_clock(left)} left" if left is not None else "running")
    elif phase is Phase.FINISHED:
        parts.append("finished")
    parts.append(link.text() if state.fatal is None or link.state is not LinkState.CLOSED else f"✗ {state.fatal}")
    if info is not None:
        parts.append(state.checked_text())
    return " · ".join(parts)


class StandingsScreen(ModalScreen[str]):
    """The final standings; Esc goes back to the board."""

    BINDINGS = [
        Binding("escape", "dismiss('look')", "Back"),
        Binding("q", "dismiss('quit')", "Quit"),
    ]

    def __init__(self, results: p.Results, me: int | None, extra_keys: str = "") -> None:
        super().__init__()
        self.results = results
        self.me = me
        self.extra_keys = extra_keys

    def compose(self) -> ComposeResult:
        r = self.results
        head = f"The race is over — {variant_name(r.variant)}, deal #{r.deal}"
        body = "\n".join([head, ""] + standings_lines(r.standings, r.starts_at, self.me))
        with Vertical(id="dialog"):
            yield Static(body, id="result")
            yield Static(f"{self.extra_keys}Esc back to the board · q quit", id="result-keys")
