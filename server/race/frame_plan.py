"""A race hub's frame plan, without I/O: which progress frame each of its listeners gets now, the racers'
pace, and who is told of the start, the end, an abandoned lobby or a seat given back.

Why apart from the hub (server/race/hub.py): the hub's last fixes were ordering faults between a flush, a
welcome and an announcement, found under load. Decided here from state and the time given, with no
socket, Redis, timer or clock of its own, each case is a row of a table
(``tests/test_hub_plan.py``); the hub reads, encodes, sends and arms the timers this plan asks for.
A listener is anything with a ``seat`` (None for a spectator): the hub's :class:`~server.race.hub.Listener`.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Generic, Iterable, Mapping, Protocol, TypeVar

import msgspec

from shared import protocol as p

from ..store import EventKind, Line, RaceMeta, SeatClaim
from . import rules as races

RACER_LAG = 1.0
"""Seconds the racers' tables may lag behind with changes no racer sees (a move count) before a flush
sends them anyway: every racer's version (and move counts) catches up within this while the race is quiet."""


class HasSeat(Protocol):
    """What the plan needs of a listener."""

    @property
    def seat(self) -> int | None: ...


class HoldsSeat(HasSeat, Protocol):
    """A listener with the generation of the seat it holds (raised when a lobby seat is given back)."""

    @property
    def gen(self) -> int: ...


C = TypeVar("C", bound=HasSeat)
H = TypeVar("H", bound=HoldsSeat)


@dataclass
class Cursor:
    """Where a connection's progress table stands."""

    welcomed: bool = False
    needs_full: bool = True
    """The next flush sends the whole table (a snapshot welcome)."""
    table_version: int = 0
    """The version of the table its welcome gave (or replayed to) it: no flush may go back before it."""
    seen: dict[int, p.PlayerProgress] | None = field(default=None)
    """After a resumed welcome: the table the client has (the next flush sends the difference)."""

    def welcome(self, version: int, seen: list[p.PlayerProgress] | None) -> None:
        """Welcomed at ``version`` with a snapshot (``seen`` None: owed the full table) or a replay that left
        it with ``seen`` (owed what differs)."""
        self.table_version = version
        self.seen = None if seen is None else {e.seat: e for e in seen}
        self.needs_full = seen is None
        self.welcomed = True

    @property
    def owed_first(self) -> bool:
        """Welcomed and owed its first table (the full one, or the difference from its resumed welcome)."""
        return self.welcomed and (self.needs_full or self.seen is not None)


class Frame(enum.Enum):
    """The progress frames of one flush: every listener of a kind but :attr:`OWN` gets the same bytes."""

    FULL = "full"
    """The whole table (``full: true``): after a snapshot welcome, or when a seat left the table."""
    OWN = "own"
    """What differs from the table a resumed welcome left this connection with."""
    RACERS = "racers"
    """The racers' changes, paced (:meth:`RacersPace.changes`)."""
    SPECTATORS = "spectators"
    """Every change since the last flush."""


Send = tuple[C, Frame, list[p.PlayerProgress]]
"""One progress frame planned for one listener: the listener, its frame's kind, the lines it carries. A
plain tuple: a flush makes one a listener, and a named tuple cost six times as much to make."""


class FlushPlan(Generic[C]):
    """What one flush sends, and what it leaves for later. (A plain class: made at every flush.)"""

    __slots__ = ("sends", "again", "racers_due_in")

    def __init__(self, racers_due_in: float | None = None) -> None:
        self.sends: list[Send[C]] = []
        self.again = False
        """A listener waits for a table read after its welcome: flush again (next tick)."""
        self.racers_due_in = racers_due_in
        """Look again within this many seconds: the racers' frame is due then (None: no need)."""


