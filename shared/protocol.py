"""The race protocol: every WebSocket message, typed once for server and client.

Pure schema and codec, no I/O. Each frame is one binary WebSocket message
holding one msgpack map whose ``"type"`` field names the message; the other
keys are the fields of the matching :class:`msgspec.Struct` below. Anyone
with a msgpack library can speak it (``docs/protocol.md`` is the reference
for writing a client in another language).

Why msgspec: typed decoding validates every field (types, ranges, lengths)
while it parses, about three times faster than msgpack-python plus hand
checks, and rejects trailing bytes. Unknown *fields* are ignored so that a
newer peer may add optional fields; unknown *types* are an error.

Conversation (client ``->``, server ``<-``)::

    -> hello(race, role, name[, token, last_version])
    <- welcome(seat, token, race, version, view, progress)   or error + close
       (a resumed welcome: then the missed countdown/progress/finished)
    -> ready / start                 (lobby)
    <- progress ...                  (coalesced, any time)
    <- countdown(starts_at, ends_at, view)
    -> move(seq, move)               <- ack(seq, view, version) | reject(seq, reason)
    -> give_up                       <- gave_up(version)
    -> hint                          <- hint(move, winning, ...)   (races with hints)
    <- finished(results)             (deal and salt revealed)

Versions: every event a race stores (a join, a ready, the start, each
accepted move, a give-up, a disconnect, the end) raises the race's
``version`` by one, and every frame that reports state carries the version
it reflects. A client keeps the version of the last ``welcome`` or
``progress`` it applied (the version of the table it has) and sends it as
``hello.last_version`` when it reconnects.

Errors: a failed ``move`` is answered by ``reject`` (with the move's
``seq``); any other refused frame by ``error``. Codes are the
:class:`ErrorCode` values plus, for moves the rules forbid, the engine's
:class:`~shared.moves.IllegalReason` values. Gross abuse closes the socket
with a :class:`CloseCode`.
"""

from __future__ import annotations

import datetime
import enum
import re
from typing import Annotated, Any, Literal, TypeVar, Union

import msgspec

from .moves import IllegalReason

PROTOCOL_VERSION = 1
"""Raised whenever a message changes incompatibly; ``hello`` must match it."""

MAX_FRAME_BYTES = 4096
"""Largest frame a client may send; the server closes with 1009 above it."""

MAX_NESTING = 32
"""Deepest nesting of msgpack arrays and maps in a frame (ours need 4), and of JSON arrays and
objects in an HTTP body: deeper is ``bad_frame``, found by a scan before decoding, since msgspec
would recurse once per level (and hit Python's recursion limit on a 3 KB frame of nested
one-element lists, or a JSON body of ``{"a":`` 20,000 times)."""

UNDO = "U"
"""The move text that takes back the player's previous move (as in records)."""

# --------------------------------------------------------------- field types
MAX_SEQ = 10**12
"""Highest ``seq``: the store's Lua scripts keep numbers exact only to 14 digits."""
Seq = Annotated[int, msgspec.Meta(ge=0, le=MAX_SEQ)]
Version = Annotated[int, msgspec.Meta(ge=0)]
Millis = Annotated[int, msgspec.Meta(ge=0)]
"""Milliseconds since the Unix epoch, from the server's (Redis's) clock."""
MAX_NAME_LENGTH = 32
"""Longest player name, in characters (after normalising: see shared/names.py)."""
Name = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_NAME_LENGTH)]
ACCOUNT_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_-]{1,23}$"
"""An account's name: 2 to 24 letters, digits, ``_`` or ``-``, starting with a letter or digit
(unique on a server ignoring case; it is also the player's name in every race)."""
AccountKey = Annotated[str, msgspec.Meta(min_length=1, max_length=256)]
"""An account's secret key (``<name in lower case>.<secret>``), as ``POST /players`` gave it."""
ISSUED_KEY_PATTERN = r"^[a-z0-9][a-z0-9_-]{1,23}\.[A-Za-z0-9_-]{43}$"
"""The form of every key ``POST /players`` and ``POST /players/{name}/key`` issue: the account (its name
in lower case), a dot, 256 random bits in URL-safe base64 (43 characters). A client checks a key
typed or pasted against it before asking the server (``thieves account import``)."""
RaceRef = Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
Token = Annotated[str, msgspec.Meta(max_length=512)]
MoveText = Annotated[str, msgspec.Meta(min_length=1, max_length=8)]
Seat = Annotated[int, msgspec.Meta(ge=0, le=999)]
SeatCount = Annotated[int, msgspec.Meta(ge=1, le=500)]
MIN_TIME_LIMIT = 30
"""The shortest race (seconds), whatever makes it: ``create``, ``POST /races``, a challenge, an event's
rounds, a seek (shared/seeks.py) and the daily deal (server/config.py). ``create --time-limit 5`` made a
5-second race while a seek refused under 30 s: one minimum, here."""
TimeLimit = Annotated[int, msgspec.Meta(ge=MIN_TIME_LIMIT, le=86_400)]
MAX_WIRE_DEAL = 2**63 - 1
"""Largest deal number a race takes: msgpack integers stop at 64 bits (PySolFC's go to 10**20)."""
DealNumber = Annotated[int, msgspec.Meta(ge=1, le=MAX_WIRE_DEAL)]

Role = Literal["player", "spectator"]
StartMode = Literal["creator", "all-ready"]
DealSource = Literal["random", "number", "pool"]
"""How the deal is chosen: a secret random number, the number given in
``deal`` (a daily deal, a rematch), or a secret deal from the server's private
pool of fresh deals the solver proved winnable (the race is then "checked")."""
HintVerdict = Literal["won", "unwinnable", "unknown"]
RaceStatus = Literal["lobby", "countdown", "running", "finished"]
PlayerStatus = Literal["waiting", "ready", "racing", "blocked", "finished", "gave_up", "disconnected"]
"""``waiting``/``ready`` in the lobby; ``blocked`` is a racer with no legal
move at all (it may still undo, where the race allows it, or give up);
``disconnected`` is a racer whose last connection dropped while the race
runs (its game goes on when it comes back)."""
FinalStatus = Literal["finished", "racing", "gave_up"]
"""A racer's status once its race is over: won, played on to the clock (racing, blocked or
disconnected at the end), or gave up (``shared.standings.final_status``)."""


class _Message(msgspec.Struct, tag_field="type", kw_only=True):
    """Base of every wire message; ``type`` is the class's tag."""


# ---------------------------------------------------------- shared payloads
class View(msgspec.Struct, kw_only=True):
    """A player's board (:class:`shared.view.PlayerView` on the wire).

    Cards are two-character text (``"Th"``), a face-down card is ``"??"``.
    ``foundations`` lists the top card of each foundation (``None`` when
    empty); foundation ``i`` holds suit ``i % 4`` (c, d, h, s). The stock is
    a count only: its order is the race's secret.
    """

    variant: str
    tableau: list[list[str]]
    waste: list[str]
    foundations: list[Union[str, None]]
    stock: int
    pass_: int = msgspec.field(name="pass")
    passes: int
    moves: int
    home: int
    total: int
    status: str

    @classmethod
    def from_player_view(cls, view: Any) -> "View":
        """Build from a :class:`shared.view.PlayerView` (typed ``Any`` to keep this module import-light)."""
        return cls(**_rename_pass(view.to_dict()))

    @classmethod
    def of_game(cls, game: Any) -> "View":
        """The board of a :class:`shared.engine.Game` directly: equal to ``from_player_view(game.view())``.

        The server's way for every acknowledged move: it rewrites only the
        piles the last moves changed (``shared.view.wire_view``). Its pile
        lists may be shared with the game's later views: encode them, never
        change them.
        """
        return _wire_view(game)

    def to_player_view(self) -> Any:
        """The client's side: a :class:`shared.view.PlayerView` to render."""
        from .view import PlayerView

        d = msgspec.structs.asdict(self)
        d["pass"] = d.pop("pass_")
        return PlayerView.from_dict(d)


def _wire_view(game: Any) -> View:
    """``shared.view.wire_view``, imported on first use (shared.view imports this module)."""
    global _wire_view
    from .view import wire_view

    _wire_view = wire_view
    return wire_view(game)


def _rename_pass(d: dict[str, Any]) -> dict[str, Any]:
    d["pass_"] = d.pop("pass")
    return d


class Rules(msgspec.Struct, kw_only=True):
    """The dials of a race's variant (``shared.variants.Variant``), so a client needs no table of its own."""

    name: str
    packs: int
    columns: int
    cards_per_column: int
    face_down_per_column: int
    packing: str
    """What a column card goes on (one rank lower): ``same-suit``, ``alternate-colour``,
    ``any-but-own-suit`` or ``any-suit``."""
    group_moves: str
    """``none`` (one card at a time), ``same-suit-run`` or ``valid-run`` (runs move as a unit)."""
    empty_column: str
    """What an empty column takes: ``any``, ``king-only`` or ``nothing``."""
    stock_passes: int
    """Passes through the stock (the waste may be turned over ``stock_passes - 1`` times)."""
    draw_count: int
    aces_first: bool
    """The aces start on the foundations."""

    @classmethod
    def of(cls, variant: Any) -> "Rules":
        """From a :class:`shared.variants.Variant` (typed ``Any`` to keep this module import-light)."""
        return cls(name=variant.name, packs=variant.packs, columns=variant.columns,
                   cards_per_column=variant.cards_per_column, face_down_per_column=variant.face_down_per_column,
                   packing=variant.packing.value, group_moves=variant.group_moves.value,
                   empty_column=variant.empty_column.value, stock_passes=variant.stock_passes,
                   draw_count=variant.draw_count, aces_first=variant.aces_first)


