"""The rematch on a racer's end screen: ``m`` offers one (or accepts the offer), ``n`` declines it.

Once the race is over, the client asks the server about the offer every :data:`POLL_SECONDS` (as the
challenge commands do, and for the same reasons: docs/protocol.md, "Challenges"); when every racer
has said yes the server names the new race and the app ends with :attr:`RematchMixin.next_race` set,
which ``thieves play`` then joins, ready at once (everyone said yes already).
"""

from __future__ import annotations

import asyncio
from typing import Any

from textual.binding import Binding

from shared import protocol as p

from .race_screens import StandingsScreen

POLL_SECONDS = 1.0


def rematch_words(offer: p.Rematch, me: str) -> tuple[str, bool]:
    """What the end screen says of the offer, and whether ``m`` does something now."""
    others = [name for name in offer.players if name != me]
    if offer.status == "none":
        return "m: offer " + (", ".join(others) if others else "yourself") + " a rematch", True
    if offer.status == "open":
        if me in offer.accepted:
            waiting = [name for name in offer.players if name not in offer.accepted]
            return f"rematch offered: waiting for {', '.join(waiting)}", False
        return f"{', '.join(offer.accepted)} want{'s' if len(offer.accepted) == 1 else ''} a rematch: " \
               "m accepts, n declines", True
    if offer.status == "declined":
        return f"no rematch: {', '.join(offer.declined)} declined", False
    if offer.status == "expired":
        return "the rematch offer expired: m offers another", True
    return f"rematch: race {offer.code}, joining…", False


REMATCH_KEYS = "m rematch · "
"""Offered on the end screen once the server has said a rematch may be offered here."""


class RematchStandingsScreen(StandingsScreen):
    """The final standings with the rematch's line and keys (``m`` offered only once the server says a
    rematch is possible: a race of an event or of the daily deal offers none)."""

    BINDINGS = StandingsScreen.BINDINGS + [
        Binding("m", "app.rematch(True)", "Rematch"),
        Binding("n", "app.rematch(False)", "No rematch"),
    ]

    def on_mount(self) -> None:
        self.note("rematch", "asking the server about a rematch…")

    def show(self, text: str, offered: bool = True) -> None:
        """The rematch line; ``offered``: whether m and n do something in this race at all."""
        self.note("rematch", text)
        self.set_extra_keys(REMATCH_KEYS if offered else "")


class RematchMixin:
    """For the racer's app: the rematch watch, its screen and keys. The app provides ``link``, ``state``,
    ``flash``, ``run_worker``, ``push_screen`` and ``exit``."""

    next_race: str | None = None
    """The rematch's join code, once every racer said yes: ``thieves play`` joins it next."""
    _rematch_screen: RematchStandingsScreen | None = None
    _rematch_offer: p.Rematch | None = None
    _rematch_me = ""
    _rematch_refused = False
    """The server said this race offers no rematch: m and n are not offered."""

    def show_rematch_standings(self: Any, results: p.Results, seat: int | None, done: Any,
                               again: str | None = None) -> RematchStandingsScreen:
        """The standings with the rematch line, and the watch that keeps it up to date (``again``: as for
        :class:`StandingsScreen`)."""
        self._rematch_me = next((s.name for s in results.standings if s.seat == seat), "")
        self._rematch_screen = RematchStandingsScreen(results, seat, again=again)
        self.push_screen(self._rematch_screen, done)
        self.run_worker(self._watch_rematch(results.race), group="rematch", exit_on_error=False)
        return self._rematch_screen

    async def _watch_rematch(self: Any, race: str) -> None:
        from . import api

        while self.next_race is None:
            try:
                self._on_offer(await asyncio.to_thread(api.rematch_state, self.link.server, race))
            except api.ApiError as exc:
                if exc.code is not None:  # no rematch here (an event's heat...): say why and stop asking
                    self._rematch_refused = True
                    self._rematch_show(f"no rematch: {exc.words()}", offered=False)
                    return
            await asyncio.sleep(POLL_SECONDS)

    def _rematch_show(self, text: str, offered: bool = True) -> None:
        if self._rematch_screen is not None:
            self._rematch_screen.show(text, offered and not self._rematch_refused)

    def _on_offer(self: Any, offer: p.Rematch) -> None:
        self._rematch_offer = offer
        if offer.status == "accepted" and offer.code and self.next_race is None:
            self.next_race = offer.code
            self.link.close()
            self.exit()
            return
        self._rematch_show(rematch_words(offer, self._rematch_me)[0])

    def action_rematch(self: Any, accept: bool) -> None:
        """``m`` (``accept``) or ``n``: answer the rematch offer."""
        if self._rematch_screen is None or self.state.results is None or self.state.key is None:
            self.flash("a rematch is offered at the end of a race, to racers with an account")
            return
        if self._rematch_refused:  # the line says why already
            return
        if accept and self._rematch_offer is not None:
            words, offered = rematch_words(self._rematch_offer, self._rematch_me)
            if not offered:  # waiting for the others, or declined: m changes nothing now
                self._rematch_show(words)
                return
        self.run_worker(self._answer_rematch(self.state.results.race, accept), group="rematch-answer",
                        exit_on_error=False)

    async def _answer_rematch(self: Any, race: str, accept: bool) -> None:
        from . import api

        try:
            self._on_offer(await asyncio.to_thread(api.answer_rematch, self.link.server, race, self.state.key,
                                                   accept))
        except api.ApiError as exc:
            self._rematch_show(f"rematch: {exc.words()}")
