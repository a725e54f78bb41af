"""Pieces the player's and the spectator's apps share: the standings screen,
the race line of the status bar, and the wiring of a :class:`RaceLink`."""

from __future__ import annotations

from typing import Callable

from rich.cells import cell_len
from textual import events
from textual.app import App, ComposeResult, ScreenStackError
from textual.binding import Binding
from textual.containers import Vertical
from textual.css.query import NoMatches
from textual.message import Message
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from shared import protocol as p
from shared.variants import UnknownVariant, get_variant

from .connection import LinkState, LinkStatus, RaceLink
from .race_state import Phase, RaceState
from .racers import standings_lines
from .table import MessageLine, format_clock
from .wording import clock_time


class LinkUpdated(Message):
    """The race state changed (``kind`` is the frame type that changed it)."""

    def __init__(self, kind: str) -> None:
        super().__init__()
        self.kind = kind


class LinkStatusChanged(Message):
    def __init__(self, status: LinkStatus) -> None:
        super().__init__()
        self.status = status


def make_link(app: App, server: str, state: RaceState,
              on_welcome: Callable[[p.Welcome], None] | None = None) -> RaceLink:
    """A link whose callbacks become messages to ``app`` (handled in its event loop turn).

    ``on_welcome`` runs in the link's own turn, before the app hears of the
    frame: keeping the token must not wait for a redraw.
    """
    return RaceLink(
        server,
        state,
        on_update=lambda kind: app.post_message(LinkUpdated(kind)),
        on_status=lambda status: app.post_message(LinkStatusChanged(status)),
        on_welcome=on_welcome,
    )


def variant_name(key: str) -> str:
    try:
        return get_variant(key).name
    except UnknownVariant:
        return key


def panel_title(state: RaceState) -> str:
    """``Racers · Forty Thieves`` once the race is known."""
    return f"Racers · {variant_name(state.info.variant)}" if state.info is not None else "Racers"


def race_parts(state: RaceState, link: LinkStatus) -> list[tuple[int, str]]:
    """The race line's parts with their rank for :func:`fit_parts` (0 = never dropped)."""
    info = state.info
    parts = [(0, info.code if info is not None else state.race_ref)]
    phase = state.phase()
    if phase is Phase.LOBBY and info is not None:
        parts.append((0, f"lobby {state.seats_taken()}/{info.seats}"))
    elif phase is Phase.COUNTDOWN:
        left = state.seconds_to_start()
        parts.append((0, f"starts in {max(0, int(left) + 1) if left is not None else '…'}"))
    elif phase is Phase.RUNNING:
        left = state.seconds_left()
        parts.append((0, f"{format_clock(left)} left" if left is not None else "running"))
    elif phase is Phase.FINISHED:
        parts.append((0, "finished"))
    closed = state.fatal is not None and link.state is LinkState.CLOSED
    parts.append((0, f"✗ {state.fatal}" if closed else link.text()))
    if info is not None:
        parts.append((3, state.checked_text()))
    return parts


def lobby_text(state: RaceState, local_ms: float | None = None) -> str:
    """What the lobby (and the countdown) shows where the board will be: the race and what it is part
    of, its settings (rated or not), and what the start waits for and when.

    A tournament's heat used to say only "Waiting for the race's creator to start it": the entrant did
    not learn which event, round or heat it was in, that the server starts it on time, or when.
    """
    if state.fatal:
        return f"Cannot join: {state.fatal}"
    info = state.info
    if info is None:
        return f"Joining race {state.race_ref}…"
    head = [info.title] if info.title else []
    if state.phase(local_ms) is Phase.COUNTDOWN:
        left = state.seconds_to_start(local_ms) or 0
        return "\n".join([*head, f"Get ready: the race starts in {max(0, int(left) + 1)}…"])
    checked = ("Checked deal: a winning line is known." if info.checked
               else "Deal not checked: it may have no winning line.")
    lines = [
        *head,
        f"Race {info.code} (id {info.id}): {state.seats_taken()}/{info.seats} seats taken.",
        ("Rated: the result changes your rating. " if info.rated else "")
        + f"Time limit {info.time_limit}s · undo {'allowed' if info.undo else 'not allowed'}"
        f" · hints {'allowed (h; marks you as played with help)' if info.hints else 'off'}.",
        checked,
        "",
    ]
    if info.scheduled_at is not None:
        left = max(0, int((info.scheduled_at - state.server_now(local_ms)) / 1000))
        local_at = info.scheduled_at - state.clock_offset_ms  # the server's moment on this machine's clock
        lines.append(f"The server starts the race at {clock_time(local_at)}, in {left // 60}:{left % 60:02d}, "
                     "whoever has joined.")
    elif info.start_mode == "all-ready":
        ready = "you are ready" if state.ready else "press s when you are ready"
        lines.append(f"The race starts when every racer is ready: {ready}.")
    elif state.creator_token:
        lines.append("You created this race: press b to start it.")
    else:
        lines.append("Waiting for the race's creator to start it.")
    lines.append("q: give your seat back, or quit and come back soon to the same seat.")
    return "\n".join(lines)