class RaceInfo(msgspec.Struct, kw_only=True):
    """What anyone may know about a race (never the deal while it runs)."""

    id: str
    code: str
    """Short join code a player can type (``hello.race`` takes it or the id)."""
    variant: str
    deal_source: str
    seats: int
    players: int
    """Seats taken."""
    time_limit: int
    """Seconds from ``starts_at`` until the race ends for everyone."""
    undo: bool
    start_mode: str
    status: RaceStatus
    commitment: str
    """Hex SHA-256 of ``"<variant>|<deal>|<salt>"``: checked against the reveal."""
    created_at: Millis
    starts_at: Union[Millis, None] = None
    ends_at: Union[Millis, None] = None
    version: Version = 0
    checked: bool = False
    """The deal comes from the pool of deals proved winnable (``deal_source`` ``"pool"``)."""
    hints: bool = False
    """Players may ask the server for hints (and are then marked ``helped``)."""
    rules: Union[Rules, None] = None
    """The variant's rules (servers before this field left it out)."""
    rated: bool = False
    """The standings update the players' ratings (every player has an account)."""
    title: Union[str, None] = None
    """What the race is part of, in words, set by whoever made it (a tournament's heat: ``"Friday Cup ·
    round 2 of 3 · heat 1 of 4"``); None for a race a player created."""
    scheduled_at: Union[Millis, None] = None
    """When whoever made the race means to start it (a server-made race: the server starts it then);
    None when a player starts it. ``starts_at`` is the start itself, once given."""


class PlayerProgress(msgspec.Struct, kw_only=True):
    """One racer's line in the progress table."""

    seat: Seat
    name: str
    home: int
    """Cards on the foundations."""
    total: int
    moves: int
    status: PlayerStatus
    rank: int
    """1-based current standing (see ``docs/protocol.md``, Standings)."""
    finished_at: Union[Millis, None] = None
    home_at: Union[Millis, None] = None
    """When the player reached its current ``home`` count (the tie-break)."""
    helped: bool = False
    """The player took a hint in this race ("played with help"; never cleared)."""


def racer_sees(line: PlayerProgress) -> tuple[object, ...]:
    """What a racer's screen shows of a progress line (the racers panel of the terminal client: rank, name,
    cards home of total, status mark, the help mark). A change of anything else (the move count, the
    times) may reach racers later, with their next frame (docs/protocol.md, ``progress``)."""
    return (line.rank, line.name, line.home, line.total, line.status, line.helped)


class Standing(msgspec.Struct, kw_only=True):
    """One line of the final results, best first."""

    rank: int
    seat: Seat
    name: str
    status: PlayerStatus
    home: int
    total: int
    moves: int
    finished_at: Union[Millis, None] = None
    home_at: Union[Millis, None] = None
    helped: bool = False
    account: Union[str, None] = None
    """The player's account (its name in lower case), or None for a player without one."""


class PlayerRecord(msgspec.Struct, kw_only=True):
    """A player's whole game: replay ``moves`` on the revealed deal (``U`` = undo)."""

    seat: Seat
    name: str
    moves: list[str]
    position: str
    """Final position in the text notation of ``shared.position``."""


class Results(msgspec.Struct, kw_only=True):
    """A finished race: standings, the revealed deal and every game."""

    race: str
    variant: str
    deal: int
    salt: str
    commitment: str
    starts_at: Union[Millis, None]
    ended_at: Millis
    standings: list[Standing]
    records: list[PlayerRecord]
    checked: bool = False
    """The deal came from the server's private pool: a winning line is known for it."""
    winning_line: Union[list[str], None] = None
    """Checked races: the solver's winning line from the deal's start, so anyone
    can verify the mark (``thieves replay`` of ``variant``, ``deal`` and these moves)."""
    revealed: bool = True
    """False while the deal is still secret after the race, because others may still be playing it (a
    daily deal's play, a race of an event): then ``deal`` is 0, ``salt`` empty, ``records`` empty and
    ``winning_line`` null; the standings are all there."""
    reveal_at: Union[Millis, None] = None
    """While not ``revealed``: when the deal and the games will be shown; null: once the event the race
    belongs to is over (no clock says when)."""

    def secret_words(self) -> Union[str, None]:
        """Why the deal and the games are missing, in the words every reader shows; None once revealed."""
        if self.revealed:
            return None
        if self.reveal_at is None:
            return ("The deal and every game stay secret until the event is over "
                    "(other races of the event may not have finished this deal yet).")
        when = datetime.datetime.fromtimestamp(self.reveal_at / 1000, datetime.timezone.utc)
        return (f"The deal and every game stay secret until {when:%Y-%m-%d %H:%M} UTC "
                "(others may not have played this deal yet).")


# ------------------------------------------------------ client -> server
class Hello(_Message, tag="hello"):
    """First frame of every connection: who is joining which race."""

    protocol: int
    race: RaceRef
    role: Role = "player"
    name: Union[Name, None] = None
    """Required for a new player seat; ignored when ``token`` reclaims a seat."""
    token: Union[Token, None] = None
    """A player token from an earlier ``welcome``: take that seat back."""
    last_version: Union[Version, None] = None
    """Highest race version the client saw (reconnection)."""
    key: Union[AccountKey, None] = None
    """An account key (``POST /players``): the player joins as that account, under its name
    (``name`` may then be left out; given, it must be the account's name in any case).
    Required to join a ``rated`` race; with ``token`` it must be the seat's account."""


class Create(_Message, tag="create"):
    """Create a race (also ``POST /races`` with the same fields as JSON)."""

    variant: str = "forty-thieves"
    deal_source: DealSource = "random"
    deal: Union[DealNumber, None] = None
    """Required when ``deal_source`` is ``"number"``."""
    seats: SeatCount = 2
    time_limit: TimeLimit = 900
    undo: bool = True
    start_mode: StartMode = "creator"
    hints: bool = False
    """Allow ``hint`` requests (off by default: a race is usually played unaided)."""
    rated: bool = False
    """The final standings update each player's rating for the variant: only players with
    an account may join, and the race needs two of them to start."""


class Leave(_Message, tag="leave"):
    """Give the seat back while the race is still in the lobby (the server answers ``left``
    and closes the connection). Once the race has started, ``give_up`` ends a game instead."""


class Ready(_Message, tag="ready"):
    """A player in the lobby is (or is no longer) ready."""

    ready: bool = True


class Start(_Message, tag="start"):
    """Start the race now; only with the ``creator_token`` from ``created``."""

    creator_token: Token


class Move(_Message, tag="move"):
    """One move in the notation of ``shared.moves`` (``"U"`` takes one back).

    ``seq`` is the client's own counter, higher for each new move: a move
    resent with the ``seq`` of the last accepted one is acknowledged again
    without being played twice; a lower one is ``stale_sequence``.
    """

    seq: Seq
    move: MoveText
    seat: Union[Seat, None] = None
    """Optional; when present it must be the connection's own seat."""


class GiveUp(_Message, tag="give_up"):
    """Stop racing; the player keeps its cards home for the standings."""


class Ping(_Message, tag="ping"):
    """Ask for a ``pong`` (round-trip time, clock offset)."""

    nonce: int = 0


class HintRequest(_Message, tag="hint"):
    """Ask for a suggested move (races created with ``hints``); marks the player as helped.

    The answer is the server's ``hint`` frame; the game does not change.
    """


# ------------------------------------------------------ server -> client
class Welcome(_Message, tag="welcome"):
    """Answer to a good ``hello``: a full picture of the race."""

    protocol: int
    race: RaceInfo
    role: Role
    seat: Union[Seat, None]
    token: str
    """HMAC-signed player token (empty for spectators): keep it to rejoin."""
    version: Version
    server_time: Millis
    view: Union[View, None]
    """The player's board once the race has started, else ``None``."""
    seq: Seq = 0
    """``seq`` of the player's last accepted move (0 before any): moves the
    client sent with a higher ``seq`` were not played and may be resent."""
    progress: list[PlayerProgress] = []
    """Every racer; empty when ``resumed`` (keep your table: the missed
    changes follow in a ``progress`` frame)."""
    resumed: bool = False
    """True when ``hello.last_version`` was honoured: ``version`` then echoes
    it, and the frames missed since follow this one."""


class Created(_Message, tag="created"):
    """Answer to ``create``."""

    race: RaceInfo
    creator_token: str
    """Proves the creator: ``start`` needs it."""


