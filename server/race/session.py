"""One player's seat as one connection serves it, without I/O: a move in, a decision out.

The way ``websockets``' protocol layer works, and the client's
``race_state.py``: :class:`SeatSession` takes a ``move`` frame, the race's
settings and the time, and answers with a refusal (:class:`Refused`), a
:class:`Resend` (the ``seq`` was used: the stored log decides) or a
:class:`Pending` commit (what to store). The store's answer comes back
through :meth:`SeatSession.landed` (the move in flight is the session's:
:meth:`SeatSession.begin`), which hands out the acknowledgement, or says to
reload and then retry (another connection of the seat moved first: at most
:data:`MOVE_RETRIES` times) or answer a resend, or that the move failed.
The socket loop (``connection.py``, ``seat.py``) does the awaiting;
everything here is tested without sockets or Redis (``tests/test_session.py``).

Why a session keeps a game at all: validating a move needs the position,
and replaying the log from Redis for every move would cost a read and a
replay each time. The cached game is the stored log's replay as of
``n`` moves; a conflict or an unknown outcome drops or rebuilds it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from shared import protocol as p
from shared.engine import Game
from shared.moves import DRAW, IllegalReason, Move, MoveParseError

from ..store import Committed, CommitResult, Conflict, MoveCommit, PlayerState, RaceMeta, StoreError
from . import rules
from .rules import MoveStatus

class Refused(p.Refusal):
    """A frame refused with a protocol code (as text); ``close`` ends the connection after the error."""

    code: str

    def __init__(self, code: p.ErrorCode | str, message: str | None = None,
                 close: p.CloseCode | None = None) -> None:
        super().__init__(code.value if isinstance(code, p.ErrorCode) else code, message)
        self.close = close


@dataclass(frozen=True)
class Resend:
    """The move's ``seq`` is not above the last accepted one: answer from the stored log."""


@dataclass
class Pending:
    """A move checked and played on the cached game, to be stored; :meth:`revert` takes it back."""

    seq: int
    now: int
    expected_n: int
    """The log length the move was checked against (the store refuses it if another move came first)."""
    text: str
    """The move as stored (canonical notation, or ``U``)."""
    status: MoveStatus
    home: int
    moves: int
    revert: Callable[[], object]

    def commit(self, seat: int) -> MoveCommit:
        """What ``Store.commit_move`` stores of it, for ``seat``."""
        return MoveCommit(seat=seat, now=self.now, seq=self.seq, expected_n=self.expected_n, move=self.text,
                          home=self.home, moves=self.moves, status=self.status)


Step = Resend | Pending

MOVE_RETRIES = 2
"""Times a move is checked and sent again after a conflict before it is given up (a seat's connections
racing each other that long is a bug, not play)."""


@dataclass(slots=True)
class Moving:
    """The move in flight: its frame, its pending step, the race's settings it was checked against, and how
    many conflicts it met before."""

    msg: p.Move
    step: Pending
    meta: RaceMeta
    conflicts: int = 0


@dataclass(frozen=True)
class CatchUp:
    """The store did not take the move as sent: reload, then ``retry`` it (a conflict: another connection of
    the seat moved first) or answer it as a resend (the same move was stored before)."""

    moving: Moving
    retry: bool
    stored: int
    """The stored log's length."""


@dataclass(frozen=True)
class Failed:
    """The move was not stored (``error`` a :class:`Refused`), or whether it was is unknown (the cached game
    is forgotten: the next move reloads it). ``error`` None: shutting down, nothing to answer."""

    moving: Moving
    error: Exception | None


Landed = p.Ack | CatchUp | Failed
"""The move is stored (its ``ack`` to send), or what to do instead."""


