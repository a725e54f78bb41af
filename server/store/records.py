"""What the store reads from and writes to Redis, typed: one definition each, encoding and decoding itself.

Everything else in the server sees these records, never a Redis reply: a
race's hash is a :class:`RaceMeta`, a progress line a :class:`Line`, a
history entry an :class:`Event`, a pub/sub message a :class:`Note`, and a
move's commit a :class:`Committed`, :class:`Duplicate` or :class:`Conflict`
(a refusal raises :class:`StoreError`). Lua writes some of these; where it
does, the layout it uses is filled in from the definitions here
(``server/store/scripts.py``), so a field order is written once.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, fields
from typing import Any, Callable, Literal, cast

import msgspec

from shared import protocol as p

StoredStatus = Literal["lobby", "started", "finished"]
"""A race's stored status (countdown and running are read off the clock: :meth:`RaceMeta.phase`)."""

SeatStatus = Literal["waiting", "ready", "racing", "blocked", "finished", "gave_up", "left"]
"""A player's stored status (``disconnected`` is derived from presence when a line is shown;
``left``: a lobby seat given back, with no line in the table until a new player takes it)."""


class EventKind(str, enum.Enum):
    """What happened to a race: the ``k`` of a history entry and the kind of a :class:`Note`."""

    JOIN = "join"
    READY = "ready"
    START = "start"
    MOVE = "move"
    GIVE_UP = "give_up"
    PRESENCE = "presence"
    HELP = "help"
    END = "end"
    ABANDON = "abandon"
    LEAVE = "leave"
    """A lobby seat was given back (``leave``, or its connections were gone for the lease)."""


@dataclass(frozen=True)
class Note:
    """A race's pub/sub message: ``"<version> <kind>"`` (written by the scripts' ``emit``)."""

    version: int
    kind: EventKind

    def encode(self) -> bytes:
        return f"{self.version} {self.kind.value}".encode()

    @classmethod
    def decode(cls, data: bytes | str) -> "Note":
        """Raises ``ValueError`` for a message that is not a note."""
        text = data.decode() if isinstance(data, bytes) else data
        version, _, kind = text.partition(" ")
        return cls(int(version), EventKind(kind))


@dataclass
class Line:
    """One player's progress as the store keeps it (the progress hash's msgpack value, seat aside)."""

    seat: int
    name: str
    status: str
    home: int
    moves: int
    home_at: int
    finished_at: int
    online: int
    helped: int = 0
    """1 once the player took a hint (never goes back to 0)."""


LINE_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Line))[1:]
"""The stored line's fields in order: the player hash fields the scripts copy into the progress hash.
The first two are text, the rest whole numbers (scripts.py builds the Lua from this)."""

_line_decoder = msgspec.msgpack.Decoder(tuple[str, str, int, int, int, int, int, int])
_old_line_decoder = msgspec.msgpack.Decoder(tuple[str, str, int, int, int, int, int])


def decode_line(seat: int, blob: bytes) -> Line:
    """A progress hash value."""
    try:
        return Line(seat, *_line_decoder.decode(blob))
    except msgspec.ValidationError:  # a line written before the helped mark existed (a server upgrade)
        return Line(seat, *_old_line_decoder.decode(blob))


def hash_fields(record: Any, encode: Callable[[Any], Any] = lambda v: v) -> list[Any]:
    """A dataclass record as ``field, value, ...`` for HSET: booleans as 1/0, others through ``encode``."""
    out: list[Any] = []
    for k, v in vars(record).items():
        out += [k, int(v) if isinstance(v, bool) else encode(v)]
    return out


def hash_kwargs(cls: type, raw: dict[bytes, bytes],
                decoders: dict[str, Callable[[str], Any]] | None = None) -> dict[str, Any]:
    """The fields of dataclass ``cls`` from its Redis hash: ``bool`` from 1/0, ``int`` (absent: 0), text,
    and the fields named in ``decoders`` through them; fields the hash lacks keep their defaults."""
    d = {k.decode(): v.decode() for k, v in raw.items()}
    kwargs: dict[str, Any] = {}
    for f in fields(cls):
        text = d.get(f.name)
        if decoders and f.name in decoders:
            if text:
                kwargs[f.name] = decoders[f.name](text)
        elif f.type == "bool":
            kwargs[f.name] = text == "1"
        elif f.type == "int":
            kwargs[f.name] = int(text or 0)
        elif text is not None:
            kwargs[f.name] = text
    return kwargs


def line_of_player(seat: int, player: dict[str, str]) -> Line:
    """The line of a player hash (the same fields the scripts copy)."""
    name, status, *numbers = (player.get(f, "") for f in LINE_FIELDS)
    return Line(seat, name, status, *(int(n or 0) for n in numbers))