class Error(_Message, tag="error"):
    """A refused frame (other than a move, see ``reject``)."""

    code: str
    message: str
    ref: Union[str, None] = None
    """``type`` of the frame that caused it, when known."""


class Countdown(_Message, tag="countdown"):
    """The race starts at ``starts_at`` (server clock) and ends at ``ends_at``."""

    version: Version
    starts_at: Millis
    ends_at: Millis
    server_time: Millis
    view: Union[View, None] = None
    """The starting board (players only; it is the same for every player)."""


class Ack(_Message, tag="ack"):
    """A move was played: the player's new board."""

    seq: Seq
    move: str
    """The move as stored, in canonical notation (``"U"`` for an undo)."""
    version: Version
    view: View
    status: PlayerStatus
    duplicate: bool = False
    """True when this ``seq`` had already been played (a resend)."""


class Reject(_Message, tag="reject"):
    """A move was refused; nothing changed."""

    seq: Seq
    reason: str
    message: str
    version: Version = 0


class Progress(_Message, tag="progress"):
    """Racers whose line changed since the previous progress frame.

    ``full`` frames list every racer (the first after a join and after a
    gap); others only the changed lines, which a client merges by ``seat``.
    """

    version: Version
    server_time: Millis
    race_status: RaceStatus
    players: list[PlayerProgress]
    full: bool = False


class GaveUp(_Message, tag="gave_up"):
    """Answer to ``give_up``: the player's game is over; its cards home count."""

    version: Version


class Left(_Message, tag="left"):
    """Answer to ``leave``: the seat is free again; the connection closes after this frame."""

    version: Version


class Finished(_Message, tag="finished"):
    """The race is over: final standings, the revealed deal, every game."""

    version: Version
    results: Results


class Pong(_Message, tag="pong"):
    nonce: int
    server_time: Millis


class HintAnswer(_Message, tag="hint"):
    """The answer to a ``hint`` request: a move for the player's current position.

    Why both ``winning`` and ``verdict``: within the small time budget the
    solver may find no line; the move is then only the most promising legal
    one (``winning`` false, ``verdict`` ``"unknown"``), or, when no line
    exists from here at all, ``"unwinnable"``.
    """

    move: Union[str, None]
    """A legal move in notation; ``None`` only when no move is legal."""
    winning: bool
    """True when ``move`` starts a line the server proved to win from here."""
    verdict: HintVerdict
    remaining: int = 0
    """Moves in that winning line from here (0 when none was found)."""
    seq: Seq = 0
    """``seq`` of the player's last accepted move: the hint is for the position after it."""
    version: Version = 0


# ------------------------------------------------------------- seeks (both ways)
class Seek(_Message, tag="seek"):
    """Find a race now: wait in the pool of (variant, seats, time limit, rated) until the server forms a
    race of ``seats`` players close in rating (docs/protocol.md "Seeks"). Instead of ``hello``, as a
    connection's first frame; the connection then carries ``seeking`` and ``matched``."""

    protocol: int = 1
    variant: str = "forty-thieves"
    seats: Annotated[int, msgspec.Meta(ge=0, le=1_000_000)] = 2
    """2..8 (``seek_out_of_range`` otherwise)."""
    time_limit: Annotated[int, msgspec.Meta(ge=0, le=1_000_000)] = 300
    """30..3600 seconds (``seek_out_of_range`` otherwise)."""
    rated: bool = False
    """A rated pool: accounts only (``account_required``)."""
    name: Union[Name, None] = None
    """An anonymous player's name (as in ``hello``)."""
    key: Union[AccountKey, None] = None
    """An account key: seek as that account, paired by its rating in the variant."""


class SeekCancel(_Message, tag="seek_cancel"):
    """Leave the pool (also what closing the connection does while the seek waits)."""


class Seeking(_Message, tag="seeking"):
    """The seek waits: sent when it enters the pool and about once a second after."""

    pool: str
    """``<variant>/<seats>/<time limit>/<rated|casual>``."""
    seek: str
    """The seek's id."""
    waiting: int
    """Seeks waiting in the pool now, this one included."""
    rating: int
    """The rating the player is paired by."""
    gap: int
    """The widest rating gap the player accepts now (it widens with waiting)."""
    waited_ms: Millis
    server_time: Millis
    requeued: bool = False
    """Back in the pool (with its waiting time kept) because someone did not come to the race formed."""


class Matched(_Message, tag="matched"):
    """A race was formed for the seek: join it at once with ``hello`` (``race``, ``token``) and send
    ``ready``; it starts when every player is ready. Someone who has not joined by ``join_by`` is
    dropped (a no-show) and the others wait in the pool again."""

    pool: str
    seek: str
    race: str
    code: str
    seat: Seat
    token: str
    """The player token of the seat the server took for the player (``hello.token``)."""
    join_by: Millis
    names: list[str]
    """The racers, in seat order."""
    ratings: list[int]
    gap: int
    """The bound the group kept: the allowed gap of its longest waiter when it was formed."""
    waited_ms: Millis
    """How long this seek waited."""


class SeekCancelled(_Message, tag="seek_cancelled"):
    """Answer to ``seek_cancel``: ``cancelled`` false when a race was formed first (its ``matched``
    came or comes before this frame)."""

    cancelled: bool


class SeekPoolLine(msgspec.Struct, kw_only=True):
    """One pool of ``GET /seeks``."""

    pool: str
    variant: str
    seats: int
    time_limit: int
    rated: bool
    waiting: int


class SeekPools(msgspec.Struct, kw_only=True):
    """``GET /seeks``: the pools in use (a seek waits, or a race forms), and how many wait in each now."""

    pools: list[SeekPoolLine]
    server_time: Millis


ClientMessage = Union[Hello, Create, Ready, Start, Move, GiveUp, Ping, HintRequest, Leave, Seek, SeekCancel]
ServerMessage = Union[Welcome, Created, Error, Countdown, Ack, Reject, Progress, GaveUp, Finished, Pong, HintAnswer,
                      Left, Seeking, Matched, SeekCancelled]
CLIENT_TYPES: tuple[str, ...] = tuple(c.__struct_config__.tag for c in ClientMessage.__args__)  # type: ignore[attr-defined]
SERVER_TYPES: tuple[str, ...] = tuple(c.__struct_config__.tag for c in ServerMessage.__args__)  # type: ignore[attr-defined]


# ------------------------------------------------------- HTTP bodies: players
class Register(msgspec.Struct, kw_only=True):
    """``POST /players``: the account to create (its name is checked by ``shared.names.account_name``,
    which says why a name cannot be one)."""

    name: Annotated[str, msgspec.Meta(max_length=4 * MAX_NAME_LENGTH)]


class AccountKeyAnswer(msgspec.Struct, kw_only=True):
    """``POST /players`` and ``POST /players/{name}/key``: the account's key, shown once."""

    name: str
    key: str


class KeyCheck(msgspec.Struct, kw_only=True):
    """``GET /players/{name}/key``: the key sent is the account's current one (changes nothing)."""

    name: str
    """The account's name as registered."""


class VariantRecord(msgspec.Struct, kw_only=True):
    """An account's record in one variant (``Profile.variants``)."""

    races: int = 0
    wins: int = 0
    best_ms: Union[int, None] = None
    """The fastest win, in ms from the race's start (None: no win yet)."""
    rating: Union[int, None] = None
    """The shown rating (``1000 + 40 * (mu - 3 sigma)``), None until a rated race."""
    mu: Union[float, None] = None
    sigma: Union[float, None] = None
    provisional: bool = True
    """sigma above the provisional bound: show the rating with a ``?``."""
    rated_races: int = 0


class Profile(msgspec.Struct, kw_only=True):
    """``GET /players/{name}``."""

    name: str
    created_at: Millis
    races: int = 0
    wins: int = 0
    variants: dict[str, VariantRecord] = {}


class HistoryEntry(msgspec.Struct, kw_only=True):
    """One race in an account's history (``GET /players/{name}/races``)."""

    race: str
    code: str
    variant: str
    ended_at: Millis
    place: int
    players: int
    status: str
    home: int
    total: int
    time_ms: Union[int, None] = None
    """From the race's start to the player's win (None: did not finish)."""
    rated: bool = False
    rating_before: Union[int, None] = None
    rating_after: Union[int, None] = None


class HistoryPage(msgspec.Struct, kw_only=True):
    """A page of history, newest first; ``next`` goes into ``before`` for the following page."""

    races: list[HistoryEntry]
    next: Union[str, None] = None


class LeaderboardLine(msgspec.Struct, kw_only=True):
    rank: int
    name: str
    rating: int
    mu: float
    sigma: float
    provisional: bool
    rated_races: int


class Leaderboard(msgspec.Struct, kw_only=True):
    """``GET /leaderboard?variant=V``: best first."""

    variant: str
    players: list[LeaderboardLine]