def fit_parts(parts: list[tuple[int, str]], width: int) -> str:
    """Join ``(rank, text)`` parts with `` · ``, dropping the highest ranks first until the line fits.

    A status line that is too wide is cut at the screen's edge, which at
    80 columns took the end of ``home 1/104`` while the connection was
    offline; what matters least goes first instead.
    """
    kept = list(parts)
    line = " · ".join(text for _, text in kept)
    while cell_len(line) > width and any(rank for rank, _ in kept):
        worst = max(rank for rank, _ in kept)
        drop = max(i for i, (rank, _) in enumerate(kept) if rank == worst)
        del kept[drop]
        line = " · ".join(text for _, text in kept)
    return line


def race_line(state: RaceState, link: LinkStatus, width: int = 10_000) -> str:
    """Race, phase and clock, the connection, and checked or not: the part of the status bar every
    race screen shows (a spectator, too, wants to know whether the deal has a known winning line)."""
    return fit_parts(race_parts(state, link), width)


def status_width(app: App) -> int:
    """Cells available to the status line (the terminal less its padding)."""
    return max(20, app.size.width - 2)


class StandingsScreen(ModalScreen[str]):
    """The final standings; Esc goes back to the board."""

    BINDINGS = [
        Binding("escape", "dismiss('look')", "Back"),
        Binding("q", "dismiss('quit')", "Quit"),
        Binding("a", "again", "Again", show=False),
    ]

    def __init__(self, results: p.Results, me: int | None, extra_keys: str = "", again: str | None = None) -> None:
        """``again``: what ``a`` does after this race, in words ("seek again"), or None where it does
        nothing (a modal screen keeps keys from the app, so the key is the screen's)."""
        super().__init__()
        self.results = results
        self.me = me
        self.extra_keys = extra_keys
        self.again = again

    def compose(self) -> ComposeResult:
        r = self.results
        head = f"The race is over — {variant_name(r.variant)}, deal #{r.deal}"
        secret = r.secret_words()
        if secret is not None:
            head = f"The race is over — {variant_name(r.variant)}\n{secret}"
        body = "\n".join([head, ""] + standings_lines(r.standings, r.starts_at, self.me))
        with Vertical(id="dialog"):
            yield Static(body, id="result")
            yield Static(self._keys_text(), id="result-keys")

    def _keys_text(self) -> str:
        again = f"a {self.again} · " if self.again else ""
        return f"{self.extra_keys}{again}Esc back to the board · q quit"

    def action_again(self) -> None:
        if self.again:
            self.dismiss("again")

    def set_extra_keys(self, extra_keys: str) -> None:
        """Offer other keys from now on (a rematch once the server says one may be offered)."""
        self.extra_keys = extra_keys
        try:
            self.query_one("#result-keys", Static).update(self._keys_text())
        except NoMatches:  # not mounted yet: compose shows them
            pass

    def note(self, ident: str, text: str) -> None:
        """A line of its own above the keys (``ident`` names it: a later note of that name replaces it)."""
        try:
            self.query_one(f"#{ident}", Static).update(text)
        except NoMatches:
            try:
                self.query_one("#dialog").mount(Static(text, id=ident), before="#result-keys")
            except NoMatches:  # not mounted yet, or closing
                pass