class SeatSession:
    """A seat's game as this connection last knew it: log length ``n``, last accepted ``seq``."""

    def __init__(self, seat: int, gen: int = 0) -> None:
        self.seat = seat
        self.gen = gen
        """The generation of the seat this connection holds: when the seat is given back in the
        lobby it changes, and this connection no longer holds it."""
        self.game: Game | None = None
        self.n = 0
        self.seq = 0
        self.done = False
        """Won or given up: no more moves."""
        self.version = 0
        """The race version of the last answer this connection sent (for ``reject.version``)."""
        self.moving: Moving | None = None
        """The move being stored (None: the next move may go)."""

    # ------------------------------------------------------------ state
    @property
    def loaded(self) -> bool:
        return self.game is not None

    def load(self, meta: RaceMeta, state: PlayerState) -> None:
        """Rebuild the game from the stored log (first use, after a conflict, after a lost answer); refused
        (``bad_token``, closing) if the seat was given back in the lobby since this connection took it."""
        if state.gen != self.gen or state.left:
            # The seat was given back in the lobby (and maybe taken by another player): never act for it.
            raise Refused(p.ErrorCode.BAD_TOKEN, "this connection's seat was given back in the lobby",
                          close=p.CloseCode.BAD_TOKEN)
        self.game = rules.load_game(meta, state.moves)
        self.n, self.seq = state.n, state.seq
        self.done = state.status in ("finished", "gave_up")

    def forget(self) -> None:
        """Whether the store applied the last move is unknown: reload before the next one."""
        self.game = None

    def view(self) -> p.View:
        """The board as the player sees it (built from the piles that changed since the last one)."""
        assert self.game is not None
        return p.View.of_game(self.game)

    # ------------------------------------------------------------ moves
    def check(self, msg: p.Move, meta: RaceMeta, now: int) -> Step:
        """Decide about a move frame; raises :class:`Refused`. The game must be loaded."""
        if msg.seat is not None and msg.seat != self.seat:
            raise Refused(p.ErrorCode.NOT_YOUR_SEAT, f"this connection plays seat {self.seat}, not {msg.seat}")
        phase = meta.phase(now)
        if phase in ("lobby", "countdown"):
            raise Refused(p.ErrorCode.RACE_NOT_STARTED)
        if phase == "finished" or now >= meta.ends_at:
            raise Refused(p.ErrorCode.RACE_OVER)
        if msg.seq <= self.seq:
            return Resend()
        if self.done:
            raise Refused(p.ErrorCode.PLAYER_FINISHED)
        text, revert = self._play(msg.move, meta)
        game = self.game
        assert game is not None
        return Pending(msg.seq, now, self.n, text, rules.player_status(game), game.cards_home, game.move_count, revert)

    def begin(self, msg: p.Move, meta: RaceMeta, now: int, conflicts: int = 0) -> Step:
        """:meth:`check` a move and, pending, put it in flight (:attr:`moving`) until :meth:`landed`."""
        assert self.moving is None, "one move in flight at a time"
        step = self.check(msg, meta, now)
        if isinstance(step, Pending):
            self.moving = Moving(msg, step, meta, conflicts)
        return step

    def landed(self, result: CommitResult | BaseException) -> Landed:
        """The store's answer to the move in flight (or what it raised): what the connection does next."""
        moving = self.moving
        assert moving is not None, "no move in flight"
        self.moving = None
        step = moving.step
        if isinstance(result, Committed):  # the common case first, with no other test
            return self._stored(step, result)
        if isinstance(result, StoreError):  # the race or the player refused it: nothing was stored
            step.revert()
            return Failed(moving, Refused(result.code))
        if isinstance(result, BaseException):
            # Unknown whether Redis applied it: forget the cached game, reload on the next move (a resend
            # of this seq is then acknowledged as a duplicate if it did go through); cancelled: shutting
            # down, nothing to answer.
            self.forget()
            return Failed(moving, result if isinstance(result, Exception) else None)
        step.revert()
        return CatchUp(moving, retry=isinstance(result, Conflict), stored=result.n)

    @staticmethod
    def again(moving: Moving) -> int:
        """A move that met a conflict is checked and sent again: its conflicts so far; refused once it met
        :data:`MOVE_RETRIES` of them."""
        if moving.conflicts >= MOVE_RETRIES:
            raise Refused(p.ErrorCode.INTERNAL, "the move kept conflicting with other connections")
        return moving.conflicts + 1

    def gave_up(self, version: int) -> p.GaveUp:
        """The store took the give-up: no more moves."""
        self.done = True
        self.version = version
        return p.GaveUp(version=version)

    def _play(self, text: str, meta: RaceMeta) -> tuple[str, Callable[[], object]]:
        """Play ``text`` on the cached game; returns the stored text and how to take it back."""
        game = self.game
        assert game is not None
        if text == p.UNDO:
            if not meta.undo:
                raise Refused(p.ErrorCode.UNDO_DISABLED)
            last = game.peek()
            if last is None:
                raise Refused(IllegalReason.NOTHING_TO_UNDO.value)
            if last == DRAW:
                raise Refused(IllegalReason.UNDO_NOT_ALLOWED.value,
                              "a card drawn from the stock is never put back (it would show the stock)")
            game.pop()
            return p.UNDO, lambda: game.push(last)
        try:
            move = Move.parse(text)
        except MoveParseError as exc:
            raise Refused(p.ErrorCode.BAD_MOVE, str(exc)) from None
        why = game.play_checked(move)  # one legality check, and the move is played
        if why is not None:
            raise Refused(why.value, f"{move.text()}: {why.explanation}")
        return move.text(), game.pop

    def settle(self, pending: Pending, result: CommitResult) -> p.Ack | None:
        """The store's answer: the acknowledgement of a stored move, or None (reload, then decide again:
        a :class:`Conflict` retries the move, a :class:`Duplicate` answers it as a resend)."""
        if isinstance(result, Committed):
            return self._stored(pending, result)
        pending.revert()
        return None

    def _stored(self, pending: Pending, result: Committed) -> p.Ack:
        self.n += 1
        self.seq = pending.seq
        self.version = result.version
        self.done = pending.status == "finished"
        return p.Ack(seq=pending.seq, move=pending.text, version=self.version, view=self.view(),
                     status=pending.status)

    def resent(self, msg: p.Move, state: PlayerState) -> p.Ack:
        """A ``seq`` already used: the same move again is acknowledged again, anything else refused.

        ``state`` is the stored player; the game must be loaded from it.
        """
        canonical = msg.move if msg.move == p.UNDO else _canonical(msg.move)
        if msg.seq == state.seq and state.moves and state.moves[-1] == canonical:
            game = self.game
            assert game is not None and canonical is not None
            return p.Ack(seq=msg.seq, move=canonical, version=self.version, view=self.view(),
                         status=rules.player_status(game), duplicate=True)
        raise Refused(p.ErrorCode.STALE_SEQUENCE, f"seq {msg.seq} is not above {state.seq}, the last accepted move's")


def _canonical(text: str) -> str | None:
    try:
        return Move.parse(text).text()
    except MoveParseError:
        return None