@dataclass
class RacersPace:
    """The table as the racers have it, and when their next frame may go (``now``: a monotonic clock)."""

    sent: dict[int, p.PlayerProgress] = field(default_factory=dict)
    behind_since: float | None = None
    """When the racers' table first fell behind with changes they do not see (None: it is not)."""
    last: float = -1e9
    """When the racers were last sent a frame: the next waits ``interval`` (``--racer-hz``)."""

    def behind(self, now: float) -> float:
        """The racers' tables lack a change they do not see: the seconds within which a flush sends it."""
        if self.behind_since is None:
            self.behind_since = now
        return RACER_LAG

    def changes(self, table: list[p.PlayerProgress], now: float, interval: float,
                first: bool = False) -> tuple[list[p.PlayerProgress], float | None]:
        """The lines to send the racers now, and when to look again (None: no need): every line that
        differs from theirs once one of them differs in what a racer's screen shows
        (:func:`shared.protocol.racer_sees`), or once they have been behind for :data:`RACER_LAG`, or
        (``first``) a racer waits for its first table, and at most one frame every ``interval``.

        Why: at a human pace most moves change only a racer's move count, which no racer's screen shows,
        and each flush cost a frame to every racer of the race (most of a move's CPU). And a racer watches
        its own board: the others' cards home a quarter of a second later change nothing it does, where a
        frame to every racer for each card any of them brought home was most of what a move still cost.
        Spectators still get every change at ``progress_hz``. Coalesced, not dropped: the racers' frames
        carry every change since their last, so a racer's table is still exactly the race's at the frame's
        version (a resume diffs from it).
        """
        behind = [e for e in table if self.sent.get(e.seat) != e]
        if not behind:
            self.behind_since = None
            if len(self.sent) != len(table):  # a seat given back: every table is sent whole
                self.sent = {e.seat: e for e in table}
            return behind, None
        seen = self.sent
        if self.behind_since is None:
            self.behind_since = now
        if (first or any(e.seat not in seen or p.racer_sees(seen[e.seat]) != p.racer_sees(e) for e in behind)
                or now - self.behind_since >= RACER_LAG):
            wait = self.last + interval - now
            if wait <= 0:
                self.sent = {e.seat: e for e in table}
                self.behind_since = None
                self.last = now
                return behind, None
            return [], wait
        return [], self.behind_since + RACER_LAG - now

    def after_own_move(self, moves_only: bool, racers_only: bool, now: float, interval: float) -> float | None:
        """A move of this process was taken into a complete table: None to flush it now, or the seconds
        until the racers are due (their next frame takes it). Only when only racers up to date watch
        here: a change of a move count alone waits for :data:`RACER_LAG`; any change waits for the racers'
        next frame (``interval``), so that one flush, not two, carries it."""
        if not racers_only:
            return None
        if moves_only:
            return self.behind(now)
        wait = self.last + interval - now
        if wait > 0:
            return min(self.behind(now), wait)
        return None


def racers_only(conns: Mapping[C, Cursor]) -> bool:
    """Only racers with their table up to date are connected (no spectator, no welcome owed a table)."""
    return all(conn.seat is not None and cursor.welcomed and not cursor.needs_full and cursor.seen is None
               for conn, cursor in conns.items())


class ProgressPlan:
    """A hub's progress tables: the one spectators have, the racers' (:class:`RacersPace`), and the lines
    last made (a line its table did not replace gives its progress line again:
    :func:`server.race.rules.progress_lines`)."""

    def __init__(self) -> None:
        self.last_sent: dict[int, p.PlayerProgress] = {}
        """The table as the spectators (and connections just given a table) have it."""
        self.racers = RacersPace()
        self.made: races.MadeLines = {}
        self.read_version = -1
        """The race version of the table :attr:`last_sent` was made from (a later read at the same
        version holds nothing new: every change of a progress line is an event, which bumps it)."""

    def restart(self) -> None:
        """Make the next table anew: the start was heard after a table was made with the lobby's statuses
        ("ready", not "racing"), at a version that would otherwise send nothing again."""
        self.read_version = -1

    def flush(self, conns: Mapping[C, Cursor], lines: list[Line], started: bool, total: int, version: int,
              now: float, interval: float) -> FlushPlan[C] | None:
        """The frames of one flush of ``lines`` (the stored table at ``version``), and the cursors moved on
        as if they were sent; None when nothing was stored since the last table and nobody waits for one.
        ``total``: the variant's cards; ``now``: a monotonic clock; ``interval``: the racers' pace."""
        if (version == self.read_version and self.racers.behind_since is None
                and not any(c.needs_full or c.seen is not None for c in conns.values())):
            return None
        self.read_version = version
        table = races.progress_lines(lines, started, total, self.made)
        changed = [e for e in table if self.last_sent.get(e.seat) != e]
        seats = {e.seat for e in table}
        if self.last_sent.keys() - seats or self.racers.sent.keys() - seats:
            # A seat given back left the table: a merge by seat cannot drop a line, a full table can.
            for cursor in conns.values():
                cursor.needs_full, cursor.seen = True, None
        self.last_sent = {e.seat: e for e in table}
        first = any(conn.seat is not None and cursor.welcomed and (cursor.needs_full or cursor.seen is not None)
                    for conn, cursor in conns.items())
        racers_changed, due_in = self.racers.changes(table, now, interval, first)
        plan: FlushPlan[C] = FlushPlan(racers_due_in=due_in)
        # Every racer given its table has the racers' table; one given its first (full, or the difference
        # from its resumed welcome) has this one: only once the racers' table is this one too may it be
        # given it, or the racers' next frame (made from theirs) would repeat lines it has, and miss a line
        # changed back to what theirs shows (a rival ready, then waiting again: never sent to it).
        racers_in_step = self.racers.behind_since is None
        for conn, cursor in list(conns.items()):
            if not cursor.welcomed:
                continue
            owed_first = cursor.needs_full or cursor.seen is not None
            if owed_first and version < cursor.table_version:
                plan.again = True  # read before this connection's welcome: its first table must not go back
                continue
            if owed_first and conn.seat is not None and not racers_in_step:
                continue  # the racers' frame is not due yet: its flush gives this racer its first table
            if cursor.needs_full:
                cursor.needs_full = False
                plan.sends.append((conn, Frame.FULL, table))
            elif cursor.seen is not None:
                # Resumed: this connection's table is the one its welcome left it with, not the hub's.
                own = [e for e in table if cursor.seen.get(e.seat) != e]
                cursor.seen = None
                if own:
                    plan.sends.append((conn, Frame.OWN, own))
            elif conn.seat is not None:
                if racers_changed:
                    plan.sends.append((conn, Frame.RACERS, racers_changed))
            elif changed:
                plan.sends.append((conn, Frame.SPECTATORS, changed))
        return plan


