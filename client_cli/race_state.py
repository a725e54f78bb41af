"""What a client knows about one race, folded from the server's frames.

Sans I/O: :meth:`RaceState.apply` takes a decoded frame (and the local
time it arrived) and updates the picture; the socket loop
(:mod:`client_cli.connection`) and the screens only read it. Tests feed it
frames directly.

Resuming after a dropped connection rests on three numbers kept here: the
player ``token`` (the seat), the ``version`` of the progress table it has
(sent back in ``hello.last_version`` so the server can send only what was
missed), and
the ``seq`` of every move sent but not yet acknowledged (resent after the
``welcome`` when the server's ``seq`` shows it never arrived, which the
server's duplicate check makes safe).
"""

from __future__ import annotations

import enum
import secrets
import time
from dataclasses import dataclass, field

from shared import protocol as p
from shared.view import PlayerView

from .wording import error_words


class Phase(enum.Enum):
    """Where the race stands for this client."""

    JOINING = "joining"
    LOBBY = "lobby"
    COUNTDOWN = "countdown"
    RUNNING = "running"
    FINISHED = "finished"


SEAT_GONE_CODES = frozenset({p.ErrorCode.BAD_TOKEN.value, p.ErrorCode.TOKEN_EXPIRED.value})
"""A saved token refused: the seat was freed (a lobby left or timed out) or the token is too old."""

FATAL_CODES = frozenset(
    {
        p.ErrorCode.RACE_NOT_FOUND.value,
        p.ErrorCode.RACE_FULL.value,
        p.ErrorCode.RACE_CLOSED.value,
        p.ErrorCode.NAME_TAKEN.value,
        p.ErrorCode.VERSION_MISMATCH.value,
        p.ErrorCode.BAD_TOKEN.value,
        p.ErrorCode.TOKEN_EXPIRED.value,
        p.ErrorCode.BAD_FIELD.value,
        p.ErrorCode.BAD_KEY.value,
        p.ErrorCode.NAME_REGISTERED.value,
        p.ErrorCode.ACCOUNT_REQUIRED.value,
    }
)
"""Errors after which trying again with the same hello cannot help."""


def now_ms() -> float:
    return time.time() * 1000.0


@dataclass
class Pending:
    seq: int
    move: str