SEALED = 1 << 62
"""A ``reveal_at`` no clock reaches (146 million years of milliseconds): a race made so keeps its deal
and games back until ``Store.unseal`` reveals it. An event's races are made sealed and are
unsealed when the event is over, so that nobody learns a deal that another race of the event plays."""


@dataclass
class RaceMeta:
    """A race's hash, typed. ``deal`` and ``salt`` are secret until the end."""

    id: str
    code: str
    variant: str
    deal_source: p.DealSource
    deal: int
    salt: str
    commitment: str
    seats: int
    players: int
    time_limit: int
    undo: bool
    start_mode: p.StartMode
    status: str
    """Stored status: lobby, started or finished (countdown/running are read off the clock)."""
    created_at: int
    starts_at: int
    ends_at: int
    ended_at: int
    version: int
    done: int
    checked: bool = False
    """The deal was drawn from the private pool of deals proved winnable."""
    hints: bool = False
    line: str = ""
    """A checked race's winning line from the start (moves separated by spaces), secret until the end."""
    rated: bool = False
    """The standings update the players' ratings (only accounts may join; two players to start)."""
    free: int = 0
    """Seats given back in the lobby and not taken again (holes among ``players`` seat numbers)."""
    event: str = ""
    """The tournament event this race is a heat of ("" for none)."""
    entrants: str = ""
    """A heat's entrants, the only accounts that may join it (comma-separated; "" for anyone)."""
    reveal_at: int = 0
    """When the results show the deal, salt and games (ms; 0: at the end). A daily deal's play keeps
    them until the day is over, so that nobody can pass the deal on to those still to play it; a race
    made :data:`SEALED` keeps them until whoever made it unseals it (``Store.unseal``)."""
    ends_by: int = 0
    """The latest the race may end (ms; 0: no bound but its time limit): a daily deal's play ends with its
    day, so that nothing of the day's deal is played once the day's board shows it. Begun late, the race
    is shorter; it cannot begin once its countdown would end then (``day_over``)."""
    title: str = ""
    """What the race is part of, in words, set by whoever made it ("" for a player's race): shown in
    its lobby (``RaceInfo.title``)."""
    scheduled_at: int = 0
    """When whoever made the race means to start it (ms; 0: a player starts it)."""
    called_off_at: int = 0
    """When its maker gave it up unstarted (ms; 0: not): an event's race that did not start at its time
    (too few came), scored as missed; it stays a lobby to read but takes no player (``race_closed``)."""

    @property
    def sealed(self) -> bool:
        """Held back with no reveal time yet: until the race's maker unseals it."""
        return self.reveal_at >= SEALED

    @property
    def entrant_set(self) -> frozenset[str]:
        return frozenset(a for a in self.entrants.split(",") if a)

    @property
    def taken(self) -> int:
        """Seats held by a player: ``players`` counts the seat numbers handed out, holes included."""
        return self.players - self.free

    def phase(self, now_ms: int) -> p.RaceStatus:
        """lobby, countdown, running or finished, as the protocol names them."""
        if self.status == "lobby":
            return "lobby"
        if self.status == "finished":
            return "finished"
        if now_ms < self.starts_at:
            return "countdown"
        return "running"

    @property
    def started(self) -> bool:
        return self.status != "lobby"

    def due_to_end(self, now_ms: int) -> bool:
        """A started race whose end is due: its time is up, or every player is done (finished or gave up)."""
        return self.status == "started" and (now_ms >= self.ends_at or self.done >= self.players)

    def hash_fields(self) -> list[Any]:
        """``field, value, ...`` for HSET (booleans as 1/0)."""
        return hash_fields(self)

    @classmethod
    def from_hash(cls, raw: dict[bytes, bytes]) -> "RaceMeta":
        return cls(**hash_kwargs(cls, raw))




def offer_status(status: str, expires_at: int, claim_until: int, now_ms: int) -> str:
    """A challenge's or rematch offer's status as the protocol names it: ``expired`` once an open one's
    time is up with no race being made for it (the scripts refuse an answer by the same rule)."""
    if status == "open" and now_ms >= expires_at and now_ms >= claim_until:
        return "expired"
    return status

