"""The races in Redis: every read and every script call the race server makes (see the package doc)."""

from __future__ import annotations

import asyncio

import secrets
import time
from typing import Any

import redis.asyncio as aioredis

from shared.names import name_key

from ..ops.metrics import Timer
from .batcher import MoveBatcher, Settled
from .client import hget_each
from .keys import ACTIVE, RECENT, RECENT_KEPT, SECRET, Keys, checked_key, code_key, presence_member
from .limits import close_lobbies
from .pubsub import AccountHandler, NoteHandler, Subscriber
from .records import (SEALED, CommitResult, Event, HintRefused, Line, MoveCommit, PlayerState, RaceMeta, SeatClaim,
                      Seated, StoreError, decode_line, reply, text)
from .scripts import register


def _pairs(flat: list[bytes]) -> dict[bytes, bytes]:
    """A HGETALL reply as Lua returns it (a flat list) as a dict."""
    return dict(zip(flat[::2], flat[1::2]))


class Store:
    """Async access to races in one Redis, or a Redis Cluster (one slot per race)."""

    def __init__(self, redis: Any, tick_ms: int = 100, timer: Timer | None = None, probe: Any = None,
                 instance: str = "", linger: float = 0.0) -> None:
        self.redis = redis
        self.instance = instance
        """This process (its subscription's entries in the races' listening sets: server/store/pubsub.py)."""
        self.probe = probe if probe is not None else redis
        """A client that does not retry: one quick PING says whether Redis answers now."""
        self.down = False
        """Set when a command failed through all its retries; cleared by the next PING that answers."""
        self.tick_ms = tick_ms
        self.cluster = isinstance(redis, aioredis.RedisCluster)
        self.timer = timer
        self._create = register(redis, "create")
        self._join = register(redis, "join")
        self._ready = register(redis, "ready")
        self._start = register(redis, "start")
        self._give_up = register(redis, "give_up")
        self._hint_take = register(redis, "hint_take")
        self._hint_give = register(redis, "hint_give")
        self._presence = register(redis, "presence")
        self._heartbeat = register(redis, "heartbeat")
        self._end = register(redis, "end")
        self._abandon = register(redis, "abandon")
        self._read_lines = register(redis, "read_lines")
        self._announce = register(redis, "announce")
        self._read_player = register(redis, "read_player")
        self._checked_push = register(redis, "checked_push")
        self._leave = register(redis, "leave")
        self._free_stale = register(redis, "free_stale")
        self._unseal = register(redis, "unseal")
        self._moves = MoveBatcher(redis, register(redis, "moves"), tick_ms, self.cluster, timer, instance, linger)

    # ------------------------------------------------------------ setup
    def subscriber(self, on_note: NoteHandler, on_key_replaced: AccountHandler | None = None) -> Subscriber:
        """This process's pub/sub subscription; ``on_note(race, note)`` for each event heard,
        ``on_key_replaced(account, old_hash)`` for each account key replaced (once :meth:`Subscriber.listen_to_accounts`)."""
        return Subscriber(self.redis, on_note, on_key_replaced, self.instance)

    async def ping(self) -> bool:
        """One PING without retries (raises when Redis does not answer); an answer clears :attr:`down`."""
        started = time.perf_counter()
        ok = bool(await self.probe.ping())
        if self.timer is not None:
            self.timer("ping", time.perf_counter() - started)
        self.down = False
        return ok

    async def check_up(self) -> None:
        """While Redis is known to be down, fail at once unless a quick PING now answers.

        Why: every command retries with backoff for most of a second, and a
        connection's frames are handled in turn, so during an outage each
        queued frame would wait that long for its ``unavailable``. The PING
        costs nothing while Redis is up (it is skipped) and the first frame
        after Redis is back goes through normally.
        """
        if self.down:
            await self.ping()

    async def token_secret(self) -> bytes:
        """The shared HMAC secret: the first process to ask creates it."""
        await self.redis.set(SECRET, secrets.token_hex(32), nx=True)
        value = await self.redis.get(SECRET)
        assert value is not None
        return bytes(value)

    # ------------------------------------------------------------ races
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

    async def resolve(self, ref: str) -> str | None:
        """A race id from an id or a join code."""
        code = await self.redis.get(code_key(ref.upper()))
        if code is not None:
            return bytes(code).decode()
        if "{" in ref or "}" in ref:
            return None
        return ref if await self.redis.exists(Keys(ref).meta) else None

    async def announce(self, race: str) -> None:
        """Publish the race's note of its version now (for moves whose note the moves script held back:
        server/race/hub.py), in the moves' next round trip rather than a call of its own."""
        await self._moves.script_call(self._announce, [Keys(race).meta])

    async def meta(self, race: str) -> RaceMeta | None:
        raw = await self.redis.hgetall(Keys(race).meta)
        return RaceMeta.from_hash(raw) if raw else None

    async def active_ids(self) -> list[str]:
        """Ids of every race in the lobby or running (oldest first)."""
        return [bytes(rid).decode() for rid in await self.redis.zrange(ACTIVE, 0, -1)]

    async def metas(self, ids: list[str]) -> list[RaceMeta | None]:
        """The races' hashes in one round trip (None for a race that is gone)."""
        if not ids:
            return []
        async with self.redis.pipeline(transaction=False) as pipe:
            for rid in ids:
                pipe.hgetall(Keys(rid).meta)
            raws = await pipe.execute()
        return [RaceMeta.from_hash(r) if r else None for r in raws]

    async def versions(self, ids: list[str]) -> list[int | None]:
        """Each race's version in one round trip (None for a race that is gone)."""
        raws = await hget_each(self.redis, [Keys(rid).meta for rid in ids], "version")
        return [int(v) if v is not None else None for v in raws]

    async def active_races(self, limit: int = 200) -> list[RaceMeta]:
        ids = [bytes(rid).decode() for rid in await self.redis.zrange(ACTIVE, 0, limit - 1)]
        return [m for m in await self.metas(ids) if m is not None]

    async def forget(self, race: str) -> None:
        """Drop a race that no longer exists from the active set."""
        await self.redis.zrem(ACTIVE, race)
        await close_lobbies(self.redis, [race])

    async def active_count(self) -> int:
        return int(await self.redis.zcard(ACTIVE))

    async def lines(self, race: str) -> tuple[int, list[Line]]:
        """The race version and every player's progress line, read together."""
        k = Keys(race)
        started = time.perf_counter()
        version, flat = await self._moves.script_call(self._read_lines, [k.meta, k.progress])
        if self.timer is not None:
            self.timer("lines", time.perf_counter() - started)
        raw = _pairs(flat)
        lines = sorted((decode_line(int(s), b) for s, b in raw.items()), key=lambda line: line.seat)
        return int(version or 0), lines

    async def player(self, race: str, seat: int) -> PlayerState | None:
        """A player's stored state and whole move log, read together."""
        k = Keys(race)
        flat, log = await self._read_player(keys=[k.player(seat), k.log(seat)])
        if not flat:
            return None
        return PlayerState.from_reply(seat, {a.decode(): b.decode() for a, b in _pairs(flat).items()}, log)

    async def results(self, race: str) -> bytes | None:
        value = await self.redis.get(Keys(race).results)
        return bytes(value) if value is not None else None

    async def history(self, race: str, after: int, upto: int) -> list[Event] | None:
        """The events after version ``after`` up to ``upto``, or None when the history
        no longer reaches back that far (the cap trimmed the gap)."""
        if after >= upto:
            return []
        entries = await self.redis.xrange(Keys(race).history, f"{after + 1}-1", f"{upto}-1")
        if not entries or int(bytes(entries[0][0]).split(b"-")[0]) != after + 1:
            return None
        out = []
        for entry_id, f in entries:
            old = f.get(b"o")
            seat = int(f[b"s"])
            out.append(Event(int(bytes(entry_id).split(b"-")[0]), f[b"k"].decode(), seat,
                             decode_line(seat, old) if old else None))
        return out

    # ------------------------------------------------------- the scripts
    async def join(self, race: str, name: str, home0: int, connection: str, expiry: int, now: int,
                   account: str | None = None) -> Seated:
        """Take a seat holding a presence lease for ``connection``; raises :class:`StoreError`.

        The seat is the lowest one given back in the lobby, else the next; or, for an ``account``
        that holds a seat in the race already, that seat (in the lobby or later: ``again``).
        """
        k = Keys(race)
        kind, rest = reply(await self._join(
            keys=k.seats(), args=[name, name_key(name), home0, k.chan, connection, expiry, account or "", now]))
        if kind != "ok":
            raise StoreError(rest[0])
        return Seated(int(rest[0]), int(rest[1]), int(rest[2]), rest[3] == "again")

    async def seat(self, race: str, seat: int) -> SeatClaim | None:
        """Who holds a seat now (its generation, status and account), None for no such seat."""
        gen, status, account = await self.redis.hmget(Keys(race).player(seat), "gen", "status", "account")
        if status is None:
            return None
        return SeatClaim(int(gen or 0), text(status), text(account) if account else None)

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
        kind, rest = reply(await self._start(keys=[k.meta, k.history], args=[now, countdown_ms, k.chan]))
        if kind != "ok":
            raise StoreError(rest[0])
        await close_lobbies(self.redis, [race])
        return int(rest[0])

    def commit_move(self, race: str, commit: MoveCommit, *,
                    then: Settled | None = None) -> "asyncio.Future[CommitResult]":
        """Append one validated move (``commit.status``: the player's after it: racing, blocked, finished).

        Raises :class:`StoreError` when the race or the player refuses it
        (race over, player finished, a stale ``seq``). Returns the batcher's future (await it, or
        have ``then`` called with it as soon as it is done: see :meth:`MoveBatcher.call`).
        """
        return self._moves.call(race, commit, then)

    async def give_up(self, race: str, seat: int, now: int) -> tuple[int, bool]:
        k = Keys(race)
        kind, rest = reply(await self._give_up(
            keys=[k.meta, k.player(seat), k.progress, k.history], args=[seat, now, k.chan]
        ))
        if kind != "ok":
            raise StoreError(rest[0])
        return int(rest[0]), bool(rest[1])

    async def take_hint(self, race: str, seat: int, now: int, interval_ms: int) -> tuple[int, str | None]:
        """Reserve a hint for the seat (rate limit, race and player checks):
        ``(log length, the previous hint's JSON or None)``; raises :class:`HintRefused`."""
        k = Keys(race)
        kind, rest = reply(await self._hint_take(keys=[k.meta, k.player(seat), k.hint(seat)],
                                                  args=[now, interval_ms]))
        if kind != "ok":
            raise HintRefused(rest[0], int(rest[1]) if len(rest) > 1 else 0)
        return int(rest[0]), rest[1] or None

    async def give_hint(self, race: str, seat: int, hint_json: str, now: int) -> int:
        """Keep the hint for the next one and mark the player helped; the race version."""
        k = Keys(race)
        kind, rest = reply(await self._hint_give(
            keys=[k.meta, k.player(seat), k.progress, k.history, k.hint(seat)],
            args=[seat, hint_json, now, k.chan],
        ))
        if kind != "ok":
            raise StoreError(rest[0])
        return int(rest[0])

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
        """Close the race and store its results once; ``(ended_now, version)``."""
        k = Keys(meta.id)
        every = k.every(meta.players)
        rest_keys = [key for key in every if key not in (k.meta, k.history, k.results)]
        kind, rest = reply(await self._end(
            keys=[k.meta, k.history, k.results, *rest_keys], args=[now, results, k.chan, retention]
        ))
        if kind == "err":
            raise StoreError(rest[0])
        await self.redis.zrem(ACTIVE, meta.id)
        await self.redis.expire(code_key(meta.code), retention)
        await self.redis.zadd(RECENT, {meta.id: now})
        await self.redis.zremrangebyrank(RECENT, 0, -RECENT_KEPT - 1)
        return kind == "ok", int(rest[0])

    async def unseal(self, races: list[str]) -> int:
        """Reveal the sealed ones of ``races`` (as any race is at its end); how many were still sealed.

        Idempotent and one small script per race (a race's keys share its own hash tag, so a multi-race
        script would not run on a cluster): a caller that dies half-way is finished by calling again."""
        unsealed = 0
        for race in races:
            unsealed += int(await self._unseal(keys=[Keys(race).meta], args=[SEALED]))
        return unsealed

    async def recent_races(self, limit: int = 20) -> list[RaceMeta]:
        """The latest finished races still kept (newest first)."""
        ids = [bytes(rid).decode() for rid in await self.redis.zrevrange(RECENT, 0, limit - 1)]
        return [m for m in await self.metas(ids) if m is not None and m.status == "finished"]

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

    # ---------------------------------------------------- checked deals
    async def checked_push(self, variant: str, entry: str, target: int) -> int:
        """Add a checked deal unless the pool holds ``target`` already: the new depth, or -1."""
        return int(await self._checked_push(keys=[checked_key(variant)], args=[target, entry]))

    async def checked_pop(self, variant: str) -> bytes | None:
        """Take the oldest checked deal (atomic: two callers never get the same one)."""
        raw = await self.redis.lpop(checked_key(variant))
        return bytes(raw) if raw is not None else None

    async def checked_depths(self, variants: list[str]) -> dict[str, int]:
        """How many checked deals each variant's pool holds, in one round trip."""
        if not variants:
            return {}
        async with self.redis.pipeline(transaction=False) as pipe:
            for variant in variants:
                pipe.llen(checked_key(variant))
            depths = await pipe.execute()
        return {v: int(n) for v, n in zip(variants, depths)}

    async def snapshot(self, race: str) -> dict[str, Any]:
        """Every key of a race, dumped; tests compare two of these to prove nothing changed."""
        k = Keys(race)
        meta = await self.meta(race)
        out: dict[str, Any] = {"meta": await self.redis.hgetall(k.meta)}
        out["names"] = await self.redis.hgetall(k.names)
        out["progress"] = await self.redis.hgetall(k.progress)
        out["history"] = await self.redis.xlen(k.history)
        out["results"] = await self.redis.get(k.results)
        for seat in range(meta.players if meta else 0):
            out[f"p{seat}"] = await self.redis.hgetall(k.player(seat))
            out[f"log{seat}"] = await self.redis.lrange(k.log(seat), 0, -1)
            out[f"hint{seat}"] = await self.redis.get(k.hint(seat))
        return out
