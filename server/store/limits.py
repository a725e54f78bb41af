"""The store's half of the creation limits: keys and Lua scripts (part of the layout in server/store/__init__.py).

Why in Redis: a client could otherwise spread its creations over every
server process. Why these shapes:

- ``creator:{ADDR}:bucket`` (hash ``tokens``, ``stamp``) is a token bucket
  per client address: ``create_burst`` tokens, one back every
  ``create_interval`` seconds, refilled lazily from Redis's own clock
  (``TIME``, so processes with skewed clocks agree).
- ``creator:{ADDR}:lobbies`` (zset race id -> creation time, Redis clock)
  are the address's lobbies. Both keys carry the hash tag ``{ADDR}``, so
  :data:`_ADMIT` touches one slot, also on a Redis Cluster. A race that
  started or was removed lives in another slot, so the script cannot look;
  instead, when the cap would refuse, :meth:`CreationLimits.admit` reads
  each member's status and calls the script again naming the members that
  are no longer lobbies (a seek's place, :func:`seek_place`, is no race:
  it counts until its seek gives it back). A status never goes back to ``lobby`` and ids are
  never reused, so that count is exact (at worst one too high, for a race
  starting during the call). A member whose race does not exist is
  dropped only after ``grace_ms`` (its creation may be under way); members
  older than the lobby TTL are gone in any case. Both keys expire once
  nothing in them matters any more.
- ``lobbies:open`` (zset race id -> creation time) is every lobby, for the
  total cap. Too big to check member by member at each creation, it is
  kept instead: the store removes a race when it starts (``start``, the
  last ``ready``), is removed by the janitor or forgotten; the janitor
  drops members that are not lobbies any more (a process killed between
  the two writes); and members older than the lobby TTL stop counting.

Every refusal comes before the first write, so a refused creation leaves
Redis as it was. A creation that fails after admission (``pool_empty``)
gives its lobby places back (:meth:`CreationLimits.release`) but not its
token: the attempt cost solver time whether or not it found a deal, and a
refund let one address keep the solver busy for ever (issue 22). Other
requests that may set the solver working (the first play of a daily deal)
spend a token of the same bucket (:meth:`CreationLimits.spend`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable

from shared import protocol as p

from .client import hget_each
from .keys import OPEN_LOBBIES, Keys, creator_keys
from .records import text
from .scripts import register


SEEK_PLACE = "seek."
"""What a seek's lobby place is named by, before its id (no race id has a dot)."""


def seek_place(seek: str) -> str:
    """The lobby place a waiting seek holds in its address's set and in the total: a seek may become a
    race at any wave, so it counts as the lobby it would be from the moment it is made until its race
    starts or it ends (server/matchmaking/seeks.py gives the place back then; no race meta says so here)."""
    return SEEK_PLACE + seek


class Limited(p.Refusal):
    """A creation refused by a limit: ``code`` (an ErrorCode value) and how long to wait."""

    code: str

    def __init__(self, code: str, wait_ms: int) -> None:
        self.wait_ms = max(0, int(wait_ms))
        super().__init__(code, retry_after=retry_after(self.wait_ms))


@dataclass(frozen=True)
class CreationSettings:
    """The limits, in the units the scripts use."""

    burst: int
    interval_ms: float
    per_address: int
    total: int
    ttl_ms: int
    """The lobby TTL: a lobby older than this is gone (the janitor removes it)."""
    grace_ms: int
    """How long a reserved race id may lack its race hash (a creation under way)."""

    @property
    def rate_limited(self) -> bool:
        return self.burst > 0 and self.interval_ms > 0