@dataclass
class ChallengeRecord:
    """A challenge's hash (``challenge:{ID}``, keys.challenge_key), typed: who invites whom to what, and
    how it stands. ``claim``/``claim_until``: an accept under way (the race is being made), so that two
    accepts at once make one race."""

    id: str
    challenger: str
    """The challenger's account (lower-case name)."""
    challenger_name: str
    challenged: str
    challenged_name: str
    variant: str
    time_limit: int
    rated: bool
    undo: bool
    hints: bool
    deal_source: str
    created_at: int
    expires_at: int
    status: str = "open"
    """open, accepted, declined or cancelled as stored; an open one past ``expires_at`` reads as expired."""
    race: str = ""
    code: str = ""
    claim: str = ""
    claim_until: int = 0
    lease_until: int = 0
    """While open, until when the challenger counts as waiting for the answer: renewed by each of its
    ``GET /challenges/{id}`` (its client asks every second); once past, the challenge is withdrawn (0: no
    lease, a challenge stored before leases)."""
    withdrawn: bool = False
    """Cancelled because its challenger's lease ran out, not by the challenger's own cancel."""

    def shown_status(self, now_ms: int) -> str:
        """As :func:`offer_status`; an open challenge nobody waits for any more reads ``cancelled`` (the
        step script withdraws it by the same rule at the next answer)."""
        if self.lapsed(now_ms):
            return "cancelled"
        return offer_status(self.status, self.expires_at, self.claim_until, now_ms)

    def lapsed(self, now_ms: int) -> bool:
        """Open, unclaimed, and its challenger's lease ran out before its expiry (challenge_step.lua)."""
        return (self.status == "open" and 0 < self.lease_until <= now_ms and self.lease_until < self.expires_at
                and now_ms >= self.claim_until)

    @property
    def sent_member(self) -> str:
        """Its entry in the challenger's open challenges (keys.AccountKeys.sent)."""
        return f"{self.id}:{self.challenged}"

    def hash_fields(self) -> list[Any]:
        return hash_fields(self)

    @classmethod
    def from_hash(cls, raw: dict[bytes, bytes]) -> "ChallengeRecord":
        return cls(**hash_kwargs(cls, raw))



@dataclass
class RematchRecord:
    """A finished race's rematch offer (keys.rematch_key), typed: each racer's answer by account."""

    status: str
    expires_at: int
    answers: dict[str, str]
    """account -> "yes" or "no"."""
    race: str = ""
    code: str = ""
    claim_until: int = 0

    def shown_status(self, now_ms: int) -> str:
        """As :func:`offer_status`; a declined offer too reads ``expired`` once its time is up, since the
        next yes then begins a new offer (rematch.lua), which ``declined`` would deny."""
        if self.status == "declined" and now_ms >= self.expires_at:
            return "expired"
        return offer_status(self.status, self.expires_at, self.claim_until, now_ms)

    @classmethod
    def from_hash(cls, raw: dict[bytes, bytes]) -> "RematchRecord":
        d = {k.decode(): v.decode() for k, v in raw.items()}
        return cls(status=d.get("status", "open"), expires_at=int(d.get("expires_at", 0)),
                   answers={k[2:]: v for k, v in d.items() if k.startswith("a:")}, race=d.get("race", ""),
                   code=d.get("code", ""), claim_until=int(d.get("claim_until", 0) or 0))


@dataclass
class PlayerState:
    """A player's hash and whole move log, read together."""

    seat: int
    name: str
    status: str
    seq: int
    n: int
    """The move log's length (the undo marker counts)."""
    moves: list[str]
    line: Line
    gen: int = 0
    """The seat's generation: raised each time the seat is given back in the lobby (its tokens change)."""
    account: str | None = None
    """The player's account (lower-case name), None for a player without one."""

    @property
    def left(self) -> bool:
        """A seat given back in the lobby and not taken again: nobody's seat."""
        return self.status == "left"

    @classmethod
    def from_reply(cls, seat: int, player: dict[str, str], log: list[bytes]) -> "PlayerState":
        return cls(seat, player["name"], player["status"], int(player["seq"]), int(player["n"]),
                   [m.decode() for m in log], line_of_player(seat, player), int(player.get("gen") or 0),
                   player.get("account") or None)


@dataclass(frozen=True)
class Seated:
    """A join's answer: the seat, the race version, the seat's generation, and whether the seat
    was this account's (or this very call's, retried) already."""

    seat: int
    version: int
    gen: int
    again: bool


@dataclass(frozen=True)
class SeatClaim:
    """Who holds a seat now: what a token or a connection of the seat is checked against."""

    gen: int
    status: str
    account: str | None


@dataclass(frozen=True)
class Event:
    """One entry of a race's history: what the client-visible table needs of it."""

    version: int
    kind: str
    seat: int
    old: Line | None
    """The seat's progress line before the event (None: the seat did not exist, or no line changed)."""