class FailedScreen(Screen[None]):
    """Why the race cannot be joined or watched, in place of an empty table; any key quits.

    Without it a refused join left the whole table and its game keys on
    screen with a one-line note where the board would be, and the reason
    reached the player only once they quit.
    """

    def __init__(self, title: str, reason: str) -> None:
        super().__init__()
        self.title_text = title
        self.reason = reason

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(f"{self.title_text}\n\n{self.reason}", id="result")
            yield Static("any key quits", id="result-keys")

    def on_key(self, event: events.Key) -> None:
        event.stop()
        self.app.exit()


def show_failure(app: App, state: RaceState, shown: bool) -> bool:
    """Put :class:`FailedScreen` over everything once the link gives up for good (``state.fatal``).

    ``shown``: whether it already is (a pushed screen joins the stack only
    later, so the stack cannot tell); returns the new value.
    """
    if state.fatal is None or shown:
        return shown
    what = "join" if state.role == "player" else "watch"
    if state.info is None:
        title = f"Cannot {what} race {state.race_ref}"
    else:
        title = f"Race {state.info.code}: the server ended the connection"
    app.push_screen(FailedScreen(title, state.fatal))
    return True


def offline_words(why: str, unsent: int = 0) -> str:
    """The line under the table while offline: why, the moves that wait to be sent, and that the
    client retries by itself."""
    waiting = f"{unsent} move{'s' if unsent > 1 else ''} not sent yet; " if unsent else ""
    return f"offline: {why}; {waiting}retrying by itself"


def show_link_status(app: App, status: LinkStatus, unsent: int = 0) -> None:
    """After a drop, say why under the table while the link retries, and how many moves played
    meanwhile wait to be sent (``unsent``: a key pressed offline moves nothing on the board, and once
    seemed to do nothing at all); clear it once back online."""
    try:
        line = app.screen.query_one("#message", MessageLine)
    except (NoMatches, ScreenStackError):  # a dialog on top, or the app not running: nothing to say
        return
    if status.state is LinkState.RECONNECTING and status.detail:
        line.flash(offline_words(status.detail, unsent), seconds=0)
    elif status.state is LinkState.ONLINE and line.text.startswith("offline: "):
        line.clear()


class ConfirmQuitScreen(ModalScreen[bool]):
    """Asked when ``q`` is pressed mid-race: a second ``q`` (or ``y``) quits, any other key goes back.

    One stray ``q`` used to end a race in progress with no way back into it.
    Quitting no longer loses the game: the seat's token is kept, so
    ``thieves play CODE`` takes it back while the race runs.
    """

    def __init__(self, code: str = "CODE") -> None:
        super().__init__()
        self.code = code

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static("Quit the race?\n\nYour game waits where it is while the clock runs: "
                         f"`thieves play {self.code}` takes your seat back. The cards you have home count.",
                         id="result")
            yield Static("q or y quits · any other key goes back to the race", id="result-keys")

    def on_key(self, event: events.Key) -> None:
        event.stop()
        self.dismiss(event.key in ("q", "y"))


class LeaveLobbyScreen(ModalScreen[str | None]):
    """Asked when ``q`` is pressed in the lobby: give the seat back, or quit and keep it a while.

    A seat left behind in the lobby used to stay taken (``race_full`` for the
    next player, ``name_taken`` for the same player) until the lobby timed
    out. ``l`` sends ``leave``: the seat is free at once. ``q`` or ``k``
    quits with the seat's token saved; the server holds an empty lobby seat
    only for its presence lease (15 s by default) before freeing it, so
    ``thieves play CODE`` soon after takes the same seat back, and later
    joins afresh. Any other key goes back to the lobby.
    """

    def __init__(self, code: str = "CODE") -> None:
        super().__init__()
        self.code = code

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static("Quit the lobby?\n\n"
                         "l  leave the race: your seat goes to the next player who joins\n"
                         f"k  quit for now: `thieves play {self.code}` soon after (within about 15 s) takes "
                         "the same seat back; later the server frees it and that command joins afresh",
                         id="result")
            yield Static("l leave · k or q quit for now · any other key goes back", id="result-keys")

    def on_key(self, event: events.Key) -> None:
        event.stop()
        self.dismiss({"l": "leave", "k": "keep", "q": "keep"}.get(event.key))
