"""Seek pools in Redis (the layout: keys.SeekKeys). Every script touches one pool's keys (one hash tag,
one cluster slot); a player's one-seek lock and no-show count are single-key commands in its own slot.

Why a player's lock is outside its pool: a player may seek any pool, but only one at a time, and the
pools live in different slots. The lock is taken (``SET NX``) before the seek enters its pool and given
back after it has left it (cancelled, dropped, or its race settled), so a player is never in two pools,
and since a group leaves its pool in the one script that places it (seek_match.lua, which a cancel
cannot interleave with), never in two races from seeks.
"""

from __future__ import annotations

from typing import Any, Union

import msgspec

from shared import protocol as p

from .keys import SEEK_POOLS, SeekKeys, seek_places_key, seeker_key, shy_key
from .records import FormedRace, SeekEntry, text
from .scripts import register

SHY_SECONDS = 3600
"""How long a no-show keeps a player among the shy (paired only with other no-shows)."""
LOCK_MS = 6 * 3600 * 1000
"""Longest a player's seek lock can outlive its seek (a process that died holding it): six hours."""

_entry = msgspec.msgpack.Decoder(SeekEntry)
_formed = msgspec.msgpack.Decoder(FormedRace)
_matched = msgspec.msgpack.Decoder(p.Matched)
_enc = msgspec.msgpack.Encoder()

Status = tuple[bool, Union[p.Matched, None]]
"""A seek's state: whether it still waits, and its match if it has one."""


def _states(waits: list[Any], gots: list[Any]) -> list[Status]:
    return [(w is not None, _matched.decode(g) if g is not None else None) for w, g in zip(waits, gots)]


def _lock_parts(value: str) -> tuple[str, str, str]:
    """A player's lock, ``POOL SEEK [CLIENT]`` (a pool's name has no space; the address is last)."""
    pool, _, rest = value.partition(" ")
    seek, _, client = rest.partition(" ")
    return pool, seek, client


