"""One player's seat as one connection serves it, without I/O: a move in, a decision out.

The way ``websockets``' protocol layer works, and the client's
``race_state.py``: :class:`SeatSession` takes a ``move`` frame, the race's
settings and the time, and answers with a refusal (:class:`Refused`), a
:class:`Resend` (the ``seq`` was used: the stored log decides) or a
:class:`Pending` commit (what to store). The store's answer comes back
through :meth:`SeatSession.settle`, which hands out the acknowledgement, or
says to reload (another connection of the seat moved first). The socket
loop (``connection.py``) does the awaiting; everything here is tested
without sockets or Redis (``tests/test_session.py``).

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

from ..store import Committed, CommitResult, MoveCommit, PlayerState, RaceMeta
from . import rules
from .rules import MoveStatus

class Refused(Exception):
    """A frame refused with a protocol code; ``close`` ends the connection after the error."""

    def __init__(self, code: p.ErrorCode | str, message: str | None = None,
                 close: p.CloseCode | None = None) -> None:
        self.code = code.value if isinstance(code, p.ErrorCode) else code
        self.message = message or p.explain(self.code)
        self.close = close
        super().__init__(self.message)


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


class SeatSession:
    """A seat's game as this connection last knew it: log length ``n``, last accepted ``seq``."""

    def __init__(self, seat: int) -> None:
        self.seat = seat
        self.game: Game | None = None
        self.n = 0
        self.seq = 0
        self.done = False
        """Won or given up: no more moves."""
        self.version = 0
        """The race version of the last answer this connection sent (for ``reject.version``)."""

    # ------------------------------------------------------------ state
    @property
    def loaded(self) -> bool:
        return self.game is not None

    def load(self, meta: RaceMeta, state: PlayerState) -> None:
        """Rebuild the game from the stored log (first use, after a conflict, after a lost answer)."""
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
            self.n += 1
            self.seq = pending.seq
            self.version = result.version
            self.done = pending.status == "finished"
            return p.Ack(seq=pending.seq, move=pending.text, version=self.version, view=self.view(),
                         status=pending.status)
        pending.revert()
        return None

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