class Phases:
    """The phase changes (start, end) a hub's connections were told of, or learnt of from their welcome."""

    def __init__(self) -> None:
        self.told: set[EventKind] = set()

    def first_meta(self, meta: RaceMeta) -> None:
        """A hub's first meta: what it shows, the welcomes built from it showed too."""
        self.told |= {EventKind.START} if meta.started else set()
        self.told |= {EventKind.END} if meta.status == "finished" else set()

    def first_time(self, change: EventKind) -> bool:
        """True once per phase change: a start or an end is announced once, however it was heard (the
        hub asks with no await before the frames go out, so two announcers cannot both send)."""
        if change in self.told:
            return False
        self.told.add(change)
        return True


def caught_up(stored: RaceMeta | None, known: RaceMeta | None, told: set[EventKind],
              version: int) -> list[tuple[int, EventKind | None]]:
    """The events (version, kind; None: something changed) a hub redoes when it compares the ``stored``
    race with what it knows (``known``, the phase changes it ``told``, its ``version``): what lost pub/sub
    messages would have brought. A lobby gone from the store was abandoned."""
    if stored is None:
        return [(version + 1, EventKind.ABANDON)] if known is not None and known.status == "lobby" else []
    missed: list[tuple[int, EventKind | None]] = []
    if stored.started and EventKind.START not in told:
        missed.append((stored.version, EventKind.START))
    if stored.status == "finished" and EventKind.END not in told:
        missed.append((stored.version, EventKind.END))
    return [*missed, (stored.version, None)]


def countdowns(meta: RaceMeta, version: int, server_time: int, conns: Iterable[C]) -> list[tuple[C, p.Countdown]]:
    """The start for each of ``conns``: players get the first board, spectators never see one (two
    messages in all, shared)."""
    countdown = p.Countdown(version=version, starts_at=meta.starts_at, ends_at=meta.ends_at, server_time=server_time)
    for_players = msgspec.structs.replace(countdown, view=p.View.from_player_view(races.new_game(meta).view()))
    return [(conn, for_players if conn.seat is not None else countdown) for conn in conns]


def welcomed(conns: Mapping[C, Cursor]) -> list[C]:
    """The connections that were sent their welcome (only they are told of a start or an end)."""
    return [conn for conn, cursor in conns.items() if cursor.welcomed]


def released(holders: Iterable[H], claims: Mapping[int, SeatClaim | None]) -> list[H]:
    """The seat holders whose seat was given back: no claim, a claim ``left``, or one of another
    generation than the one the connection holds. They are told ``left`` and closed."""
    out = []
    for conn in holders:
        claim = claims.get(conn.seat) if conn.seat is not None else None
        if claim is None or claim.status == "left" or claim.gen != conn.gen:
            out.append(conn)
    return out
