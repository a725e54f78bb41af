"""The races' store's reads: a race by id or code, its hash, its lines, a player, its history, the
active and recent races. None of these writes (:meth:`RaceReads.lines` goes through the move batcher, to
share the moves' round trip)."""

from __future__ import annotations

import time
from typing import Any

from .client import hget_each
from .keys import ACTIVE, RECENT, Keys, code_key
from .race_base import RaceStoreBase
from .records import Event, Line, PlayerState, RaceMeta, SeatClaim, decode_line, text


def _pairs(flat: list[bytes]) -> dict[bytes, bytes]:
    """A HGETALL reply as Lua returns it (a flat list) as a dict."""
    return dict(zip(flat[::2], flat[1::2]))


class RaceReads(RaceStoreBase):
    """Reading races (their hashes, lines, players and history)."""

    async def resolve(self, ref: str) -> str | None:
        """A race id from an id or a join code."""
        code = await self.redis.get(code_key(ref.upper()))
        if code is not None:
            return bytes(code).decode()
        if "{" in ref or "}" in ref:
            return None
        return ref if await self.redis.exists(Keys(ref).meta) else None

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

    async def active_count(self) -> int:
        return int(await self.redis.zcard(ACTIVE))

    async def recent_races(self, limit: int = 20) -> list[RaceMeta]:
        """The latest finished races still kept (newest first)."""
        ids = [bytes(rid).decode() for rid in await self.redis.zrevrange(RECENT, 0, limit - 1)]
        return [m for m in await self.metas(ids) if m is not None and m.status == "finished"]

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

    async def seat(self, race: str, seat: int) -> SeatClaim | None:
        """Who holds a seat now (its generation, status and account), None for no such seat."""
        gen, status, account = await self.redis.hmget(Keys(race).player(seat), "gen", "status", "account")
        if status is None:
            return None
        return SeatClaim(int(gen or 0), text(status), text(account) if account else None)

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