# -------------------------------------------------------- HTTP bodies: events
EventFormat = Annotated[str, msgspec.Meta(min_length=1, max_length=32)]
"""How an event is played (docs/events.md), a name the server knows (else ``bad_field``): ``duplicate``,
every entrant plays each round's deal, in heats; ``arena``, for ``duration`` seconds entrants are paired
again as soon as a race ends. What a client shows of an event comes from EventInfo's fields (``summary``,
``pairing``, ``score_field``), never from the name."""
EventStatus = Literal["registration", "running", "finished", "cancelled"]
"""``cancelled``: the organiser called the event off before it started (no race was ever made)."""
RoundState = Literal["waiting", "opening", "open", "running", "done"]
"""``open``: the heats exist and wait for their entrants until ``starts_at``; ``running``: the heats
race; ``done``: the round is scored (the next opens after the break)."""
EventName = Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
RoundStatus = Literal["finished", "racing", "gave_up", "no_show", "absent", "bye"]
"""An entrant's round in an event: a :data:`FinalStatus`, ``no_show`` (drawn into a heat, never
joined it), ``absent`` (not drawn: entered later, or withdrew) or ``bye`` (a Swiss round's odd one out:
in the round, in no race)."""
ArenaStatus = Literal["waiting", "playing", "paused"]
"""An arena entrant: ``waiting`` to be paired, ``playing`` its race, ``paused`` (missed a race: entering
again resumes it)."""
LiveStatus = Literal["waiting", "ready", "racing", "blocked", "finished", "gave_up", "disconnected", "not_joined"]
"""An entrant of a round under way as its heat's table shows it (a :data:`PlayerStatus`), or
``not_joined``."""


