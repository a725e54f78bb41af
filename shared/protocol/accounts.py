"""HTTP bodies of accounts: registration, keys, profiles, history and the leaderboard."""

from __future__ import annotations

from typing import Annotated, Union

import msgspec

from .fields import MAX_NAME_LENGTH, Millis


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