# ------------------------------------------------------------------ commits
class MoveCommit(msgspec.Struct, kw_only=True, gc=False):
    """One validated move to store: what ``moves.lua`` takes of it, by name (:data:`MOVE_FIELDS`). A
    msgspec struct, not a dataclass: one is made for every move (a seventh of the cost to make).

    Why a record: the move crossed three files as a positional tuple and nine positional parameters,
    and the script read it by position; a field added or swapped anywhere was a silent mismatch. The
    script's placeholder ``{{MOVE_AT}}`` (server/store/scripts.py) names each place from here."""

    seat: int
    now: int
    seq: int
    expected_n: int
    """The log length the move was checked against (the script refuses it if another move came first)."""
    move: str
    """The move as stored (canonical notation, or ``U``)."""
    home: int
    moves: int
    status: str
    """The player's status after the move: racing, blocked or finished."""

    def lua_args(self) -> list[Any]:
        """The values in :data:`MOVE_FIELDS` order. The numbers the script only stores go as decimal texts
        (a Lua number goes into Redis as it prints); ``expected_n`` it compares, so it goes as a number.
        Written out rather than built from the names: this runs for every move."""
        return [str(self.seat), str(self.now), str(self.seq), self.expected_n, self.move, str(self.home),
                str(self.moves), self.status, str(self.expected_n + 1)]


MOVE_FIELDS: tuple[str, ...] = (*MoveCommit.__struct_fields__, "n_after")
"""The names of :meth:`MoveCommit.lua_args`, in order: the record's fields, then ``n_after`` (the log
length once the move is stored). ``moves.lua`` reads a move's values by these names."""


@dataclass(frozen=True)
class Committed:
    """The move is stored; ``race_done``: it was the last player's last move."""

    version: int
    race_done: bool
    line: bytes | None = None
    """The progress line the move wrote (a progress hash value: :func:`decode_line`)."""
    held: bool = False
    """The race's pub/sub note for this move was held back (another move announced the race within the
    tick): the committer owes it (:meth:`server.race.hub.RaceHub.learn`)."""


@dataclass(frozen=True)
class Duplicate:
    """This very move (same seq and text) was stored before: acknowledge it again."""

    version: int
    n: int


@dataclass(frozen=True)
class Conflict:
    """Another connection of the seat moved first: the log is ``n`` long, not what was checked."""

    n: int


CommitResult = Committed | Duplicate | Conflict


class StoreError(p.Refusal):
    """A script refused: ``code`` is a protocol error code (or an internal word), as the script said it."""

    code: str

    def __init__(self, code: str) -> None:
        super().__init__(code)


class HintRefused(StoreError):
    """A hint refused; ``wait_ms`` says how long until the next is allowed (``hint_too_soon``)."""

    def __init__(self, code: str, wait_ms: int = 0) -> None:
        super().__init__(code)
        self.wait_ms = wait_ms


def text(value: Any) -> str:
    """A reply item as text (redis-py hands bytes to a bytes client)."""
    return value.decode() if isinstance(value, bytes) else str(value)


def reply(raw: list[Any]) -> tuple[str, list[Any]]:
    """A script's ``{kind, ...}`` reply: the kind and the rest, bytes made text."""
    return text(raw[0]), [x.decode() if isinstance(x, bytes) else x for x in raw[1:]]


def decode_commit(raw: list[Any]) -> CommitResult:
    """One move's reply of the moves script; raises :class:`StoreError` for a refusal."""
    if raw[0] == b"ok":  # every accepted move: read without making the reply text first
        return Committed(int(raw[1]), bool(raw[2]), raw[3], bool(raw[4]))
    kind, rest = reply(raw)
    if kind == "ok":
        return Committed(int(rest[0]), bool(rest[1]))
    if kind == "dup":
        return Duplicate(int(rest[0]), int(rest[1]))
    if kind == "conflict":
        return Conflict(int(rest[0]))
    raise StoreError(cast(str, rest[0]))


class SeekEntry(msgspec.Struct, kw_only=True):
    """A waiting seek in its pool (``seek:{P}:q``)."""

    id: str
    who: str
    """The player: ``a:<account>`` or ``n:<name in lower case>`` (one seek at a time each)."""
    name: str
    account: str | None = None
    rating: int
    since: int
    """When it first entered the pool (ms): kept when it is put back after a partner's no-show."""
    shy: bool = False
    key_hash: str = ""
    """The hash of the account key the seek was made with ("": no account): a seek outlives no key
    replacement (a wave drops one whose key is not the account's any more)."""
    client: str = ""
    """The address whose creation limits the seek counts against (store/limits.py ``seek_place``)."""


class FormedRace(msgspec.Struct, kw_only=True):
    """A race formed from a pool, until it starts or its join deadline passes (``seek:{P}:races``)."""

    race: str
    members: list[SeekEntry]
    """In seat order."""