@dataclass
class RaceState:
    """The client's picture of a race; every field comes from a server frame."""

    race_ref: str
    role: str = "player"
    name: str | None = None
    token: str | None = None
    creator_token: str | None = None
    info: p.RaceInfo | None = None
    seat: int | None = None
    version: int = 0
    view: PlayerView | None = None
    players: dict[int, p.PlayerProgress] = field(default_factory=dict)
    results: p.Results | None = None
    race_status: str = "lobby"
    my_status: str = "waiting"
    acked_seq: int = 0
    next_seq: int = 1
    pending: list[Pending] = field(default_factory=list)
    clock_offset_ms: float = 0.0
    """Server clock minus local clock, from the last frame that carried ``server_time``."""
    fatal: str | None = None
    """Why the client must stop (a refused hello); ``None`` while all is well."""
    last_reject: p.Reject | None = None
    last_reject_move: str | None = None
    """The move text the last ``reject`` refused (the client's own, so it can be worded in keys)."""
    ready: bool = False
    hint: p.HintAnswer | None = None
    """The server's last answer to a ``hint`` request."""
    last_error: p.Error | None = None
    """The last ``error`` frame (a refused hint, a rate limit...), fatal or not."""
    key: str | None = None
    """The account key sent in every ``hello`` (the player joins as the account)."""
    saved_token: bool = False
    """``token`` came from an earlier run (the client's file), not from a welcome of this one."""
    seat_gone: bool = False
    """The saved token was refused: the next hello asks for a seat afresh instead of failing."""
    left: bool = False
    """The server confirmed ``leave``: the seat is free and the connection closes."""
    join_id: str = field(default_factory=lambda: secrets.token_urlsafe(18))
    """Sent with every hello that asks for a new seat: when Redis fails after storing the seat and before
    the welcome, the hello sent again (the connection reconnects) gets that seat back, not ``name_taken``."""

    # ------------------------------------------------------------ frames out
    def hello(self) -> p.Hello:
        """The first frame of every connection; after the first, it resumes."""
        return p.Hello(
            protocol=p.PROTOCOL_VERSION,
            race=self.race_ref,
            role=self.role,  # type: ignore[arg-type]
            name=self.name if self.token is None and self.key is None else None,
            token=self.token or None,
            last_version=self.version if self.token or self.version else None,
            key=self.key,
            join_id=self.join_id if self.token is None and self.role == "player" else None,
        )

    def new_move(self, text: str) -> p.Move:
        """Number a move and remember it until the server acknowledges or rejects it."""
        seq = self.next_seq
        self.next_seq += 1
        self.pending.append(Pending(seq, text))
        return p.Move(seq=seq, move=text)

    def resend(self) -> list[p.Move]:
        """Moves to send again after a ``welcome``: those the server has not played."""
        return [p.Move(seq=m.seq, move=m.move) for m in self.pending]

    # ------------------------------------------------------------- frames in
    def apply(self, msg: p.ServerMessage, local_ms: float | None = None) -> None:
        """Fold one server frame into the picture."""
        at = now_ms() if local_ms is None else local_ms
        # Only frames that carry the progress table move the version sent back in hello.last_version.
        if isinstance(msg, (p.Welcome, p.Progress)) and msg.version > self.version:
            self.version = msg.version
        handler = getattr(self, "_on_" + type(msg).__name__.lower(), None)
        if handler is not None:
            handler(msg, at)

    def _clock(self, server_time: int, at: float) -> None:
        self.clock_offset_ms = server_time - at

    def _on_welcome(self, msg: p.Welcome, at: float) -> None:
        self._clock(msg.server_time, at)
        self.saved_token = self.seat_gone = False
        self.info = msg.race
        self.race_status = msg.race.status
        self.seat = msg.seat
        if msg.token:
            self.token = msg.token
        if msg.view is not None:
            self.view = PlayerView.of_wire(msg.view)
        self.acked_seq = max(self.acked_seq, msg.seq)
        self.pending = [m for m in self.pending if m.seq > msg.seq]
        self.next_seq = max(self.next_seq, msg.seq + 1)
        if msg.progress:
            self.players = {pp.seat: pp for pp in msg.progress}
        self._update_my_status()

    def _on_countdown(self, msg: p.Countdown, at: float) -> None:
        self._clock(msg.server_time, at)
        if self.info is not None:
            self.info.starts_at = msg.starts_at
            self.info.ends_at = msg.ends_at
        self.race_status = "countdown" if self.race_status in ("lobby", "countdown") else self.race_status
        if msg.view is not None:
            self.view = PlayerView.of_wire(msg.view)

    def _on_ack(self, msg: p.Ack, at: float) -> None:
        self.acked_seq = max(self.acked_seq, msg.seq)
        self.pending = [m for m in self.pending if m.seq > msg.seq]
        self.view = PlayerView.of_wire(msg.view)
        self.my_status = msg.status

    def _on_reject(self, msg: p.Reject, at: float) -> None:
        self.last_reject_move = next((m.move for m in self.pending if m.seq == msg.seq), None)
        self.pending = [m for m in self.pending if m.seq != msg.seq]
        self.last_reject = msg

    def _on_progress(self, msg: p.Progress, at: float) -> None:
        if msg.full:
            self.players = {}
        for pp in msg.players:
            self.players[pp.seat] = pp
        self.race_status = msg.race_status
        if self.info is not None:
            self.info.status = msg.race_status
        self._update_my_status()

    def _on_hintanswer(self, msg: p.HintAnswer, at: float) -> None:
        # An answer for a position the player has already left (a move acked since) is stale.
        self.hint = msg if msg.seq >= self.acked_seq else None

    def _on_gaveup(self, msg: p.GaveUp, at: float) -> None:
        self.my_status = "gave_up"

    def _on_finished(self, msg: p.Finished, at: float) -> None:
        self.results = msg.results
        self.race_status = "finished"
        self.pending = []

    def _on_left(self, msg: p.Left, at: float) -> None:
        self.left = True

    def _on_error(self, msg: p.Error, at: float) -> None:
        self.last_error = msg
        if msg.code in SEAT_GONE_CODES and self.saved_token and self.info is None:
            # The seat this machine kept is gone: join afresh (same name, same key) on the next try.
            self.token, self.saved_token, self.seat_gone, self.version = None, False, True, 0
            self.join_id = secrets.token_urlsafe(18)  # a new seat: a new attempt
            return
        if msg.code in FATAL_CODES and (msg.ref in (None, "hello") or self.info is None):
            self.fatal = error_words(msg.code, msg.message)

    def _update_my_status(self) -> None:
        if self.seat is not None and self.seat in self.players:
            self.my_status = self.players[self.seat].status

    # ------------------------------------------------------------- reading
    def server_now(self, local_ms: float | None = None) -> float:
        return (now_ms() if local_ms is None else local_ms) + self.clock_offset_ms

    def phase(self, local_ms: float | None = None) -> Phase:
        if self.results is not None or self.race_status == "finished":
            return Phase.FINISHED
        if self.info is None:
            return Phase.JOINING
        starts = self.info.starts_at
        if starts is not None and self.race_status in ("countdown", "running"):
            return Phase.COUNTDOWN if self.server_now(local_ms) < starts else Phase.RUNNING
        if self.race_status == "running":
            return Phase.RUNNING
        return Phase.COUNTDOWN if self.race_status == "countdown" else Phase.LOBBY

    def seconds_to_start(self, local_ms: float | None = None) -> float | None:
        if self.info is None or self.info.starts_at is None:
            return None
        return (self.info.starts_at - self.server_now(local_ms)) / 1000.0

    def seconds_left(self, local_ms: float | None = None) -> float | None:
        """Race time left, ``None`` before the end is known."""
        if self.info is None or self.info.ends_at is None:
            return None
        return (self.info.ends_at - self.server_now(local_ms)) / 1000.0

    def seconds_elapsed(self, local_ms: float | None = None) -> float | None:
        if self.info is None or self.info.starts_at is None:
            return None
        end = self.results.ended_at if self.results is not None else self.server_now(local_ms)
        return max(0.0, (end - self.info.starts_at) / 1000.0)

    def seats_taken(self) -> int:
        """Racers seated now: the live progress table once it has arrived."""
        return len(self.players) or (self.info.players if self.info is not None else 0)

    def ranking(self) -> list[p.PlayerProgress]:
        """Racers best first, by the server's rank (seat breaks display ties)."""
        return sorted(self.players.values(), key=lambda pp: (pp.rank, pp.seat))

    @property
    def helped(self) -> bool:
        """This player took a hint in this race (the server's mark)."""
        line = self.players.get(self.seat) if self.seat is not None else None
        return line is not None and line.helped

    def checked_text(self) -> str:
        """How the deal was chosen, in the words of the rule pages."""
        if self.info is None:
            return ""
        return "checked" if self.info.checked else "not checked"

    def can_hint(self, local_ms: float | None = None) -> str | None:
        """``None`` when this client may ask for a hint now, else why not."""
        if self.info is not None and not self.info.hints:
            return p.ErrorCode.HINTS_NOT_ALLOWED.explanation
        return self.can_move(local_ms)

    def can_move(self, local_ms: float | None = None) -> str | None:
        """``None`` when this client may move now, else why not."""
        if self.role != "player":
            return "spectators watch; they cannot play"
        phase = self.phase(local_ms)
        if phase is Phase.LOBBY or phase is Phase.JOINING:
            return "the race has not started yet"
        if phase is Phase.COUNTDOWN:
            return "wait for the start"
        if phase is Phase.FINISHED:
            return "the race is over"
        if self.my_status in ("finished", "gave_up"):
            return "your game is over"
        if self.view is None:
            return "waiting for your board"
        return None
