"""The races' store's life cycle: a race made, its seats taken and given back, readied, started, the
players' presence, and the race ended, abandoned or unsealed (one script each: see the package doc)."""

from __future__ import annotations

from shared.names import name_key

from .keys import ACTIVE, RECENT, RECENT_KEPT, Keys, code_key, presence_member
from .limits import close_lobbies
from .race_base import RaceStoreBase
from .records import SEALED, RaceMeta, Seated, StoreError, reply


class RaceLifecycle(RaceStoreBase):
    """A race from its creation to its end: seats, readiness, start, presence, end."""

    async def create_race(self, meta: RaceMeta) -> bool:
        """Store a new race; False if its id or join code is taken (pick another)."""
        taken = not await self.redis.set(code_key(meta.code), meta.id, nx=True)
        if taken and await self.redis.get(code_key(meta.code)) != meta.id.encode():
            return False  # (the code is ours when a retried SET met its own first write)
        kind, _ = reply(await self._create(keys=[Keys(meta.id).meta], args=[meta.code, *meta.hash_fields()]))
        if kind != "ok":
            await self.redis.delete(code_key(meta.code))
            return False
        await self.redis.zadd(ACTIVE, {meta.id: meta.created_at})
        return True

    async def forget(self, race: str) -> None:
        """Drop a race that no longer exists from the active set."""
        await self.redis.zrem(ACTIVE, race)
        await close_lobbies(self.redis, [race])

    async def join(self, race: str, name: str, home0: int, connection: str, expiry: int, now: int,
                   account: str | None = None, join_id: str | None = None) -> Seated:
        """Take a seat holding a presence lease for ``connection``; raises :class:`StoreError`.

        The seat is the lowest one given back in the lobby, else the next; or, for an ``account``
        that holds a seat in the race already, that seat (in the lobby or later: ``again``); or the
        seat an earlier call with this ``join_id`` (and name and account) took: why, a join stored
        whose answer was lost (Redis failing before the welcome) is found again by its retry, not
        refused as ``name_taken`` while its seat waits for a player who never got its token.
        """
        k = Keys(race)
        kind, rest = reply(await self._join(
            keys=k.seats(), args=[name, name_key(name), home0, k.chan, connection, expiry, account or "", now,
                                  join_id or ""]))
        if kind != "ok":
            raise StoreError(rest[0])
        await self.replicas.confirm(self.redis, k.meta)
        return Seated(int(rest[0]), int(rest[1]), int(rest[2]), rest[3] == "again")

    async def leave(self, race: str, seat: int, gen: int) -> int:
        """Give a lobby seat back (its line, name, tokens and leases go); the race version."""
        k = Keys(race)
        kind, rest = reply(await self._leave(keys=k.seats(), args=[seat, gen, k.chan]))
        if kind != "ok":
            raise StoreError(rest[0])
        return int(rest[0])

    async def free_stale(self, race: str, now: int, lease_ms: int) -> int:
        """Free the lobby seats whose every connection has been gone for ``lease_ms``; how many."""
        k = Keys(race)
        return int(await self._free_stale(keys=k.seats(), args=[now, lease_ms, k.chan]))

    async def ready(self, race: str, seat: int, gen: int, ready: bool, now: int, countdown_ms: int) -> int:
        """Mark the seat (of generation ``gen``: ``seat_left`` otherwise) ready or not; the race version."""
        k = Keys(race)
        kind, rest = reply(await self._ready(
            keys=[k.meta, k.player(seat), k.progress, k.history],
            args=[seat, int(ready), now, countdown_ms, k.chan, gen],
        ))
        if kind != "ok":
            raise StoreError(rest[0])
        if len(rest) > 1 and rest[1]:  # the last ready started the race
            await close_lobbies(self.redis, [race])
        return int(rest[0])

    async def start(self, race: str, now: int, countdown_ms: int) -> int:
        k = Keys(race)
        kind, rest = reply(await self._start(keys=k.seats(), args=[now, countdown_ms, k.chan]))
        if kind != "ok":
            raise StoreError(rest[0])
        await close_lobbies(self.redis, [race])
        return int(rest[0])

    async def welcomed(self, race: str, seat: int, gen: int) -> bool:
        """Mark the seat (of generation ``gen``) as answered: its welcome and token go out next, so the
        start counts it as come even while it has no connection. False if marked already, or given
        back since. Why a mark: a join stored whose answer was lost (Redis failing in between) holds a
        seat nobody has the token of; the start gives such seats back (start.lua)."""
        return bool(await self._welcomed(keys=[Keys(race).player(seat)], args=[gen]))

    async def presence(self, race: str, seat: int, gen: int, member: str, online: bool, expiry: int,
                       now: int) -> int:
        """Take (``online``) or drop one connection's presence lease on a seat; the race version."""
        k = Keys(race)
        kind, rest = reply(await self._presence(
            keys=[k.meta, k.progress, k.history, k.presence],
            args=["+" if online else "-", seat, presence_member(seat, gen, member), expiry, now, k.chan],
        ))
        if kind != "ok":
            raise StoreError(rest[0])
        return int(rest[0])

    async def heartbeat(self, race: str, members: list[tuple[int, int, str]], expiry: int, now: int,
                        lease_ms: int) -> None:
        """Renew this process's leases (seat, generation, connection) on a race, expire those nobody
        renews, and free the lobby seats whose connections have been gone for ``lease_ms``."""
        k = Keys(race)
        await self._moves.script_call(self._heartbeat, k.seats(),
                                      [expiry, now, k.chan, lease_ms, *(presence_member(*m) for m in members)])

    async def end(self, meta: RaceMeta, now: int, results: bytes, retention: int) -> tuple[bool, int]:
        """Close the race and store its results once, then list it as ended (:meth:`ended`);
        ``(ended_now, version)``. Idempotent: a call after one that failed partway finishes what it left."""
        k = Keys(meta.id)
        every = k.every(meta.players)
        rest_keys = [key for key in every if key not in (k.meta, k.history, k.results)]
        kind, rest = reply(await self._end(
            keys=[k.meta, k.history, k.results, *rest_keys], args=[now, results, k.chan, retention]
        ))
        if kind == "err":
            raise StoreError(rest[0])
        if kind == "ok":
            await self._after_end(meta, now, retention)
        else:
            await self.ended(meta, meta.ended_at or now, retention)
        await self.replicas.confirm(self.redis, k.meta)
        return kind == "ok", int(rest[0])

    async def ended(self, meta: RaceMeta, ended_at: int, retention: int) -> bool:
        """Finish the end of a race whose end script ran: the steps after it, unless they are all done
        (the race has left the active set, their last); whether there was anything to do."""
        if await self.redis.zscore(ACTIVE, meta.id) is None:
            return False
        await self._after_end(meta, ended_at, retention)
        return True

    async def _after_end(self, meta: RaceMeta, ended_at: int, retention: int) -> None:
        """The steps of an end after its script (the race's keys are in its hash tag; these keys are not,
        so they cannot be in the script on a Redis Cluster): the race listed among the finished, its join
        code expiring with its results, and last its leaving the active set.

        Why this order, and each step idempotent: a process that fails partway (Redis gone) leaves the
        race active, so the next call of :meth:`ended` (the janitor's sweep finds the race finished and
        still active) finishes it; the code's expiry is a time (``ended_at`` + ``retention``), the same
        however often it is set."""
        await self.redis.zadd(RECENT, {meta.id: ended_at})
        await self.redis.zremrangebyrank(RECENT, 0, -RECENT_KEPT - 1)
        await self.redis.expireat(code_key(meta.code), ended_at // 1000 + retention)
        await self.redis.zrem(ACTIVE, meta.id)

    async def abandon(self, meta: RaceMeta, now: int, lobby_ttl_ms: int) -> bool:
        """Delete a lobby race older than the lobby TTL; False if it started, grew or is young."""
        k = Keys(meta.id)
        kind, rest = reply(await self._abandon(keys=k.every(meta.players),
                                                args=[now, lobby_ttl_ms, meta.players, k.chan]))
        if kind != "ok":
            return False
        await self.redis.zrem(ACTIVE, meta.id)
        await close_lobbies(self.redis, [meta.id])
        await self.redis.delete(code_key(meta.code))
        return True

    async def unseal(self, races: list[str]) -> int:
        """Reveal the sealed ones of ``races`` (as any race is at its end); how many were still sealed.

        Idempotent and one small script per race (a race's keys share its own hash tag, so a multi-race
        script would not run on a cluster): a caller that dies half-way is finished by calling again."""
        unsealed = 0
        for race in races:
            unsealed += int(await self._unseal(keys=[Keys(race).meta], args=[SEALED]))
        return unsealed
