"""The race's WebSocket frames (``hello`` to ``finished``) and the payloads they carry (the board,
the rules, the progress table, the results): the conversation of the package docstring."""

from __future__ import annotations

import datetime
from typing import Any, Union, cast

import msgspec

from .fields import (AccountKey, DealNumber, DealSource, HintVerdict, JoinId, Millis, MoveText, Name, PlayerStatus,
                     RaceRef, RaceStatus, Role, Seat, SeatCount, Seq, StartMode, TimeLimit, Token, Version, _Message)
from .matchmaking import Matched, Seek, SeekCancel, SeekCancelled, Seeking


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
        piles the last moves changed (``shared.view.wire_view``, reached through
        the game so this module imports nothing of the rules). Its pile
        lists may be shared with the game's later views: encode them, never
        change them.
        """
        return cast(View, game.wire_view())


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
    join_id: Union[JoinId, None] = None
    """Names this attempt to take a new seat (random, chosen by the client): a hello sent again with
    the same ``join_id`` (and name or key) after its answer was lost takes the seat the first one took,
    instead of ``name_taken``. Ignored with ``token``."""


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


ClientMessage = Union[Hello, Create, Ready, Start, Move, GiveUp, Ping, HintRequest, Leave, Seek, SeekCancel]
ServerMessage = Union[Welcome, Created, Error, Countdown, Ack, Reject, Progress, GaveUp, Finished, Pong, HintAnswer,
                      Left, Seeking, Matched, SeekCancelled]
CLIENT_TYPES: tuple[str, ...] = tuple(c.__struct_config__.tag for c in ClientMessage.__args__)  # type: ignore[attr-defined]
SERVER_TYPES: tuple[str, ...] = tuple(c.__struct_config__.tag for c in ServerMessage.__args__)  # type: ignore[attr-defined]
