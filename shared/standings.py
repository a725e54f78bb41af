"""The order of racers: who is ahead now, who won, and who cannot be told apart. Written once, here:
the live progress table, the final results, ratings, event matchpoints, arena points, the live event
feed and ``thieves verify`` all order racers with :func:`merit_of`, so none of them can disagree.

Finishers come first, by finish time. Everyone else follows by cards home;
with the same cards home, a player who played on (racing, blocked or
disconnected at the end) is ahead of one who gave up, then whoever reached
that count first. An event's no-show (drawn into a heat, never joined) is
below everyone. Giving up must never pay: before this rule a player who gave
up at 1/104 after two moves ranked above one who played on to the time limit
with the same 1/104, only for having reached it sooner.

Within one race the seat is the last resort of the order, not a result: two
lines that differ only by seat are *tied* (:func:`tied`), and ratings and
matchpoints treat them as equals.

The status words (what a racer, an event round or an arena entrant can be) are one vocabulary, typed
in ``shared/protocol/``: ``PlayerStatus``, ``FinalStatus``, ``RoundStatus``, ``ArenaStatus`` and
``LiveStatus``; :func:`final_status` and :func:`shown_status` are the only translations between them,
and :func:`status_words` says any of them to people (the terminal client and the web pages alike).
"""

from __future__ import annotations

from typing import Callable, Hashable, Protocol, Sequence, TypeVar, cast

from .protocol import FinalStatus, PlayerStatus

INF = float("inf")
Merit = tuple[int, float, int, int, float]
"""What the order knows of a result; equal merits are a tie."""


def merit_of(status: str, home: int, finished_at: int | None, home_at: int | None) -> Merit:
    """The standings rule (docs/protocol.md, "Standings and giving up"), on times of one clock (a
    race's, or each heat's own start so heats compare; None: never).

    Finishers: their finish time. Others: cards home (more is better), then played on (0) before
    gave up (1), then when that count was reached (never: last). An event's no-show is below all."""
    if status == "finished":
        return (0, finished_at if finished_at is not None else INF, 0, 0, 0.0)
    if status == "no_show":
        return (2, 0.0, 0, 0, 0.0)
    return (1, 0.0, -home, 1 if status == "gave_up" else 0, home_at if home_at is not None else INF)


class Placed(Protocol):
    """What the order reads of a race's line: a live ``server.store.Line`` (a missing time is 0) or a
    final ``shared.protocol.Standing`` (a missing time is None)."""

    @property
    def seat(self) -> int: ...
    @property
    def status(self) -> str: ...
    @property
    def home(self) -> int: ...
    @property
    def home_at(self) -> int | None: ...
    @property
    def finished_at(self) -> int | None: ...


L = TypeVar("L", bound=Placed)
T = TypeVar("T")


def merit(line: Placed) -> Merit:
    """A race line's merit (absolute times: 0 or None is "never")."""
    return merit_of(line.status, line.home, line.finished_at or None, line.home_at or None)


def rank_key(line: Placed) -> tuple[Merit, int]:
    """The sort key of a race's standings: the merit, then the seat (so the order is total)."""
    return (merit(line), line.seat)


def ranked(lines: Sequence[L]) -> list[tuple[int, L]]:
    """``(rank, line)`` best first; ranks are 1, 2, 3, ... with no shared places (the progress table
    and the final results, where every line has its own row)."""
    return [(i + 1, line) for i, line in enumerate(sorted(lines, key=rank_key))]


def tied(a: Placed, b: Placed) -> bool:
    """True when the standings cannot tell the two apart, only their seats: two finishers with the
    same finish time; or two non-finishers with the same cards home, reached at the same moment, who
    both played on or both gave up."""
    return merit(a) == merit(b)


def shared_ranks(ordered: Sequence[T], key: Callable[[T], Hashable]) -> list[int]:
    """Competition ranks of items already in order: an item equal (by ``key``) to the one before it
    shares its rank, and the next item's rank counts everyone above it (1, 1, 3). Every table that
    shares places (race ties, event and arena standings, the daily board) ranks with this."""
    out: list[int] = []
    for i, item in enumerate(ordered):
        out.append(out[-1] if i and key(ordered[i - 1]) == key(item) else i + 1)
    return out


def places(ordered: Sequence[Placed]) -> list[int]:
    """Shared places of race lines already in standings order (ties share a place: ratings)."""
    return shared_ranks(ordered, merit)


def final_status(stored: str) -> FinalStatus:
    """A racer's status once its race is over: won, gave up, or played on to the clock (whether it
    was racing, blocked or disconnected at the end: the final results, an event's live round)."""
    return "finished" if stored == "finished" else "gave_up" if stored == "gave_up" else "racing"


def win_ms(status: str, finished_at: int | None, starts: int) -> int | None:
    """A win's time from the start ``starts`` (None: not a win): what an event round and the daily
    board show and count."""
    return finished_at - starts if final_status(status) == "finished" and finished_at else None


def shown_status(stored: str, race_started: bool, online: int) -> PlayerStatus:
    """The status a client sees: lobby states turn into racing at the start;
    a racer (blocked or not) with no live connection shows as disconnected."""
    if race_started and stored in ("waiting", "ready"):
        stored = "racing"
    if stored in ("racing", "blocked") and online <= 0:
        return "disconnected"
    return cast(PlayerStatus, stored)  # a stored status is one of the protocol's (records.SeatStatus)


STATUS_WORDS: dict[str, str] = {
    "waiting": "waiting", "ready": "ready", "racing": "racing", "playing": "playing",
    "blocked": "blocked", "finished": "won", "gave_up": "gave up", "disconnected": "offline",
    "not_joined": "not joined", "no_show": "no show", "absent": "absent", "paused": "paused",
}
"""Every status word of the protocol (``PlayerStatus``, ``RoundStatus``, ``ArenaStatus``,
``LiveStatus``, a daily line's ``playing``) as people read it: one word for each, here only, so the
terminal's legend, its tables and the web pages cannot call one status two things. ``blocked``: no
legal move is left (the player may undo where allowed, or give up)."""

FINAL_RACING_WORDS = "out of time"
"""A final ``racing`` (:func:`final_status`): still playing when the clock ran out."""


def status_words(status: str, final: bool = False) -> str:
    """A status as people read it; ``final``: of a race that is over, where ``racing`` means the
    clock stopped the player. A status this vocabulary does not know is shown as it came."""
    if final and status == "racing":
        return FINAL_RACING_WORDS
    return STATUS_WORDS.get(status, status.replace("_", " "))
