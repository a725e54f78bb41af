"""``thieves play``: race on the server's copy of the game.

The board is the last view the server sent (``welcome``, ``countdown`` or
an ``ack``): the client never plays a move locally, so what is on screen is
always what the server holds, and an illegal move shows the server's reason.
Group-move counts (Josephine) are chosen with a rules engine rebuilt from
the view (:func:`client_cli.shadow.shadow_game`), which is enough to know
what fits but never knows the stock.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.css.query import NoMatches
from textual.widgets import Static

from shared import protocol as p
from shared.moves import IllegalReason, Move
from shared.view import PlayerView

from .board import Board
from .connection import RaceLink
from .event_end import EventEndScreen, NextLook, go_on_when_due
from .identity import SeatKeeper
from .keymap import describe_move
from .race_screens import LinkStatusChanged, LinkUpdated, StandingsScreen, fit_parts, make_link, panel_title
from .race_screens import (ConfirmQuitScreen, LeaveLobbyScreen, lobby_text, offline_words, race_parts, show_failure,
                           show_link_status, status_width)
from .race_state import Phase, RaceState
from .racers import RacersPanel
from .rematch import RematchMixin
from .shadow import shadow_game
from .table import TableApp, table_layout, with_reasons
from .wording import error_words, reject_words

TICK_SECONDS = 0.25


class PlayApp(RematchMixin, TableApp):
    """A racer's table: board, racers' bars, countdown, standings."""

    MOVE_ACTIONS = frozenset({"draw", "to_foundation", "undo", "give_up", "hint"})
    """Keys of the game itself: offered only while this player may move."""

    # The footer shows a key only while it does something (check_action); pressed when
    # hidden, its twin runs the same action, which says why not ("the race has not started").
    BINDINGS = with_reasons(
        TableApp.BINDINGS + [
            Binding("u", "undo", "Undo"),
            Binding("ctrl+z", "undo", "Undo", show=False),
            Binding("s", "ready", "Ready"),
            Binding("b", "begin", "Start"),
            Binding("g", "give_up", "Give up"),
            Binding("y", "confirm_give_up", "Give up", show=False),
            Binding("h", "hint", "Hint"),
        ],
        MOVE_ACTIONS | {"ready", "begin"},
    )

    def __init__(self, server: str, race: str, name: str | None, creator_token: str | None = None, *,
                 key: str | None = None, token: str | None = None, keeper: SeatKeeper | None = None,
                 auto_ready: bool = False, then: NextLook | None = None) -> None:
        """``key``: join as that account; ``token``: a seat saved by an earlier run to take back;
        ``keeper``: saves every token a welcome brings (and forgets a seat that is gone);
        ``auto_ready``: say ready on joining the lobby (a rematch, which every racer asked for; a race
        formed from a seek, which starts once all are); ``then``: a race of an event, whose end screen
        says what the event does next and goes on to it by itself (client_cli/event_end.py)."""
        super().__init__()
        self.state = RaceState(race_ref=race, role="player", name=name, creator_token=creator_token, key=key,
                               token=token, saved_token=token is not None)
        self.keeper = keeper
        self.link: RaceLink = make_link(self, server, self.state, keeper)
        self._confirm_give_up = False
        self._shown_results = False
        self._shown_failure = False
        self.auto_ready = auto_ready
        self.then = then
        self._noticed_status: str | None = None

    def compose(self) -> ComposeResult:
        yield from table_layout(Board(id="board"), RacersPanel(id="side"), row=True)

    def on_mount(self) -> None:
        self.title = f"thieves — race {self.state.race_ref}"
        self.redraw()
        self.run_worker(self.link.run(), exclusive=True, group="link", exit_on_error=False)
        self.set_interval(TICK_SECONDS, self._tick)

    def _tick(self) -> None:
        try:
            status = self.query_one("#status", Static)
        except NoMatches:  # a tick while another screen (the standings) is on top or the app closes
            return
        status.update(self.status_text())
        self._update_placeholder()
        self.refresh_bindings()  # the clock alone moves the countdown to the race

    def _code(self) -> str:
        return self.state.info.code if self.state.info is not None else self.state.race_ref

    async def action_quit(self) -> None:
        """Mid-race, ask first; in the lobby, offer to give the seat back; else quit at once."""
        phase = self.state.phase()
        if phase in (Phase.COUNTDOWN, Phase.RUNNING) and self.state.my_status not in ("finished", "gave_up"):
            self.push_screen(ConfirmQuitScreen(self._code()), self._after_confirm_quit)
            return
        if phase is Phase.LOBBY and self.state.seat is not None and not self.state.fatal:
            self.push_screen(LeaveLobbyScreen(self._code()), self._after_lobby_quit)
            return
        self.link.close()
        self.exit()

    def _after_lobby_quit(self, choice: str | None) -> None:
        if choice == "keep":
            self.link.close()
            self.exit()
        elif choice == "leave":
            if self.state.phase() is not Phase.LOBBY:
                self.flash("the race has started: a seat cannot be left now (g gives up)")
            elif self.link.leave():
                self.flash("leaving the race…", error=False)
            else:
                self.flash("offline: try again once reconnected (or q, k to keep the seat)")
        else:
            self.redraw()

    def _after_confirm_quit(self, quit_now: bool | None) -> None:
        if quit_now:
            self.link.close()
            self.exit()
        else:
            self.flash("still racing", error=False)
            self.redraw()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Which keys the footer offers now: the game's only while this player may move (undo and
        hints only where the race allows them, draw while the stock has a card), ready and start only
        in the lobby."""
        info = self.state.info
        phase = self.state.phase()
        if action in self.MOVE_ACTIONS:
            if self.accepting_moves() is not None:
                return False
            if action == "undo":
                return info is not None and info.undo
            if action == "hint":
                return info is not None and info.hints
            if action == "draw":
                return self.state.view is not None and self.state.view.stock_count > 0
            return True
        if action == "ready":  # (a race its maker starts at a set time waits for no one's ready)
            return phase is Phase.LOBBY and (info is None or info.scheduled_at is None)
        if action == "begin":
            return phase is Phase.LOBBY and bool(self.state.creator_token)
        return True

    def action_unoffered(self, action: str) -> None:
        """A key the footer does not offer now: run its action anyway, which says why not."""
        getattr(self, f"action_{action}")()

    # ---------------------------------------------------- TableApp hooks
    def current_view(self) -> PlayerView | None:
        return self.state.view

    def reason(self, move: Move) -> IllegalReason | None:
        view = self.state.view
        return shadow_game(view).reason(move) if view is not None else None

    def accepting_moves(self) -> str | None:
        return self.state.can_move()

    def submit(self, move: Move) -> None:
        self._confirm_give_up = False
        self._send_move(move.text())

    def _send_move(self, text: str) -> None:
        """Send a move; offline, say at once that it waits (nothing on the board moves until the server
        plays it, so a key pressed while offline seemed to do nothing)."""
        self.link.send_move(text)
        if not self.link.online:
            self.flash(offline_words(self.link.status.detail or "reconnecting", len(self.state.pending)), seconds=0)

    def status_text(self) -> str:
        parts = race_parts(self.state, self.link.status)
        view = self.state.view
        if self.state.my_status == "gave_up" and self.state.phase() is Phase.RUNNING:
            parts.append((0, "you gave up"))
        if view is not None:
            parts += [(1, f"moves {view.move_count}"), (0, f"home {view.cards_home}/{view.total_cards}")]
        if self.state.helped:
            parts.append((2, "† with help"))
        return fit_parts(parts, status_width(self))

    def draw(self) -> None:
        super().draw()
        self.query_one("#status").set_class(not self.link.online, "offline")
        lobby = self.state.phase() in (Phase.JOINING, Phase.LOBBY)
        self.query_one("#side", RacersPanel).show(self.state.ranking(), self.state.seat, panel_title(self.state), lobby)
        self._update_placeholder()
        self.refresh_bindings()

    def _update_placeholder(self) -> None:
        """Lobby and countdown texts where the board will be."""
        if self.state.view is not None:
            return
        self.board.placeholder = self.lobby_text()
        self.board.refresh()

    def lobby_text(self) -> str:
        return lobby_text(self.state)

    # ---------------------------------------------------- link events
    def on_link_updated(self, message: LinkUpdated) -> None:
        state = self.state
        if message.kind == "reject" and state.last_reject is not None:
            self.flash(reject_words(state.last_reject_move, state.last_reject.reason))
        elif message.kind == "hintanswer":
            self._show_hint()
        elif message.kind == "left":
            if self.keeper is not None:
                self.keeper.forget()
            self.link.close()
            self.exit()
            return
        elif message.kind == "error":
            err = state.last_error
            if err is not None and err.ref == "leave":
                self.flash(f"cannot leave: {error_words(err.code, err.message)}")
            if state.seat_gone and self.keeper is not None:
                self.keeper.forget()
        elif message.kind.startswith("bad frame"):
            self.flash(message.kind)
        elif message.kind == "welcome" and self.auto_ready and state.phase() is Phase.LOBBY and not state.ready:
            self.link.set_ready(True)
        self.redraw()
        self._notice_my_status()
        self._shown_failure = show_failure(self, state, self._shown_failure)
        if state.results is not None and not self._shown_results:
            self._shown_results = True
            self.picker.cancel()
            self.message.clear()
            if self.then is not None:  # a race of an event (no rematch): on by itself to the next
                screen = EventEndScreen(state.results, state.seat)
                self.push_screen(screen, self._after_standings)
                self.run_worker(go_on_when_due(self, screen, self.then), group="event", exit_on_error=False)
            else:
                self._show_standings(state.results)

    def _show_standings(self, results: p.Results) -> None:
        """The end screen: the standings, a rematch's line and keys for an account in a race that may have
        one (not while its deal stays secret: a race of an event or of the daily deal offers none), and
        a rated race's rating change once the server has applied it."""
        state = self.state
        if state.key is not None and results.revealed:
            screen: StandingsScreen = self.show_rematch_standings(results, state.seat, self._after_standings,
                                                                  self.again_words())
        else:
            screen = StandingsScreen(results, state.seat, again=self.again_words())
            self.push_screen(screen, self._after_standings)
        me = next((s for s in results.standings if s.seat == state.seat), None)
        if state.info is not None and state.info.rated and me is not None and me.account:
            self.run_worker(self._show_rating(screen, me.account, results.race), group="rating",
                            exit_on_error=False)

    async def _show_rating(self, screen: StandingsScreen, account: str, race: str) -> None:
        from .rating_change import rating_change

        screen.note("rating", "rating: waiting for the results to be applied…")
        words = await rating_change(self.link.server, account, race)
        screen.note("rating", words or "rating: not applied yet (thieves me shows it)")

    def again_words(self) -> str | None:
        """What ``a`` on the end screen does, in words (a seek's table seeks again), or None: nothing."""
        return None

    def action_again(self) -> None:
        """``a`` on the end screen: nothing here (see :meth:`again_words`)."""

    def _notice_my_status(self) -> None:
        """Say it, and keep saying it, when this player has no move left or has given up: the board and
        a mark beside the name alone left a stuck player pressing keys that do nothing."""
        status = self.state.my_status if self.state.phase() is Phase.RUNNING else None
        if status == self._noticed_status:
            return
        was, self._noticed_status = self._noticed_status, status
        view = self.state.view
        info = self.state.info
        if status == "blocked":
            undo = "u takes a move back, " if info is not None and info.undo else ""
            self.message.stand(f"no legal move is left: {undo}g gives up (your cards home still count)", True)
        elif status == "gave_up":
            home = f"your {view.cards_home} cards home count" if view is not None else "your cards home count"
            self.message.stand(f"you gave up: {home}; the race goes on for the others (q quits)")
        elif was in ("blocked", "gave_up"):
            self.message.stand("")

    def on_link_status_changed(self, message: LinkStatusChanged) -> None:
        self.redraw()
        show_link_status(self, message.status, len(self.state.pending))
        self._shown_failure = show_failure(self, self.state, self._shown_failure)

    def _after_standings(self, choice: str | None) -> None:
        if choice == "quit":
            self.link.close()
            self.exit()
        elif choice == "again":
            self.action_again()

    # ---------------------------------------------------- commands
    def action_undo(self) -> None:
        info = self.state.info
        if info is not None and not info.undo:
            self.flash(p.ErrorCode.UNDO_DISABLED.explanation)
            return
        self.picker.cancel()
        why = self.accepting_moves()
        if why is not None:
            self.flash(why)
            return
        self._send_move(p.UNDO)

    def action_confirm_give_up(self) -> None:
        """``y`` answers the give-up question as a second ``g`` does (as ``y`` answers the quit one)."""
        if self._confirm_give_up:
            self.action_give_up()

    def action_hint(self) -> None:
        why = self.state.can_hint()
        if why is not None:
            self.flash(why)
            return
        if self.link.post(p.HintRequest()):
            self.flash("asking the server for a hint…", error=False)
        else:
            self.flash("offline: try again once reconnected")

    def _show_hint(self) -> None:
        """Highlight the suggested move on the board and say what it is worth."""
        answer = self.state.hint
        if answer is None:
            return
        if answer.move is None:
            self.hint = None
            self.flash("hint: no move is possible here", error=False)
            return
        self.hint = Move.parse(answer.move)
        if answer.winning:
            worth = f"from a winning line ({answer.remaining} moves to go)"
        elif answer.verdict == "unwinnable":
            worth = "no winning line exists from here"
        else:
            worth = "no winning line found in time: just a promising move"
        self.flash(f"hint: {describe_move(self.hint)}, {worth}", error=False)

    def action_ready(self) -> None:
        if self.state.phase() is not Phase.LOBBY:
            return
        if not self.link.set_ready(not self.state.ready):
            self.flash("offline: try again once reconnected")
        self.redraw()

    def action_begin(self) -> None:
        if self.state.phase() is not Phase.LOBBY:
            return
        if not self.state.creator_token:
            self.flash("only the race's creator can start it")
        elif not self.link.start_race():
            self.flash("offline: try again once reconnected")

    def action_give_up(self) -> None:
        why = self.accepting_moves()
        if why is not None:
            self.flash(why)
            return
        if not self._confirm_give_up:
            self._confirm_give_up = True
            self.flash("give up? g or y gives up (your cards home still count)", error=False)
            return
        self._confirm_give_up = False
        if not self.link.give_up():
            self.flash("offline: try again once reconnected")