class EntryConditions(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Who may enter an event (lichess's tournament conditions): a second account made for the day cannot.

    Checked when an account enters (``entry_conditions_unmet`` says what is missing, in the player's words);
    an account that met them once stays entered. Ratings are the shown rating in the event's variant."""

    min_rated_races: Annotated[int, msgspec.Meta(ge=0, le=100_000)] = 0
    """Finished rated races in the event's variant, at least."""
    min_account_age: Annotated[int, msgspec.Meta(ge=0, le=10 * 365 * 86_400)] = 0
    """Seconds since the account was registered, at least."""
    min_rating: Union[Annotated[int, msgspec.Meta(ge=-10_000, le=10_000)], None] = None
    """The shown rating in the event's variant, at least (an account not rated there has none: refused)."""
    max_rating: Union[Annotated[int, msgspec.Meta(ge=-10_000, le=10_000)], None] = None
    """The shown rating in the event's variant, at most (an account not rated there counts as new: 1000)."""


class EventCreate(msgspec.Struct, kw_only=True):
    """``POST /events`` (organiser token): a new event, open for entries."""

    name: EventName
    format: EventFormat = "duplicate"
    variant: str = "forty-thieves"
    rounds: Annotated[int, msgspec.Meta(ge=1, le=50)] = 3
    heat_size: Annotated[int, msgspec.Meta(ge=2, le=500)] = 8
    """Most racers in one race of a round; a larger field races in several heats on the same deal."""
    time_limit: TimeLimit = 600
    """Seconds each round's races last."""
    join_seconds: Annotated[int, msgspec.Meta(ge=1, le=3600)] = 60
    """Seconds between a round's heats being drawn and their start: entrants join their heat then."""
    break_seconds: Annotated[int, msgspec.Meta(ge=0, le=86_400)] = 30
    """Seconds between a round's scoring and the next round's heats."""
    deal_source: Literal["pool", "random"] = "pool"
    """Each round's deal: a checked deal from the private pool, or a secret random deal."""
    deals: Union[list[DealNumber], None] = None
    """The organiser's own deals (instead of ``deal_source``), secret until the end: a duplicate event's
    one per round; an arena's used in turn, race after race."""
    rated: bool = False
    late_entry: bool = True
    """Accounts may still enter once the event runs (they play from the next round)."""
    check_in: bool = False
    """Entrants must also check in (``POST /events/{id}/check-in``) before the start; those who have
    not are withdrawn when the organiser starts the event."""
    duration: Annotated[int, msgspec.Meta(ge=10, le=7 * 86_400)] = 1800
    """Arenas: seconds from the start during which entrants are paired (races under way then count)."""
    group_size: Annotated[int, msgspec.Meta(ge=2, le=8)] = 2
    """Arenas: racers per pairing (2: head-to-head). Swiss events race head to head only (2)."""
    starts_at: Union[Millis, None] = None
    """When the event starts by itself (registration is open until then; check-in closes then), in the
    future; null: the organiser starts it (``POST /events/{id}/start``, which may also start a scheduled
    one early)."""
    repeat: Union[Annotated[str, msgspec.Meta(min_length=1, max_length=100)], None] = None
    """A five-field cron expression (UTC): as each occurrence starts, the next is created with the same
    settings, starting at the next time it names. Needs ``starts_at``."""
    conditions: Union[EntryConditions, None] = None
    """Who may enter (null: any account); docs/events.md, "Fair play"."""


class EventCancel(msgspec.Struct, kw_only=True):
    """``POST /events/{id}/cancel`` (organiser token)."""

    series: bool = False
    """Also end the event's series: no further occurrences (an occurrence already running plays on)."""


class EventHeat(msgspec.Struct, kw_only=True):
    heat: int
    race: str
    code: str
    entrants: list[str]
    """The accounts drawn into this heat (lower-case names)."""


class EventRound(msgspec.Struct, kw_only=True):
    round: int
    starts_at: Millis
    heats: list[EventHeat]
    deal: Union[int, None] = None
    """Revealed once the event has finished (each race's results reveal it too)."""
    byes: list[str] = []
    """Entrants of the round in no heat (a Swiss round's odd one out), scored as its format says."""
    deal_text: Union[str, None] = None
    """``deal`` as a string (null with it): JavaScript's ``JSON.parse`` rounds numbers above 2^53, and
    deals go up to 2^63, so the event page reads this one. Always made from ``deal``, whatever was sent."""

    def __post_init__(self) -> None:
        self.deal_text = None if self.deal is None else str(self.deal)


class EventInfo(msgspec.Struct, kw_only=True):
    """``GET /events/{id}`` (and the answer of ``POST /events``)."""

    id: str
    name: str
    format: EventFormat
    variant: str
    rounds: int
    heat_size: int
    time_limit: int
    join_seconds: int
    break_seconds: int
    rated: bool
    late_entry: bool
    status: EventStatus
    round: int
    """The round under way or last played (0 before the first)."""
    round_state: RoundState
    created_at: Millis
    entrants: int
    version: Version = 0
    schedule: list[EventRound] = []
    """The rounds drawn so far, oldest first."""
    next_at: Union[Millis, None] = None
    """When the next round's heats are drawn (while the event runs and a round is done)."""
    duration: int = 0
    group_size: int = 0
    ends_at: Union[Millis, None] = None
    """Arenas: when pairing stops (set at the start)."""
    check_in: bool = False
    pairings: int = 0
    """Arenas: how many times waiting entrants were paired so far (each time one race or more)."""
    summary: str = ""
    """The event's shape in a few words, as its format says it ("3 rounds in heats of 8")."""
    pairing: bool = False
    """Entrants are paired again as their races end (an arena): no rounds; each ``schedule`` entry is one
    race, and each standings line names its entrant's ``race`` and ``status``."""
    score_field: Literal["matchpoints", "points", "score"] = "matchpoints"
    """The standings line field that ranks the entrants (and is shown as their score)."""
    tiebreaks: list[Literal["buchholz", "sonneborn_berger"]] = []
    """Further standings line fields that break ties of the score, in order (shown as columns): Swiss."""
    score_rule: str = ""
    """The scoring in a few words (a caption for the standings)."""
    deal_source: Literal["pool", "random", "deals"] = "pool"
    """Where the deals come from: the private pool, secret random deals, or the organiser's ``deals``."""
    conditions: Union[EntryConditions, None] = None
    """Who may enter (null: any account)."""
    deals: Union[list[int], None] = None
    """The organiser's ``deals``: null until the event is over (secret while anyone may still play one)."""
    starts_at: Union[Millis, None] = None
    """When the event starts by itself (null: when the organiser starts it)."""
    series: Union[str, None] = None
    """A recurring event's series id (the same for every occurrence); null for a one-off event."""
    occurrence: int = 0
    """Which occurrence of its series this is (1, 2, ...; 0: not one of a series)."""
    repeat: Union[str, None] = None
    """The series' cron schedule; null once the series is cancelled (no further occurrences)."""
    next_event: Union[str, None] = None
    """The series' next occurrence, once made (as this one starts or is cancelled)."""


EntryOutcome = Literal["entered", "already_entered", "resumed", "checked_in", "withdrawn"]
"""What an entry request did: ``entered`` (a new entry, or again after a withdrawal), ``already_entered``
(nothing changed), ``resumed`` (an arena entrant paused for missing a race is paired again),
``checked_in``, ``withdrawn``."""


class EventEntry(msgspec.Struct, kw_only=True):
    """The answer of entering, checking in or withdrawing."""

    event: str
    account: str
    name: str
    from_round: int
    """The first round the entrant plays."""
    withdrawn: bool = False
    checked_in: bool = False
    """Checked in (or entered once the event ran: a late entrant is there by entering)."""
    outcome: EntryOutcome = "entered"
    """What this request did (servers before this field left it out)."""


class EventRoundScore(msgspec.Struct, kw_only=True):
    """One entrant's round: its race result and the matchpoints it earned there."""

    round: int
    race: Union[str, None]
    heat: Union[int, None]
    status: RoundStatus
    """``finished``, ``racing`` (stopped by the clock), ``gave_up``, ``no_show`` or ``absent`` (not in the round)."""
    home: int
    time_ms: Union[int, None]
    """From the race's start to the win (None: no win)."""
    matchpoints: float


class EventStandingLine(msgspec.Struct, kw_only=True):
    rank: int
    account: str
    name: str
    matchpoints: float
    home: int
    """Cards home over every round (the first tie-break)."""
    time_ms: int
    """Time over every round (the second tie-break): a win's time, else the round's whole time limit."""
    withdrawn: bool = False
    rounds: list[EventRoundScore] = []
    points: Union[int, None] = None
    """Arenas: points by place (a win 2, a tie for first or a place in the top half 1, doubled on fire)."""
    wins: int = 0
    races: int = 0
    streak: int = 0
    """Arenas: wins in a row; from 2 the entrant is on fire (its points count double)."""
    status: Union[ArenaStatus, Literal[""]] = ""
    """Arenas: ``waiting`` (to be paired), ``playing``, ``paused`` (missed a race: enter again to come back)."""
    race: Union[str, None] = None
    """Arenas: the race the entrant is paired into now (join it with the account key)."""
    score: Union[float, None] = None
    """Swiss: points (a win 1, a tie ½, a bye 1)."""
    buchholz: Union[float, None] = None
    """Swiss: the sum of the entrant's opponents' points (the first tie-break)."""
    sonneborn_berger: Union[float, None] = None
    """Swiss: the points of the opponents it beat, plus half those of the opponents it tied (the second)."""


class EventStandings(msgspec.Struct, kw_only=True):
    """``GET /events/{id}/standings``: best first; ties share a rank."""

    event: str
    status: EventStatus
    round: int
    round_state: RoundState
    version: Version
    lines: list[EventStandingLine]


class EventLiveLine(msgspec.Struct, kw_only=True):
    """One entrant in a heat of the round under way, as its race's table shows it now."""

    account: str
    heat: int
    race: str
    status: LiveStatus
    """The race's status of the entrant (racing, finished, gave_up, disconnected ...), or ``not_joined``."""
    home: int
    matchpoints: float
    """What the round would give it if the heats ended now (against every heat's live table)."""


class EventLive(msgspec.Struct, kw_only=True):
    """One frame of ``GET /events/{id}/stream``: the event, its standings, the round under way live."""

    event: EventInfo
    standings: EventStandings
    live: list[EventLiveLine]
    server_time: Millis


class DailyPlay(msgspec.Struct, kw_only=True):
    """``POST /daily/{variant}``: the account's race on today's deal (the same race if asked again)."""

    variant: str
    date: str
    """The UTC day, ``YYYY-MM-DD``."""
    race: str
    code: str
    time_limit: int
    reveal_at: Millis
    """When the deal and everyone's games are revealed (the day's end, UTC)."""


class DailyLine(msgspec.Struct, kw_only=True):
    rank: int
    account: str
    name: str
    status: str
    """``finished``, ``racing`` (stopped by the clock), ``gave_up`` or ``playing`` (under way now)."""
    home: int
    time_ms: Union[int, None] = None
    """From the account's own start to its win."""
    race: str
    moves: Union[list[str], None] = None
    """The account's game, once the day is over."""
    counted: bool = True
    """False: the account does not meet the server's daily condition (docs/events.md, "Fair play"); its
    line is ranked after every counted one."""


class FairPlayDecision(msgspec.Struct, kw_only=True):
    """One deviation from the natural move that the stock's true order settles (docs/events.md, "Fair play")."""

    ply: int
    """The move's index in the game's record (0-based, undos counted)."""
    move: str
    natural: str
    """The move the solver's ordering (and a greedy player) would have taken."""
    position: str
    """The position before the move (shared.position's notation)."""
    unseen: list[str]
    """The stock cards the player had not seen yet, in their true order (next first)."""
    chosen_wins: bool
    natural_wins: bool
    chosen_share: float
    """The share of sampled orders of the unseen cards on which the chosen move wins: what the visible
    cards said of it."""
    natural_share: float
    foresight: bool


class FairPlayGame(msgspec.Struct, kw_only=True):
    """One finished game on a shared deal, analysed after its race (never on the move path)."""

    race: str
    seat: int
    account: Union[str, None]
    name: str
    status: str
    home: int
    moves: list[str]
    stock_seen: int = 0
    """Stock cards the player had drawn into sight by the end (of ``stock_size``)."""
    stock_size: int = 0
    plays_while_drawing: int = 0
    """Moves other than draws made before it had seen three quarters of the stock (-1: it never did)."""
    elapsed_ms: Union[int, None] = None
    """From the race's start to the player's end (a give-up or a finish)."""
    decisions: int = 0
    deviations: int = 0
    foresight: int = 0
    costly: int = 0
    stored_line_share: float = 0.0
    undos: int = 0
    settled: list[FairPlayDecision] = []
    cpu_seconds: float = 0.0
    complete: bool = True
    public_deal: bool = False
    """The deal is one of the shipped public pool's, whose winning line anyone may read: following it is
    no sign of foresight, so neither foresight nor the stored line is flagged on it."""


class FairPlayFlag(msgspec.Struct, kw_only=True):
    """A flag for the organiser (or, for the daily deal, the server's operator) to look at: never a
    penalty by itself."""

    kind: Literal["scouting", "linked", "foresight", "stored_line"]
    account: Union[str, None]
    name: str
    race: Union[str, None] = None
    why: str
    """The statistic against its threshold, in words."""
    statistic: float
    threshold: float
    moves: list[str] = []
    """The game's moves in the game's notation (``U`` = undo)."""
    position: Union[str, None] = None
    """The position of the first flagged decision (foresight)."""
    unseen: list[str] = []
    """What was unseen there, in the true order."""
    decisions: list[FairPlayDecision] = []
    linked: list[str] = []
    """The other accounts on the same deal this one is linked to (same registration address, or
    registered together)."""


class FairPlayReport(msgspec.Struct, kw_only=True):
    """``GET /events/{id}/fairplay`` (organiser) and ``GET /daily/{variant}/fairplay?date=`` (organiser)."""

    scope: str
    """``event:<id>`` or ``daily:<variant>:<date>``."""
    analysed: int
    """Finished games analysed."""
    waiting: int
    """Games not analysed yet: their race is still under way (or the analysis' time ran out: ask again)."""
    cpu_seconds: float
    """Solver CPU the analyses took (each game's once: they are kept)."""
    flags: list[FairPlayFlag]


class DailyBoard(msgspec.Struct, kw_only=True):
    """``GET /daily/{variant}?date=``: by finish time, then cards home; the deal once the day is over."""

    variant: str
    date: str
    revealed: bool
    lines: list[DailyLine]
    deal: Union[int, None] = None


# --------------------------------------------- HTTP bodies: challenges and rematches
ChallengeStatus = Literal["open", "accepted", "declined", "expired", "cancelled"]
"""``open`` until the challenged account answers; ``accepted`` (the race is made), ``declined``,
``cancelled`` (the challenger withdrew) or ``expired`` (no answer within its time)."""
ChallengeDeal = Literal["pool", "random"]
AccountNameText = Annotated[str, msgspec.Meta(min_length=1, max_length=4 * MAX_NAME_LENGTH)]


class ChallengeCreate(msgspec.Struct, kw_only=True):
    """``POST /challenges`` (the challenger's key as ``Authorization: Bearer``): invite an account to a
    race of two."""

    to: AccountNameText
    """The challenged account's name (any case)."""
    variant: str = "forty-thieves"
    time_limit: TimeLimit = 900
    rated: bool = False
    undo: bool = True
    hints: bool = False
    deal_source: Union[ChallengeDeal, None] = None
    """``pool`` (a checked deal) or ``random``; by default a checked deal where the solver can check
    the variant, else a secret random one."""


class Challenge(msgspec.Struct, kw_only=True):
    """One challenge as its two accounts (and the challenged player's page) see it. Nothing of a deal
    is in it: the deal is drawn when the race is made, on accept."""

    id: str
    challenger: str
    """The challenger's name as registered."""
    challenged: str
    variant: str
    time_limit: int
    rated: bool
    undo: bool
    hints: bool
    deal_source: ChallengeDeal
    status: ChallengeStatus
    created_at: Millis
    expires_at: Millis
    race: Union[str, None] = None
    """Once accepted: the race made for the two (only they may join it)."""
    code: Union[str, None] = None


class ChallengeList(msgspec.Struct, kw_only=True):
    """``GET /challenges``: the account's open challenges, received and sent, newest first, and whether
    it takes challenges at all."""

    accepting: bool
    incoming: list[Challenge]
    outgoing: list[Challenge]


class ChallengeSetting(msgspec.Struct, kw_only=True):
    """``POST /players/{name}/challenges``: whether the account takes challenges (the answer too)."""

    accept: bool
    name: str = ""


RematchStatus = Literal["none", "open", "accepted", "declined", "expired"]
"""``none``: nobody offered one (or the last offer was forgotten); ``open``: offered, waiting for every
racer's yes; ``accepted``: every racer said yes and the new race is made; ``declined``: a racer said no;
``expired``: not every racer said yes in time."""


class RematchAnswer(msgspec.Struct, kw_only=True):
    """``POST /races/{id}/rematch``: the racer's answer (``true`` offers a rematch, or accepts the offer)."""

    accept: bool = True


class Rematch(msgspec.Struct, kw_only=True):
    """``GET``/``POST /races/{id}/rematch``: a finished race's rematch offer as it stands. Nothing of the
    old race's deal is in it, and the new race plays a new one."""

    race: str
    """The finished race."""
    status: RematchStatus
    players: list[str]
    """Every racer of the finished race (names), all of whom must say yes."""
    accepted: list[str] = []
    """The racers who said yes."""
    declined: list[str] = []
    expires_at: Union[Millis, None] = None
    new_race: Union[str, None] = None
    """Once accepted: the new race (same players and settings, a new deal; only they may join it)."""
    code: Union[str, None] = None


# ------------------------------------------------------------------- codes
class ErrorCode(str, enum.Enum):
    """Protocol error codes (``error.code`` / ``reject.reason``).

    Move rejections for rule reasons use :class:`IllegalReason` values
    instead; :func:`explain` knows both.
    """

    BAD_FRAME = "bad_frame"
    UNKNOWN_TYPE = "unknown_type"
    BAD_FIELD = "bad_field"
    VERSION_MISMATCH = "version_mismatch"
    HELLO_REQUIRED = "hello_required"
    ALREADY_JOINED = "already_joined"
    RACE_NOT_FOUND = "race_not_found"
    RACE_FULL = "race_full"
    RACE_CLOSED = "race_closed"
    NAME_TAKEN = "name_taken"
    FORBIDDEN = "forbidden"
    NOT_YOUR_SEAT = "not_your_seat"
    SPECTATOR_CANNOT_MOVE = "spectator_cannot_move"
    RACE_NOT_STARTED = "race_not_started"
    PLAYER_FINISHED = "player_finished"
    RACE_OVER = "race_over"
    RACE_NOT_OVER = "race_not_over"
    BAD_TOKEN = "bad_token"
    TOKEN_EXPIRED = "token_expired"
    STALE_SEQUENCE = "stale_sequence"
    BAD_MOVE = "bad_move"
    UNDO_DISABLED = "undo_disabled"
    BAD_VARIANT = "bad_variant"
    BAD_DEAL = "bad_deal"
    NO_POOL = "no_pool"
    POOL_EMPTY = "pool_empty"
    HINTS_NOT_ALLOWED = "hints_not_allowed"
    HINT_TOO_SOON = "hint_too_soon"
    RATE_LIMITED = "rate_limited"
    CREATE_RATE_LIMITED = "create_rate_limited"
    TOO_MANY_LOBBIES = "too_many_lobbies"
    LOBBIES_FULL = "lobbies_full"
    SERVER_FULL = "server_full"
    TOO_MANY_CONNECTIONS = "too_many_connections"
    REQUEST_TIMEOUT = "request_timeout"
    BAD_REQUEST = "bad_request"
    BODY_TOO_LARGE = "body_too_large"
    UNAVAILABLE = "unavailable"
    INTERNAL = "internal"
    BAD_NAME = "bad_name"
    ACCOUNT_NAME_TAKEN = "account_name_taken"
    NAME_REGISTERED = "name_registered"
    BAD_KEY = "bad_key"
    ACCOUNT_REQUIRED = "account_required"
    PLAYER_NOT_FOUND = "player_not_found"
    NOT_ENOUGH_PLAYERS = "not_enough_players"
    REGISTER_RATE_LIMITED = "register_rate_limited"
    ORGANISER_REQUIRED = "organiser_required"
    EVENT_NOT_FOUND = "event_not_found"
    EVENT_CLOSED = "event_closed"
    EVENT_OVER = "event_over"
    NOT_AN_ENTRANT = "not_an_entrant"
    NOT_ENTERED = "not_entered"
    ENTRY_CONDITIONS_UNMET = "entry_conditions_unmet"
    ORGANISER_RATE_LIMITED = "organiser_rate_limited"
    UNSUPPORTED_MEDIA_TYPE = "unsupported_media_type"
    DEAL_SECRET = "deal_secret"
    # challenges (docs/protocol.md, "Challenges")
    CHALLENGE_NOT_FOUND = "challenge_not_found"
    CHALLENGE_EXPIRED = "challenge_expired"
    CHALLENGE_CLOSED = "challenge_closed"
    CHALLENGES_REFUSED = "challenges_refused"
    SELF_CHALLENGE = "self_challenge"
    TOO_MANY_CHALLENGES = "too_many_challenges"
    NOT_CHALLENGED = "not_challenged"
    NO_REMATCH = "no_rematch"
    NOT_A_RACER = "not_a_racer"
    REMATCH_CLOSED = "rematch_closed"
    BAD_SCHEDULE = "bad_schedule"
    # seeks
    SEEK_OUT_OF_RANGE = "seek_out_of_range"
    ALREADY_SEEKING = "already_seeking"
    NOT_SEEKING = "not_seeking"
    TOO_MANY_SEEK_POOLS = "too_many_seek_pools"
    SEEK_EXPIRED = "seek_expired"
    # the daily deal
    DAY_OVER = "day_over"

    @property
    def explanation(self) -> str:
        return _EXPLANATIONS[self]


_EXPLANATIONS = {
    ErrorCode.BAD_FRAME: "the frame is not a msgpack map with a string 'type' field",
    ErrorCode.UNKNOWN_TYPE: "no client message has that type",
    ErrorCode.BAD_FIELD: "a field is missing, of the wrong type or out of range",
    ErrorCode.VERSION_MISMATCH: "the client speaks another protocol version",
    ErrorCode.HELLO_REQUIRED: "the first frame of a connection must be hello",
    ErrorCode.ALREADY_JOINED: "this connection has already joined a race",
    ErrorCode.RACE_NOT_FOUND: "no race has that id or join code",
    ErrorCode.RACE_FULL: "every seat of the race is taken",
    ErrorCode.RACE_CLOSED: "the race has started or ended: new players cannot join (spectators can)",
    ErrorCode.NAME_TAKEN: "another player of the race has that name",
    ErrorCode.FORBIDDEN: "this connection may not do that",
    ErrorCode.NOT_YOUR_SEAT: "a move for another player's seat",
    ErrorCode.SPECTATOR_CANNOT_MOVE: "spectators watch; they cannot play",
    ErrorCode.RACE_NOT_STARTED: "the race has not started yet",
    ErrorCode.PLAYER_FINISHED: "this player's game is over (won or given up)",
    ErrorCode.RACE_OVER: "the race is over",
    ErrorCode.RACE_NOT_OVER: "the race has not ended yet: results come at the end",
    ErrorCode.BAD_TOKEN: "the token is not one this server signed for this race",
    ErrorCode.TOKEN_EXPIRED: "the token has expired",
    ErrorCode.STALE_SEQUENCE: "seq is not above the last accepted move's seq",
    ErrorCode.BAD_MOVE: "the move is not in the move notation",
    ErrorCode.UNDO_DISABLED: "this race does not allow undo",
    ErrorCode.BAD_VARIANT: "no game of the family has that name",
    ErrorCode.BAD_DEAL: "the deal source or deal number is not valid",
    ErrorCode.NO_POOL: "the server cannot check deals of that variant: use deal_source 'random' or 'number'",
    ErrorCode.POOL_EMPTY: "no checked deal was ready and none was found in time: try again in a few seconds",
    ErrorCode.HINTS_NOT_ALLOWED: "this race was created without hints",
    ErrorCode.HINT_TOO_SOON: "one hint at a time: wait a little before asking again",
    ErrorCode.RATE_LIMITED: "too many frames: slow down",
    ErrorCode.CREATE_RATE_LIMITED: "this address created races faster than the server allows: the message "
    "says when the next is allowed (HTTP 429 with Retry-After); nothing was stored",
    ErrorCode.TOO_MANY_LOBBIES: "this address has as many races waiting in the lobby as the server allows: "
    "start or let one expire first (HTTP 429 with Retry-After); nothing was stored",
    ErrorCode.LOBBIES_FULL: "the server holds as many races waiting in the lobby as it allows: try again "
    "later (HTTP 503 with Retry-After); nothing was stored",
    ErrorCode.SERVER_FULL: "this server process holds as many connections as it allows: reconnect later "
    "or to another server (HTTP 503 with Retry-After; a WebSocket is closed with 4007)",
    ErrorCode.TOO_MANY_CONNECTIONS: "this client address holds as many connections to this server process as "
    "one address may: close one or retry later (HTTP 429 with Retry-After; a WebSocket is closed with 4007)",
    ErrorCode.REQUEST_TIMEOUT: "the request's head or body did not arrive in time (HTTP 408; the connection "
    "is closed)",
    ErrorCode.BAD_REQUEST: "the request is not valid HTTP/1.1: a malformed request line or header, such as a "
    "control character like NUL in a header (HTTP 400), or a request head still unfinished past 16 KiB (HTTP 431); the "
    "connection is closed",
    ErrorCode.BODY_TOO_LARGE: "the request body is larger than the server reads (HTTP 413; the connection is "
    "closed)",
    ErrorCode.UNAVAILABLE: "the race store (Redis) does not answer; try again shortly",
    ErrorCode.INTERNAL: "the server failed on this frame; it has been logged",
    ErrorCode.BAD_NAME: "an account name is 2 to 24 letters, digits, '_' or '-', starting with a letter or digit",
    ErrorCode.ACCOUNT_NAME_TAKEN: "an account with that name, or one that looks like it, exists on this server",
    ErrorCode.NAME_REGISTERED: "that name belongs to a registered player: pick another, or join with its account key",
    ErrorCode.BAD_KEY: "the account key is not valid on this server (mistyped, or replaced by a newer one)",
    ErrorCode.ACCOUNT_REQUIRED: "this race is rated: only players with an account may join (thieves register NAME)",
    ErrorCode.PLAYER_NOT_FOUND: "no account has that name on this server",
    ErrorCode.NOT_ENOUGH_PLAYERS: "a rated race needs at least two players to start",
    ErrorCode.REGISTER_RATE_LIMITED: "this address registered accounts faster than the server allows: "
    "the message says when the next is allowed (HTTP 429 with Retry-After); nothing was stored",
    ErrorCode.ORGANISER_REQUIRED: "only the server's organiser token may do that (never a player's key); "
    "a server without --organiser-token runs no events",
    ErrorCode.EVENT_NOT_FOUND: "no event has that id",
    ErrorCode.EVENT_CLOSED: "the event takes no more entries (it started without late entry, its last round "
    "has begun, or an arena's time is up)",
    ErrorCode.EVENT_OVER: "the event is over: its final standings stand",
    ErrorCode.NOT_AN_ENTRANT: "this race is a heat of an event: only the entrants drawn into it may play",
    ErrorCode.NOT_ENTERED: "you have not entered this event: enter it first (POST /events/{id}/entrants), then "
    "check in",
    ErrorCode.ENTRY_CONDITIONS_UNMET: "the event asks more of an entrant's account than yours has yet (rated "
    "races, its age, a rating range): the message says what is missing (HTTP 403)",
    ErrorCode.ORGANISER_RATE_LIMITED: "this address sent too many wrong organiser tokens: wait before trying "
    "again (HTTP 429 with Retry-After)",
    ErrorCode.UNSUPPORTED_MEDIA_TYPE: "a request that may carry a body (POST, PUT, PATCH, DELETE) must say "
    "'Content-Type: application/json' (HTTP 415)",
    ErrorCode.DEAL_SECRET: "the race is over, but its deal and games stay secret while others may still play "
    "that deal (a daily deal's day, an event): its results show the standings only",
    ErrorCode.CHALLENGE_NOT_FOUND: "no challenge has that id (or it ended long enough ago to be forgotten)",
    ErrorCode.CHALLENGE_EXPIRED: "the challenge was not answered in time; nothing was made",
    ErrorCode.CHALLENGE_CLOSED: "the challenge was answered already (accepted, declined or cancelled)",
    ErrorCode.CHALLENGES_REFUSED: "that player does not take challenges (thieves account challenges off)",
    ErrorCode.SELF_CHALLENGE: "a challenge goes to another player, not to yourself",
    ErrorCode.TOO_MANY_CHALLENGES: "you have as many open challenges as the server allows: wait for an answer, "
    "or cancel one (thieves challenges cancel ID)",
    ErrorCode.NOT_CHALLENGED: "that challenge is not yours to answer: only the challenged player may accept "
    "or decline it, only the challenger may cancel it",
    ErrorCode.NO_REMATCH: "this race offers no rematch (a heat of an event, a play of the daily deal, or a race "
    "with a player who has no account)",
    ErrorCode.NOT_A_RACER: "only the racers of a race may offer or answer its rematch",
    ErrorCode.REMATCH_CLOSED: "a racer declined this rematch (or it is being made right now): a new offer can "
    "be made once this one expires",
    ErrorCode.BAD_SCHEDULE: "an event's starts_at is not in the future (or is after the year 9999), its repeat "
    "is not a five-field cron expression (or never comes before the year 10000), or it repeats without a "
    "starts_at; nothing was stored",
    # seeks
    ErrorCode.SEEK_OUT_OF_RANGE: "a seek asks for 2 to 8 players and a time limit of 30 to 3600 seconds; "
    "nothing was stored",
    ErrorCode.ALREADY_SEEKING: "this player already waits for a race (one seek at a time): cancel it first; "
    "nothing was stored",
    ErrorCode.NOT_SEEKING: "this connection has no seek waiting",
    ErrorCode.TOO_MANY_SEEK_POOLS: "this address's seeks wait in as many pools as one address may: seek in one "
    "of those, or cancel a seek there first; nothing was stored",
    ErrorCode.SEEK_EXPIRED: "nobody was paired with this seek in the time a seek may wait: seek again, maybe "
    "in a busier pool (thieves list shows them)",
    ErrorCode.DAY_OVER: "the day of this daily deal is over: a play begins and ends within its UTC day (the "
                        "day's board shows the deal and every game once it is over); play today's deal",
}

MOVE_REASONS: frozenset[str] = frozenset(r.value for r in IllegalReason)
"""Rule reasons a ``reject`` may carry (the engine's IllegalReason codes)."""

ALL_CODES: frozenset[str] = MOVE_REASONS | {c.value for c in ErrorCode}


def explain(code: str) -> str:
    """A human sentence for any error or reject code."""
    try:
        return ErrorCode(code).explanation
    except ValueError:
        pass
    try:
        return IllegalReason(code).explanation
    except ValueError:
        return code


class CloseCode(enum.IntEnum):
    """WebSocket close codes the server uses; see :data:`CLOSE_EXPLANATIONS`.

    An ``error`` frame naming the cause precedes every 4xxx close.
    """

    NORMAL = 1000
    GOING_AWAY = 1001
    MESSAGE_TOO_BIG = 1009
    INTERNAL_ERROR = 1011
    SERVICE_RESTART = 1012
    TRY_AGAIN_LATER = 1013
    HELLO_REFUSED = 4000
    VERSION_MISMATCH = 4001
    HELLO_TIMEOUT = 4002
    BAD_TOKEN = 4003
    TOO_MANY_ERRORS = 4004
    FLOODING = 4005
    SLOW_READER = 4006
    SERVER_FULL = 4007
    KEY_REPLACED = 4008

    @property
    def explanation(self) -> str:
        return CLOSE_EXPLANATIONS[self]


CLOSE_EXPLANATIONS: dict[CloseCode, str] = {
    CloseCode.NORMAL: "the server ended the connection normally",
    CloseCode.GOING_AWAY: "the server is going away",
    CloseCode.MESSAGE_TOO_BIG: f"a frame exceeded {MAX_FRAME_BYTES} bytes",
    CloseCode.INTERNAL_ERROR: "the server hit an unexpected error",
    CloseCode.SERVICE_RESTART: "the server is restarting (graceful shutdown): reconnect",
    CloseCode.TRY_AGAIN_LATER: "the race store (Redis) is unavailable: reconnect later",
    CloseCode.HELLO_REFUSED: "hello was refused (race unknown, full or closed, bad name); see the error frame",
    CloseCode.VERSION_MISMATCH: "hello carried another protocol version",
    CloseCode.HELLO_TIMEOUT: "no valid hello arrived in time",
    CloseCode.BAD_TOKEN: "hello carried a forged, foreign or expired token",
    CloseCode.TOO_MANY_ERRORS: "too many bad frames on this connection",
    CloseCode.FLOODING: "the connection kept sending far above its rate limit",
    CloseCode.SLOW_READER: "the client read too slowly and its send queue filled up",
    CloseCode.SERVER_FULL: "the server process holds as many connections as it allows, or as many as one "
    "address may (the error frame says which): reconnect after a pause, or to another server",
    CloseCode.KEY_REPLACED: "the key this connection joined with was replaced: rejoin with the new key",
}


# ------------------------------------------------------------------- codec
class CodedError(Exception):
    """An error a client is told about: an :class:`ErrorCode` and a message."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        self.code = code
        super().__init__(message)


class ProtocolError(CodedError, ValueError):
    """A frame that cannot be accepted; ``code`` is an :class:`ErrorCode`."""

    def __init__(self, code: ErrorCode, message: str, ref: str | None = None) -> None:
        super().__init__(code, message)
        self.ref = ref


_encoder = msgspec.msgpack.Encoder()
_Decoded = TypeVar("_Decoded")
_client_decoder: msgspec.msgpack.Decoder[ClientMessage] = msgspec.msgpack.Decoder(ClientMessage)
_server_decoder: msgspec.msgpack.Decoder[ServerMessage] = msgspec.msgpack.Decoder(ServerMessage)
_any_decoder = msgspec.msgpack.Decoder()


def encode(message: msgspec.Struct) -> bytes:
    """One message as the bytes of one binary WebSocket frame."""
    return _encoder.encode(message)


def decode_client(data: bytes) -> ClientMessage:
    """A frame from a client, validated; raises :class:`ProtocolError`."""
    return _decode(_client_decoder, data, CLIENT_TYPES)


def decode_server(data: bytes) -> ServerMessage:
    """A frame from the server (the client's side); raises :class:`ProtocolError`."""
    return _decode(_server_decoder, data, SERVER_TYPES)


def _decode(decoder: msgspec.msgpack.Decoder[_Decoded], data: bytes, types: tuple[str, ...]) -> _Decoded:
    if _too_deep(data, MAX_NESTING):
        raise ProtocolError(ErrorCode.BAD_FRAME, f"msgpack nested deeper than {MAX_NESTING} levels")
    try:
        return decoder.decode(data)
    except msgspec.ValidationError as exc:
        raise _classify(data, types, str(exc)) from None
    except msgspec.DecodeError as exc:
        raise ProtocolError(ErrorCode.BAD_FRAME, f"not msgpack: {exc}") from None


_T = TypeVar("_T")
_JSON_SKIP = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"?|[\[\]{}]')
"""A JSON string (skipped whole, so brackets inside it do not count; an unterminated one runs to the
end) or one bracket."""


def decode_json(data: bytes, into: type[_T]) -> _T:
    """An HTTP body as ``into`` (an empty body is ``{}``); raises :class:`ProtocolError`: ``bad_frame``
    for a body that is not JSON or nests deeper than :data:`MAX_NESTING`, ``bad_field`` for one of
    the wrong shape (``ref`` is None: an HTTP body is not a frame with a type)."""
    data = data or b"{}"
    if _json_too_deep(data, MAX_NESTING):
        raise ProtocolError(ErrorCode.BAD_FRAME, f"the body nests JSON deeper than {MAX_NESTING} levels")
    try:
        return msgspec.json.decode(data, type=into)
    except msgspec.ValidationError as exc:
        raise ProtocolError(ErrorCode.BAD_FIELD, str(exc)) from None
    except msgspec.DecodeError as exc:
        raise ProtocolError(ErrorCode.BAD_FRAME, f"the body is not JSON: {exc}") from None


def _json_too_deep(data: bytes, limit: int) -> bool:
    """Whether JSON ``data`` nests arrays and objects more than ``limit`` deep (why not let the
    decoder find out: as for msgpack, :func:`_too_deep`). A body with few brackets is passed by two
    C-speed counts; the others are walked by one regular expression that skips strings whole.
    Malformed data is left to the decoder."""
    if data.count(b"[") + data.count(b"{") <= limit:
        return False
    depth = 0
    for match in _JSON_SKIP.finditer(data):
        head = match.group()[0]
        if head in b"[{":
            depth += 1
            if depth > limit:
                return True
        elif head in b"]}":
            depth -= 1
    return False


_CONTAINER_HEADS = bytes([*range(0x80, 0xA0), 0xDC, 0xDD, 0xDE, 0xDF])
_NOT_CONTAINER_HEADS = bytes(b for b in range(256) if b not in _CONTAINER_HEADS)
_FIXED_SIZE = {0xC0: 0, 0xC2: 0, 0xC3: 0, 0xCA: 4, 0xCB: 8, 0xCC: 1, 0xCD: 2, 0xCE: 4, 0xCF: 8,
               0xD0: 1, 0xD1: 2, 0xD2: 4, 0xD3: 8, 0xD4: 2, 0xD5: 3, 0xD6: 5, 0xD7: 9, 0xD8: 17}
"""Payload bytes after the head byte of msgpack values of fixed size (fixext: type byte included)."""
_SIZED = {0xC4: (1, 0), 0xC5: (2, 0), 0xC6: (4, 0), 0xC7: (1, 1), 0xC8: (2, 1), 0xC9: (4, 1),
          0xD9: (1, 0), 0xDA: (2, 0), 0xDB: (4, 0)}
"""bin, ext and str with a length field: (bytes of the length, extra bytes: the ext type)."""
_COUNTED = {0xDC: (2, 1), 0xDD: (4, 1), 0xDE: (2, 2), 0xDF: (4, 2)}
"""array16/32 and map16/32: (bytes of the count, values per entry)."""


def _too_deep(data: bytes, limit: int) -> bool:
    """Whether msgpack ``data`` nests arrays and maps more than ``limit`` deep.

    Why not let the decoder find out: msgspec recurses once per level, so a
    deep frame raises ``RecursionError`` (at a depth that depends on the
    caller's stack) instead of a decode error. Nesting needs one container
    head byte per level, so a frame with few bytes that could be one (every
    real frame) is passed by one C-speed ``translate``; the others are walked
    without recursion. Malformed or truncated data is left to the decoder.
    """
    if len(data.translate(None, _NOT_CONTAINER_HEADS)) <= limit:
        return False
    left = [1]  # values still to read in each open container, outermost first
    i, end = 0, len(data)
    while left and i < end:
        if left[-1] == 0:
            left.pop()
            continue
        left[-1] -= 1
        head = data[i]
        i += 1
        if head <= 0x7F or head >= 0xE0:  # fixints
            continue
        if head <= 0x9F:  # fixmap, fixarray
            left.append((head & 0x0F) * 2 if head <= 0x8F else head & 0x0F)
        elif head <= 0xBF:  # fixstr
            i += head & 0x1F
        elif head in _FIXED_SIZE:
            i += _FIXED_SIZE[head]
        elif head in _SIZED:
            width, extra = _SIZED[head]
            i += width + extra + int.from_bytes(data[i:i + width], "big")
        elif head in _COUNTED:
            width, per_entry = _COUNTED[head]
            left.append(int.from_bytes(data[i:i + width], "big") * per_entry)
            i += width
        else:  # 0xc1, never used
            return False
        if len(left) > limit + 1:
            return True
    return False


def _classify(data: bytes, types: tuple[str, ...], detail: str) -> ProtocolError:
    """Tell a frame of the wrong shape from an unknown type from a bad field (error path only)."""
    try:
        raw = _any_decoder.decode(data)
    except msgspec.DecodeError:
        return ProtocolError(ErrorCode.BAD_FRAME, "a frame is exactly one msgpack value")
    if not isinstance(raw, dict):
        return ProtocolError(ErrorCode.BAD_FRAME, f"a frame is a msgpack map, not {type(raw).__name__}")
    kind = raw.get("type")
    if not isinstance(kind, str):
        return ProtocolError(ErrorCode.BAD_FRAME, "a frame needs a string 'type' field")
    if kind not in types:
        return ProtocolError(
            ErrorCode.UNKNOWN_TYPE, f"unknown message type {kind[:40]!r}; known: {', '.join(types)}"
        )
    return ProtocolError(ErrorCode.BAD_FIELD, f"{kind}: {detail}", ref=kind)


def error(code: ErrorCode | str, message: str | None = None, ref: str | None = None) -> Error:
    """An ``error`` message with the standard explanation unless told otherwise."""
    value = code.value if isinstance(code, enum.Enum) else code
    return Error(code=value, message=message or explain(value), ref=ref)


__all__ = [
    "PROTOCOL_VERSION",
    "MAX_FRAME_BYTES",
    "MAX_NESTING",
    "UNDO",
    "View",
    "Rules",
    "RaceInfo",
    "PlayerProgress",
    "Standing",
    "PlayerRecord",
    "Results",
    "Register",
    "AccountKeyAnswer",
    "VariantRecord",
    "Profile",
    "HistoryEntry",
    "HistoryPage",
    "LeaderboardLine",
    "Leaderboard",
    "EventCreate",
    "EventHeat",
    "EventRound",
    "EventInfo",
    "EventEntry",
    "EventRoundScore",
    "EventStandingLine",
    "EventStandings",
    "EventLiveLine",
    "EventLive",
    "DailyPlay",
    "DailyLine",
    "DailyBoard",
    "ChallengeCreate",
    "Challenge",
    "ChallengeList",
    "ChallengeSetting",
    "RematchAnswer",
    "Rematch",
    "Hello",
    "Create",
    "Ready",
    "Start",
    "Move",
    "GiveUp",
    "Leave",
    "Left",
    "Ping",
    "HintRequest",
    "Welcome",
    "Created",
    "Error",
    "Countdown",
    "Ack",
    "Reject",
    "Progress",
    "GaveUp",
    "Finished",
    "Pong",
    "HintAnswer",
    "Seek",
    "SeekCancel",
    "Seeking",
    "Matched",
    "SeekCancelled",
    "SeekPoolLine",
    "SeekPools",
    "ClientMessage",
    "ServerMessage",
    "ErrorCode",
    "CloseCode",
    "CLOSE_EXPLANATIONS",
    "MOVE_REASONS",
    "ALL_CODES",
    "CodedError",
    "ProtocolError",
    "encode",
    "decode_client",
    "decode_server",
    "explain",
    "error",
]
