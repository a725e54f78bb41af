"""Typed records of the account side of the store (``history.py``): rating plans, one account's part of
a finished race, and what the reads give back. They encode themselves; nothing else sees a Redis reply.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import msgspec

from shared import protocol as p


class RatingChange(msgspec.Struct, frozen=True, kw_only=True):
    """One account's rating in one rated race: before (as read when the plan was made) and after."""

    account: str
    place: int
    """The shared place the update used (tied players share the better one)."""
    mu_before: float
    sigma_before: float
    mu_after: float
    sigma_after: float


class RatingPlan(msgspec.Struct, frozen=True, kw_only=True):
    """A rated race's whole update, stored once with the race so that every process applies the same."""

    race: str
    variant: str
    changes: list[RatingChange]

    def encode(self) -> bytes:
        return msgspec.json.encode(self)

    @classmethod
    def decode(cls, blob: bytes) -> "RatingPlan":
        return msgspec.json.decode(blob, type=cls)

    def change_of(self, account: str) -> RatingChange | None:
        return next((c for c in self.changes if c.account == account), None)


@dataclass(frozen=True)
class AccountPart:
    """What one finished race does to one account: its history entry, totals and rating change."""

    account: str
    variant: str
    entry: p.HistoryEntry
    won: bool
    """A won game (every card home, whatever the place; giving up in first place is no win): counts in
    ``wins``."""
    finish_ms: int | None
    """The time of the player's won game, from the start (None: did not finish): for ``best_ms``."""
    change: RatingChange | None
    """None for an unrated race."""


@dataclass(frozen=True)
class Applied:
    """An account after :meth:`History.apply_account`: whether this call applied the race (False: it had
    been applied before, or the account does not exist) and the variant's rating now."""

    applied_now: bool
    exists: bool
    mu: float | None
    sigma: float | None
    rated: int


@dataclass(frozen=True)
class VariantStats:
    races: int = 0
    wins: int = 0
    best_ms: int | None = None
    mu: float | None = None
    sigma: float | None = None
    rated: int = 0


@dataclass(frozen=True)
class AccountStats:
    """An account's hash as the profile shows it (never its key hash)."""

    name: str
    created_at: int
    races: int = 0
    wins: int = 0
    variants: dict[str, VariantStats] = field(default_factory=dict)


@dataclass(frozen=True)
class LeaderRow:
    """One rated account of a leaderboard, in board order."""

    account: str
    name: str
    mu: float
    sigma: float
    rated: int