class CreationLimits:
    """Admission of new races per client address and in total, shared by every process."""

    def __init__(self, redis: Any, settings: CreationSettings) -> None:
        self.redis = redis
        self.settings = settings
        self._admit = register(redis, "admit")
        self._release = register(redis, "release")
        self._reserve = register(redis, "reserve")
        self._bucket = Bucket(redis, settings.burst if settings.rate_limited else 0, int(settings.interval_ms))
        """The same per-address bucket as :data:`_ADMIT`'s, for :meth:`spend`."""

    def _args(self, race: str) -> list[Any]:
        s = self.settings
        burst = s.burst if s.rate_limited else 0
        return [race, burst, s.interval_ms or 1, s.per_address, s.ttl_ms, s.grace_ms]

    async def admit(self, client: str, race: str) -> None:
        """Reserve a creation of ``race`` for ``client``; raises :class:`Limited` (nothing written)."""
        s = self.settings
        if s.total > 0:
            kind, *rest = await self._reserve(keys=[OPEN_LOBBIES], args=[race, s.total, s.ttl_ms])
            if text(kind) != "ok":
                raise Limited(text(rest[0]), int(rest[1]))
        try:
            await self._admit_address(client, race)
        except BaseException:
            if s.total > 0:
                await self.redis.zrem(OPEN_LOBBIES, race)
            raise

    async def _admit_address(self, client: str, race: str) -> None:
        keys = list(creator_keys(client))
        reply = await self._admit(keys=keys, args=self._args(race))
        if text(reply[0]) != "ok" and text(reply[1]) == "too_many_lobbies":
            # At the cap as stored: drop the members that are no longer lobbies, and ask again.
            reply = await self._admit(keys=keys, args=self._args(race) + await self._closed(keys[1]))
        if text(reply[0]) != "ok":
            raise Limited(text(reply[1]), int(reply[2]))

    async def _closed(self, lobbies: str) -> list[str]:
        """``c <id>`` for each member of an address's lobby set that is no longer a lobby,
        ``m <id>`` for each whose race does not exist (yet, or any more)."""
        ids = [rid for rid in map(text, await self.redis.zrange(lobbies, 0, -1)) if not rid.startswith(SEEK_PLACE)]
        if not ids:
            return []
        statuses = await hget_each(self.redis, [Keys(rid).meta for rid in ids], "status")
        return [f"{'m' if st is None else 'c'} {rid}" for rid, st in zip(ids, statuses) if text(st) != "lobby"]

    async def release(self, client: str, race: str) -> None:
        """Give back the lobby places :meth:`admit` took for a race that was not created after all
        (the token stays spent)."""
        if self.settings.total > 0:
            await self.redis.zrem(OPEN_LOBBIES, race)
        await self._release(keys=list(creator_keys(client)), args=[race])

    async def spend(self, client: str) -> None:
        """Take one token of ``client``'s creation bucket for work that is not a lobby race (the first
        play of a daily deal); raises :class:`Limited` (nothing written)."""
        if wait_ms := await self._bucket.take(creator_keys(client)[0]):
            raise Limited("create_rate_limited", wait_ms)

    async def repair(self, lobbies: Iterable[str], now_ms: int) -> int:
        """Drop members of the open-lobby set that are past ``grace_ms`` and not in ``lobbies``
        (the ids the janitor just read as lobbies): races whose start or removal was not
        recorded there (a process died in between). How many were dropped."""
        if self.settings.total <= 0:
            return 0
        live = set(lobbies)
        old = await self.redis.zrangebyscore(OPEN_LOBBIES, "-inf", now_ms - self.settings.grace_ms,
                                             withscores=True)  # incl. expired
        young = now_ms - self.settings.ttl_ms  # a seek's place stays until its seek gives it back (or it expires)
        stale = [rid for rid, at in ((text(m), at) for m, at in old)
                 if rid not in live and not (rid.startswith(SEEK_PLACE) and at >= young)]
        if stale:
            await self.redis.zrem(OPEN_LOBBIES, *stale)
        return len(stale)


class Bucket:
    """A token bucket in Redis per key (``lib_bucket.lua``, Redis's clock): what registrations and
    organiser-token attempts of one client address spend from, over every server process."""

    def __init__(self, redis: Any, burst: int, interval_ms: int) -> None:
        self.redis = redis
        self.burst = burst
        self.interval_ms = max(1, interval_ms)
        self._take = register(redis, "take_token")
        self._give_back = register(redis, "give_back")

    async def take(self, key: str) -> int:
        """Take a token: 0, or (none left, nothing written) the milliseconds until one is back.
        A bucket of burst 0 never runs dry (no limit)."""
        if self.burst <= 0:
            return 0
        kind, *rest = await self._take(keys=[key], args=[self.burst, self.interval_ms])
        return 0 if text(kind) == "ok" else max(1, int(rest[0]))

    async def give_back(self, key: str) -> None:
        """Return a token taken for an attempt that turned out not to count (a bucket full again is
        removed: a refused registration, or a right organiser token, leaves Redis as it was)."""
        if self.burst > 0:
            await self._give_back(keys=[key], args=[self.burst])


async def close_lobbies(redis: Any, races: list[str]) -> None:
    """These races left the lobby (started, removed): they stop counting against the total."""
    if races:
        await redis.zrem(OPEN_LOBBIES, *races)


def retry_after(wait_ms: int) -> int:
    """Whole seconds for an HTTP ``Retry-After`` (at least 1)."""
    return max(1, math.ceil(wait_ms / 1000))
