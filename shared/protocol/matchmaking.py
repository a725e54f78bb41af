"""Matchmaking: the seek frames (a player waits in a pool on the WebSocket) and the HTTP bodies of
challenges and rematches. Kept apart from the race frames: a seek is not a race yet."""

from __future__ import annotations

from typing import Annotated, Literal, Union

import msgspec

from .fields import MAX_NAME_LENGTH, AccountKey, Millis, Name, Seat, TimeLimit, _Message


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