class SeekStore:
    """The seek pools, shared by every server process."""

    def __init__(self, redis: Any) -> None:
        self.redis = redis
        self._add = register(redis, "seek_add")
        self._cancel = register(redis, "seek_cancel")
        self._claim = register(redis, "seek_claim")
        self._match = register(redis, "seek_match")
        self._settle = register(redis, "seek_settle")
        self._drop_dead = register(redis, "seek_drop_dead")
        self._wave_done = register(redis, "seek_wave_done")
        self._resume = register(redis, "seek_resume")
        self._enter = register(redis, "seek_pools")
        self._census = register(redis, "seek_census")

    # ------------------------------------------------------------ a player
    async def lock(self, who: str, pool: str, seek: str, client: str = "") -> bool:
        """Take the player's one seek; False when it has one already (anywhere). ``client``: the address
        the seek counts against, kept so that a lock its dead process left can give its places back."""
        value = f"{pool} {seek} {client}" if client else f"{pool} {seek}"
        return bool(await self.redis.set(seeker_key(who), value, nx=True, px=LOCK_MS))

    async def held(self, who: str) -> tuple[str, str, str] | None:
        """The pool, id and address ("" if not named) of the seek the player's lock names (None: it has
        none)."""
        held = await self.redis.get(seeker_key(who))
        if held is None:
            return None
        return _lock_parts(text(held))

    async def lock_age(self, who: str) -> int:
        """Milliseconds since the player's lock was taken (0 without one)."""
        left = int(await self.redis.pttl(seeker_key(who)))
        return LOCK_MS - left if left > 0 else 0

    async def unlock(self, who: str, seek: str) -> None:
        """Give the player's lock back if it is still this seek's."""
        held = await self.redis.get(seeker_key(who))
        if held is not None and _lock_parts(text(held))[1] == seek:
            await self.redis.delete(seeker_key(who))

    # ------------------------------------------------------------ an address
    async def enter(self, client: str, seek: str, pool: str, cap: int) -> list[str]:
        """Count the seek among its address's: [] when done; else (refused, nothing written) the pools the
        address waits in already, ``cap`` of them (0: no cap) and ``pool`` not one."""
        reply = await self._enter(keys=[seek_places_key(client)], args=[seek, pool, cap, LOCK_MS])
        return sorted(text(x) for x in reply) if isinstance(reply, list) else []

    async def leave(self, client: str, seek: str) -> None:
        """The seek is over: it no longer counts among its address's (twice is once)."""
        await self.redis.hdel(seek_places_key(client), seek)

    async def shy(self, who: str) -> int:
        """Races formed from the player's seeks it did not come to, lately."""
        return int(await self.redis.get(shy_key(who)) or 0)

    async def mark_shy(self, who: str) -> int:
        key = shy_key(who)
        count = int(await self.redis.incr(key))
        await self.redis.expire(key, SHY_SECONDS)
        return count

    # ------------------------------------------------------------- a pool
    async def add(self, pool: str, entry: SeekEntry, alive_until: int) -> int:
        """Put a seek in its pool; how many wait there now. The pool is listed after the entry is in it
        (see :meth:`drop_if_idle`)."""
        k = SeekKeys(pool)
        count = int(await self._add(keys=[k.q, k.alive], args=[entry.id, _enc.encode(entry), alive_until]))
        await self.redis.sadd(SEEK_POOLS, pool)
        return count

    async def drop_if_idle(self, pool: str) -> bool:
        """Take a pool nobody waits in and no race is forming from off the list (so that the waves and
        ``GET /seeks`` go over the pools in use only, however many clocks players asked for once).

        A seek entering meanwhile is never lost: it lists its pool after its entry is in, and this
        looks at the entries again after unlisting (and lists the pool back if one came)."""
        k = SeekKeys(pool)
        if await self.redis.hlen(k.q) or await self.redis.zcard(k.formed):
            return False
        await self.redis.srem(SEEK_POOLS, pool)
        if await self.redis.hlen(k.q):
            await self.redis.sadd(SEEK_POOLS, pool)
            return False
        return True

    async def cancel(self, pool: str, seek: str) -> tuple[str, p.Matched | None]:
        """``("cancelled", None)``, ``("matched", its match)`` (too late) or ``("gone", None)``."""
        k = SeekKeys(pool)
        reply = await self._cancel(keys=[k.q, k.alive, k.got], args=[seek])
        kind = text(reply[0])
        return kind, _matched.decode(reply[1]) if kind == "matched" else None

    async def look(self, held: dict[str, list[str]], until: int) -> dict[str, tuple[list[str], list[Status]]]:
        """Vouch for these seeks (pool -> seek ids: their connections are alive until ``until``; only seeks
        still waiting or placed are touched) and read each one's state (:data:`Status`): every pool in one
        round trip (a process polls its seeks five times a second, and a round trip or two per pool each
        time was most of what a few lone seeks in many pools cost)."""
        pools = [(pool, ids) for pool, ids in held.items() if ids]
        if not pools:
            return {}
        async with self.redis.pipeline(transaction=False) as pipe:
            for pool, ids in pools:
                k = SeekKeys(pool)
                pipe.zadd(k.alive, {s: until for s in ids}, xx=True)
                pipe.hmget(k.q, ids)
                pipe.hmget(k.got, ids)
            replies = await pipe.execute()
        return {pool: (ids, _states(replies[3 * i + 1], replies[3 * i + 2])) for i, (pool, ids) in enumerate(pools)}

    async def absent(self, pool: str, seek: str) -> None:
        """Nobody vouches for the seek any more (its connection closed after it was placed): its player may
        take it over at once (:meth:`resume`), and if its race's partner does not come it is dropped."""
        await self.redis.zrem(SeekKeys(pool).alive, seek)

    async def present(self, pool: str, since: int) -> set[str]:
        """The seeks whose connection vouched for them lately (liveness at or above ``since``)."""
        return {text(s) for s in await self.redis.zrangebyscore(SeekKeys(pool).alive, since, "+inf")}

    async def resume(self, pool: str, seek: str, alive_until: int, present_since: int,
                     take_over: bool = True) -> tuple[str, SeekEntry | None, p.Matched | None]:
        """Take over a seek nobody vouches for any more: ``("waiting", its entry, None)``, ``("matched",
        its entry, its match)``, ``("held", None, None)`` (a connection vouches for it lately, or
        ``take_over`` is False and it still exists) or ``("gone", None, None)`` (not in the pool: it
        ended, or it is being added)."""
        k = SeekKeys(pool)
        reply = await self._resume(keys=[k.q, k.alive, k.got],
                                   args=[seek, alive_until, present_since, 1 if take_over else 0])
        kind = text(reply[0])
        if kind == "waiting":
            return kind, _entry.decode(reply[1]), None
        if kind == "matched":
            matched = _matched.decode(reply[1])
            blob = await self.redis.hget(k.races, matched.race)
            members = _formed.decode(blob).members if blob is not None else []
            entry = next((m for m in members if m.id == seek), None)
            return (kind, entry, matched) if entry is not None else ("gone", None, None)
        return kind, None, None

    async def pools(self) -> list[str]:
        """The pools in use (a seek waits, or a race forms; see :meth:`drop_if_idle`)."""
        return sorted(text(x) for x in await self.redis.smembers(SEEK_POOLS))

    async def waiting_counts(self, pools: list[str]) -> list[int]:
        """How many wait in each pool (one round trip)."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for pool in pools:
                pipe.hlen(SeekKeys(pool).q)
            return [int(n) for n in await pipe.execute()]

    async def census(self, pool: str, now: int) -> tuple[int, int, int]:
        """How many seeks wait in the pool, races form from it, and seeks wait that nobody vouched for
        lately (one round trip): a wave that finds too few to form a race, nothing to settle and nothing
        to drop is done (a pool where one player waits costs this, not a pairing). A script, not a
        pipeline: a third of the cost in the client."""
        k = SeekKeys(pool)
        waiting, forming, dead = await self._census(keys=[k.q, k.formed, k.alive], args=[now])
        return int(waiting), int(forming), int(dead)

    async def waiting(self, pool: str) -> list[SeekEntry]:
        return [_entry.decode(v) for v in (await self.redis.hgetall(SeekKeys(pool).q)).values()]

    async def claim_wave(self, pool: str, wave: int, ttl_ms: int, token: str) -> bool:
        """Whether this caller pairs wave number ``wave`` of the pool (exactly one caller does, and none
        while another's pairing still holds the pool: a lease of ``ttl_ms`` named ``token``, renewed by each
        placement and given back by :meth:`wave_done`)."""
        k = SeekKeys(pool)
        return bool(await self._claim(keys=[k.wave, k.pairing], args=[wave, ttl_ms, token]))

    async def wave_done(self, pool: str, token: str) -> None:
        """Give back the pool's pairing lease (if it is still this caller's)."""
        await self._wave_done(keys=[SeekKeys(pool).pairing], args=[token])

    async def drop_dead(self, pool: str, now: int) -> list[SeekEntry]:
        """The seeks nobody vouched for lately, out of the pool."""
        k = SeekKeys(pool)
        return [_entry.decode(e) for e in await self._drop_dead(keys=[k.q, k.alive], args=[now])]

    async def match(self, pool: str, formed: FormedRace, deadline: int, matches: list[p.Matched], token: str,
                    ttl_ms: int) -> int:
        """Place a group in its race if the caller's pairing lease ``token`` still holds the pool (-1 if not)
        and every member still waits (0: one cancelled); 1 when placed (the lease renewed for ``ttl_ms``)."""
        k = SeekKeys(pool)
        args: list[Any] = [formed.race, deadline, _enc.encode(formed), token, ttl_ms]
        for member, matched in zip(formed.members, matches):
            args += [member.id, _enc.encode(matched)]
        return int(await self._match(keys=[*k.all(), k.pairing], args=args))

    async def formed(self, pool: str, now: int | None = None) -> list[tuple[FormedRace, int]]:
        """The pool's formed races not yet settled, with their join deadlines."""
        k = SeekKeys(pool)
        pairs = await self.redis.zrange(k.formed, 0, -1, withscores=True)
        if not pairs:
            return []
        blobs = await self.redis.hmget(k.races, [text(r) for r, _ in pairs])
        return [(_formed.decode(b), int(d)) for (_, d), b in zip(pairs, blobs) if b is not None]

    async def settle(self, pool: str, formed: FormedRace, back: list[SeekEntry], now: int) -> bool:
        """Settle a formed race once: its matches go, the members in ``back`` wait again (those nobody
        vouches for any more only until the next wave drops them)."""
        k = SeekKeys(pool)
        args: list[Any] = [formed.race, now, *(m.id for m in formed.members), "|"]
        for entry in back:
            args += [entry.id, _enc.encode(entry)]
        return bool(await self._settle(keys=k.all(), args=args))
