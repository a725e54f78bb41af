"""Everything the server keeps in Redis: key names, Lua scripts, reads.

Nothing else in the project speaks Redis. Layout (``{ID}`` is a hash tag,
so one race's keys share a cluster slot and a script never touches two
races)::

    race:{ID}              hash   the race: settings, status, times, version,
                                  the secret deal and salt, counters
    race:{ID}:names        hash   lower-cased player name -> seat
    race:{ID}:p:SEAT       hash   a player: name, status, seq, n (log length),
                                  home, moves, home_at, finished_at, online
    race:{ID}:log:SEAT     list   the player's moves in notation, "U" = undo
    race:{ID}:progress     hash   seat -> msgpack [name, status, home, moves,
                                  home_at, finished_at, online] (one read
                                  gives the whole progress table)
    race:{ID}:events       stream every event: v=version k=kind s=seat d=data
                                  (capped; issue 4 replays it on reconnect)
    race:{ID}:results      string msgpack Results once the race is over
    race:{ID}:tick         string exists for 1/progress_hz s after a move was
                                  announced (throttles pub/sub for moves)
    code:{CODE}            string join code -> race id
    races:active           zset   ids of races in lobby or running
    thieves:secret         string the generated token secret

Pub/sub: channel ``race:{ID}:chan`` carries ``"<version> <kind>"`` after
every event (moves: at most one per progress tick), so each server process
refreshes its own connections.

Moves are committed through :class:`MoveBatcher`: the moves that come in
while one round trip is under way go together in the next one, one script
call per race, all in one pipeline (each move still checked and applied
atomically, in arrival order).

Why an append-only move log and no state blob: a move appends a few
bytes instead of rewriting a whole game, which keeps the append-only file
small; a game is rebuilt by replaying its log on the deal (a few hundred
moves take well under a millisecond), and that replay keeps the undo
history that a position snapshot would lose. Every write of a move, its
event, its progress line and the race version happens in one script that
first checks the log length the server validated against, so two
processes serving one player can never both apply a move.
"""

from __future__ import annotations

import asyncio
import secrets
from dataclasses import dataclass
from typing import Any

import msgspec
import redis.asyncio as aioredis

from .standings import Line

EVENTS_MAX = 1000

# Shared Lua: bump the version, log the event, tell every process.
_LUA_PRELUDE = r"""
local function log_event(meta, events, kind, seat, data)
  local v = redis.call('HINCRBY', meta, 'version', 1)
  redis.call('XADD', events, 'MAXLEN', '~', 1000, '*', 'v', v, 'k', kind, 's', seat, 'd', data)
  return v
end
local function emit(meta, events, chan, kind, seat, data)
  local v = log_event(meta, events, kind, seat, data)
  redis.call('PUBLISH', chan, v .. ' ' .. kind)
  return v
end
local function write_progress(progress, pkey, seat)
  local f = redis.call('HMGET', pkey, 'name', 'status', 'home', 'moves', 'home_at', 'finished_at', 'online')
  redis.call('HSET', progress, seat, cmsgpack.pack({f[1], f[2], tonumber(f[3]), tonumber(f[4]),
    tonumber(f[5]), tonumber(f[6]), tonumber(f[7])}))
end
local function start_race(meta, events, chan, now, countdown)
  local tl = tonumber(redis.call('HGET', meta, 'time_limit'))
  local starts = now + countdown
  redis.call('HSET', meta, 'status', 'started', 'starts_at', starts, 'ends_at', starts + tl * 1000)
  return emit(meta, events, chan, 'start', -1, starts)
end
"""

# KEYS: meta. ARGV: field, value, ...
_CREATE = r"""
if redis.call('EXISTS', KEYS[1]) == 1 then return {'err', 'exists'} end
redis.call('HSET', KEYS[1], unpack(ARGV))
return {'ok', 0}
"""

# KEYS: meta, names, pkey, progress, events. ARGV: seat, name, name_key, home0, chan
_JOIN = r"""
local m = redis.call('HMGET', KEYS[1], 'status', 'players', 'seats')
if not m[1] then return {'err', 'race_not_found'} end
if m[1] ~= 'lobby' then return {'err', 'race_closed'} end
local players, seats = tonumber(m[2]), tonumber(m[3])
if players >= seats then return {'err', 'race_full'} end
if players ~= tonumber(ARGV[1]) then return {'retry', players} end
if redis.call('HSETNX', KEYS[2], ARGV[3], ARGV[1]) == 0 then return {'err', 'name_taken'} end
redis.call('HSET', KEYS[3], 'name', ARGV[2], 'status', 'waiting', 'seq', 0, 'n', 0, 'home', ARGV[4],
  'moves', 0, 'home_at', 0, 'finished_at', 0, 'online', 1)
redis.call('HINCRBY', KEYS[1], 'players', 1)
write_progress(KEYS[4], KEYS[3], ARGV[1])
return {'ok', emit(KEYS[1], KEYS[5], ARGV[5], 'join', ARGV[1], ARGV[2])}
"""

# KEYS: meta, pkey, progress, events. ARGV: seat, ready(0/1), now, countdown_ms, chan
_READY = r"""
local m = redis.call('HMGET', KEYS[1], 'status', 'start_mode', 'players', 'seats')
if not m[1] then return {'err', 'race_not_found'} end
if m[1] ~= 'lobby' then return {'err', 'race_closed'} end
local want = (ARGV[2] == '1') and 'ready' or 'waiting'
local st = redis.call('HGET', KEYS[2], 'status')
if st == want then return {'ok', tonumber(redis.call('HGET', KEYS[1], 'version'))} end
redis.call('HSET', KEYS[2], 'status', want)
local readies = redis.call('HINCRBY', KEYS[1], 'ready_count', (want == 'ready') and 1 or -1)
write_progress(KEYS[3], KEYS[2], ARGV[1])
local v = emit(KEYS[1], KEYS[4], ARGV[5], 'ready', ARGV[1], want)
if m[2] == 'all-ready' and tonumber(m[3]) == tonumber(m[4]) and readies == tonumber(m[4]) then
  v = start_race(KEYS[1], KEYS[4], ARGV[5], tonumber(ARGV[3]), tonumber(ARGV[4]))
end
return {'ok', v}
"""

# KEYS: meta, events. ARGV: now, countdown_ms, chan
_START = r"""
local m = redis.call('HMGET', KEYS[1], 'status', 'players')
if not m[1] then return {'err', 'race_not_found'} end
if m[1] ~= 'lobby' then return {'err', 'race_closed'} end
if tonumber(m[2]) < 1 then return {'err', 'forbidden'} end
return {'ok', start_race(KEYS[1], KEYS[2], ARGV[3], tonumber(ARGV[1]), tonumber(ARGV[2]))}
"""

# Race phase checks shared by moves and give-ups.
_LUA_RUNNING = r"""
local function running_error(meta, now)
  local m = redis.call('HMGET', meta, 'status', 'starts_at', 'ends_at')
  if not m[1] then return 'race_not_found' end
  if m[1] == 'lobby' or now < tonumber(m[2]) then return 'race_not_started' end
  if m[1] == 'finished' or now >= tonumber(m[3]) then return 'race_over' end
  return nil
end
local function finish_player(meta, pkey, status, now)
  redis.call('HSET', pkey, 'status', status, 'finished_at', now)
  local done = redis.call('HINCRBY', meta, 'done', 1)
  return (done >= tonumber(redis.call('HGET', meta, 'players'))) and 1 or 0
end
"""

# KEYS: meta, progress, events, tick, then for move i: player key, log key.
# ARGV[1]: msgpack list of [seat, now, seq, expected_n, move, home, moves, won(0/1)]
# ARGV[2]: tick_ms.
# The moves of one race that arrived together, each checked and applied in
# turn exactly as if it came alone (one packed argument: redis-py spends more
# time packing arguments than Redis spends running this). Returns one reply
# per move. Moves publish at most one "move" message per tick_ms per race (the
# tick key lives that long); hubs flush once more a tick later, so no move
# goes unannounced.
_MOVES = r"""
local function one_move(pkey, log, seat, now, seq, expected, move, home, moves, won)
  local bad = running_error(KEYS[1], now)
  if bad then return {'err', bad} end
  local p = redis.call('HMGET', pkey, 'status', 'seq', 'n', 'home')
  if p[1] == 'finished' or p[1] == 'gave_up' then return {'err', 'player_finished'} end
  local last = tonumber(p[2])
  if seq <= last then
    if seq == last and redis.call('LINDEX', log, -1) == move then
      return {'dup', tonumber(redis.call('HGET', KEYS[1], 'version')), tonumber(p[3])}
    end
    return {'err', 'stale_sequence'}
  end
  if tonumber(p[3]) ~= expected then return {'conflict', tonumber(p[3])} end
  redis.call('RPUSH', log, move)
  redis.call('HSET', pkey, 'status', 'racing', 'seq', seq, 'n', expected + 1, 'home', home, 'moves', moves)
  if home ~= tonumber(p[4]) then redis.call('HSET', pkey, 'home_at', now) end
  local race_done = 0
  if won == 1 then race_done = finish_player(KEYS[1], pkey, 'finished', now) end
  write_progress(KEYS[2], pkey, seat)
  return {'ok', log_event(KEYS[1], KEYS[3], 'move', seat, move), race_done}
end
local replies, announce, last_v = {}, false, 0
for i, m in ipairs(cmsgpack.unpack(ARGV[1])) do
  local r = one_move(KEYS[3 + 2 * i], KEYS[4 + 2 * i], m[1], m[2], m[3], m[4], m[5], m[6], m[7], m[8])
  if r[1] == 'ok' then
    last_v = r[2]
    if r[3] == 1 then announce = true end
  end
  replies[i] = r
end
if last_v > 0 and (announce or redis.call('SET', KEYS[4], 1, 'PX', tonumber(ARGV[2]), 'NX')) then
  redis.call('PUBLISH', KEYS[1] .. ':chan', last_v .. ' move')
end
return replies
"""

# KEYS: meta, pkey, progress, events. ARGV: seat, now, chan
_GIVE_UP = r"""
local bad = running_error(KEYS[1], tonumber(ARGV[2]))
if bad then return {'err', bad} end
local st = redis.call('HGET', KEYS[2], 'status')
if st == 'finished' or st == 'gave_up' then return {'err', 'player_finished'} end
local race_done = finish_player(KEYS[1], KEYS[2], 'gave_up', tonumber(ARGV[2]))
write_progress(KEYS[3], KEYS[2], ARGV[1])
return {'ok', emit(KEYS[1], KEYS[4], ARGV[3], 'give_up', ARGV[1], ''), race_done}
"""

# KEYS: meta, pkey, progress, events. ARGV: seat, delta, chan
_PRESENCE = r"""
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return {'err', 'race_not_found'} end
local online = redis.call('HINCRBY', KEYS[2], 'online', tonumber(ARGV[2]))
if online < 0 then redis.call('HSET', KEYS[2], 'online', 0) end
write_progress(KEYS[3], KEYS[2], ARGV[1])
if status == 'finished' then return {'ok', tonumber(redis.call('HGET', KEYS[1], 'version'))} end
return {'ok', emit(KEYS[1], KEYS[4], ARGV[3], 'presence', ARGV[1], ARGV[2])}
"""

# KEYS: meta, events, results, then every other key of the race (to expire).
# ARGV: now, results blob, chan, retention seconds
_END = r"""
local m = redis.call('HMGET', KEYS[1], 'status', 'ends_at', 'done', 'players')
if not m[1] then return {'err', 'race_not_found'} end
if m[1] == 'finished' then return {'already', tonumber(redis.call('HGET', KEYS[1], 'version'))} end
if m[1] ~= 'started' then return {'err', 'race_not_started'} end
if tonumber(ARGV[1]) < tonumber(m[2]) and tonumber(m[3]) < tonumber(m[4]) then
  return {'err', 'race_not_over'}
end
redis.call('HSET', KEYS[1], 'status', 'finished', 'ended_at', ARGV[1])
redis.call('SET', KEYS[3], ARGV[2])
local v = emit(KEYS[1], KEYS[2], ARGV[3], 'end', -1, '')
for i = 1, #KEYS do redis.call('EXPIRE', KEYS[i], tonumber(ARGV[4])) end
return {'ok', v}
"""


class MoveBatcher:
    """Moves that arrive while a round trip is under way go together in the next one.

    Why: redis-py spends most of a call's cost in Python, per command and per
    argument (design.md: about 8,000 sequential EVALSHA a second on one
    connection). Pending moves are grouped by race, one script call per race
    (a script never touches two races' keys), all calls in one pipeline: one
    write and one read for everything waiting. Each move is still checked and
    applied atomically, in arrival order.
    """

    def __init__(self, redis: aioredis.Redis, script: Any, tick_ms: int) -> None:
        self.redis = redis
        self.script = script
        self.tick_ms = tick_ms
        self._pending: dict[str, list[tuple[int, bytes, asyncio.Future[Any]]]] = {}
        self._flusher: asyncio.Task[None] | None = None

    async def call(self, race: str, seat: int, fields: list[Any]) -> Any:
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending.setdefault(race, []).append((seat, _pack(fields), fut))
        if self._flusher is None:
            self._flusher = asyncio.ensure_future(self._flush())
        return await fut

    async def _flush(self) -> None:
        try:
            while self._pending:
                batch, self._pending = self._pending, {}
                try:
                    async with self.redis.pipeline(transaction=False) as pipe:
                        for race, items in batch.items():
                            k = Keys(race)
                            keys = [k.meta, k.progress, k.events, k.tick]
                            for seat, _, _ in items:
                                keys += [k.player(seat), k.log(seat)]
                            packed = _pack_list([fields for _, fields, _ in items])
                            await self.script(keys=keys, args=[packed, self.tick_ms], client=pipe)
                        results = await pipe.execute(raise_on_error=False)
                except BaseException as exc:  # the round trip failed: every caller hears it
                    error = exc if isinstance(exc, Exception) else ConnectionError(repr(exc))
                    for items in batch.values():
                        for _, _, fut in items:
                            if not fut.done():
                                fut.set_exception(error)
                    if not isinstance(exc, Exception):
                        raise
                    continue
                for items, result in zip(batch.values(), results):
                    for i, (_, _, fut) in enumerate(items):
                        if fut.done():
                            continue
                        if isinstance(result, Exception):
                            fut.set_exception(result)
                        else:
                            fut.set_result(result[i])
        finally:
            self._flusher = None


def _pack_list(packed_items: list[bytes]) -> bytes:
    """A msgpack array of already packed items (no decode and re-encode)."""
    n = len(packed_items)
    head = bytes([0x90 | n]) if n < 16 else (b"\xdc" + n.to_bytes(2, "big"))
    return head + b"".join(packed_items)


class StoreError(Exception):
    """A script refused: ``code`` is a protocol error code (or an internal word)."""

    def __init__(self, code: str) -> None:
        self.code = code
        super().__init__(code)


@dataclass
class RaceMeta:
    """A race's hash, typed. ``deal`` and ``salt`` are secret until the end."""

    id: str
    code: str
    variant: str
    deal_source: str
    deal: int
    salt: str
    commitment: str
    seats: int
    players: int
    time_limit: int
    undo: bool
    start_mode: str
    status: str
    """Stored status: lobby, started or finished (countdown/running are read off the clock)."""
    created_at: int
    starts_at: int
    ends_at: int
    ended_at: int
    version: int
    done: int

    def phase(self, now_ms: int) -> str:
        """lobby, countdown, running or finished, as the protocol names them."""
        if self.status == "lobby":
            return "lobby"
        if self.status == "finished":
            return "finished"
        if now_ms < self.starts_at:
            return "countdown"
        return "running"

    @property
    def started(self) -> bool:
        return self.status != "lobby"


@dataclass
class PlayerState:
    seat: int
    name: str
    status: str
    seq: int
    n: int
    moves: list[str]
    line: Line


_INT_FIELDS = ("seats", "players", "time_limit", "created_at", "starts_at", "ends_at", "ended_at", "version", "done")


def _meta_from(raw: dict[bytes, bytes]) -> RaceMeta:
    d = {k.decode(): v.decode() for k, v in raw.items()}
    return RaceMeta(
        id=d["id"],
        code=d["code"],
        variant=d["variant"],
        deal_source=d["deal_source"],
        deal=int(d["deal"]),
        salt=d["salt"],
        commitment=d["commitment"],
        undo=d["undo"] == "1",
        start_mode=d["start_mode"],
        status=d["status"],
        **{k: int(d.get(k) or 0) for k in _INT_FIELDS},
    )


_pack = msgspec.msgpack.Encoder().encode
_line_decoder = msgspec.msgpack.Decoder(tuple[str, str, int, int, int, int, int])


def _line_from(seat: int, blob: bytes) -> Line:
    name, status, home, moves, home_at, finished_at, online = _line_decoder.decode(blob)
    return Line(seat, name, status, home, moves, home_at, finished_at, online)


class Keys:
    """Key names of one race (every one under the race's hash tag)."""

    __slots__ = ("race", "meta", "names", "progress", "events", "results", "chan", "tick")

    def __init__(self, race: str) -> None:
        self.race = race
        base = f"race:{{{race}}}"
        self.meta = base
        self.names = f"{base}:names"
        self.progress = f"{base}:progress"
        self.events = f"{base}:events"
        self.results = f"{base}:results"
        self.chan = f"{base}:chan"
        self.tick = f"{base}:tick"

    def player(self, seat: int) -> str:
        return f"{self.meta}:p:{seat}"

    def log(self, seat: int) -> str:
        return f"{self.meta}:log:{seat}"


def code_key(code: str) -> str:
    return f"code:{code}"


ACTIVE = "races:active"
SECRET = "thieves:secret"


def _reply(raw: list[Any]) -> tuple[str, list[Any]]:
    kind = raw[0].decode() if isinstance(raw[0], bytes) else raw[0]
    rest = [x.decode() if isinstance(x, bytes) else x for x in raw[1:]]
    return kind, rest


class Store:
    """Async access to races in one Redis (or one Redis Cluster slot per race)."""

    def __init__(self, redis: aioredis.Redis, tick_ms: int = 100) -> None:
        self.redis = redis
        self.tick_ms = tick_ms
        reg = redis.register_script
        self._create = reg(_CREATE)
        self._join = reg(_LUA_PRELUDE + _JOIN)
        self._ready = reg(_LUA_PRELUDE + _READY)
        self._start = reg(_LUA_PRELUDE + _START)
        self._moves_script = reg(_LUA_PRELUDE + _LUA_RUNNING + _MOVES)
        self._give_up = reg(_LUA_PRELUDE + _LUA_RUNNING + _GIVE_UP)
        self._presence = reg(_LUA_PRELUDE + _PRESENCE)
        self._end = reg(_LUA_PRELUDE + _END)
        self._moves = MoveBatcher(redis, self._moves_script, tick_ms)

    # ------------------------------------------------------------ setup
    async def ping(self) -> bool:
        return bool(await self.redis.ping())

    async def token_secret(self) -> bytes:
        """The shared HMAC secret: the first process to ask creates it."""
        await self.redis.set(SECRET, secrets.token_hex(32), nx=True)
        value = await self.redis.get(SECRET)
        assert value is not None
        return bytes(value)

    # ------------------------------------------------------------ races
    async def create_race(self, meta: RaceMeta) -> bool:
        """Store a new race; False if its id or join code is taken (pick another)."""
        if not await self.redis.set(code_key(meta.code), meta.id, nx=True):
            return False
        fields: list[Any] = []
        for k, v in vars(meta).items():
            fields += [k, int(v) if isinstance(v, bool) else v]
        kind, _ = _reply(await self._create(keys=[Keys(meta.id).meta], args=fields))
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

    async def meta(self, race: str) -> RaceMeta | None:
        raw = await self.redis.hgetall(Keys(race).meta)
        return _meta_from(raw) if raw else None

    async def active_races(self, limit: int = 200) -> list[RaceMeta]:
        ids = await self.redis.zrange(ACTIVE, 0, limit - 1)
        async with self.redis.pipeline(transaction=False) as pipe:
            for rid in ids:
                pipe.hgetall(Keys(bytes(rid).decode()).meta)
            raws = await pipe.execute()
        return [_meta_from(r) for r in raws if r]

    async def lines(self, race: str) -> tuple[int, list[Line]]:
        """The race version and every player's progress line, read together."""
        k = Keys(race)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hget(k.meta, "version")
            pipe.hgetall(k.progress)
            version, raw = await pipe.execute()
        lines = sorted((_line_from(int(s), b) for s, b in raw.items()), key=lambda line: line.seat)
        return int(version or 0), lines

    async def player(self, race: str, seat: int) -> PlayerState | None:
        """A player's stored state and whole move log, read together."""
        k = Keys(race)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hgetall(k.player(seat))
            pipe.lrange(k.log(seat), 0, -1)
            raw, log = await pipe.execute()
        if not raw:
            return None
        d = {a.decode(): b.decode() for a, b in raw.items()}
        line = Line(seat, d["name"], d["status"], int(d["home"]), int(d["moves"]), int(d["home_at"]),
                    int(d["finished_at"]), int(d["online"]))
        return PlayerState(seat, d["name"], d["status"], int(d["seq"]), int(d["n"]),
                           [m.decode() for m in log], line)

    async def results(self, race: str) -> bytes | None:
        value = await self.redis.get(Keys(race).results)
        return bytes(value) if value is not None else None

    # ------------------------------------------------------- the scripts
    async def join(self, race: str, name: str, home0: int) -> tuple[int, int]:
        """Take the next free seat: ``(seat, version)``; raises :class:`StoreError`."""
        k = Keys(race)
        for _ in range(100):
            players = int(await self.redis.hget(k.meta, "players") or 0)
            kind, rest = _reply(await self._join(
                keys=[k.meta, k.names, k.player(players), k.progress, k.events],
                args=[players, name, name.casefold(), home0, k.chan],
            ))
            if kind == "ok":
                return players, int(rest[0])
            if kind == "err":
                raise StoreError(rest[0])
        raise StoreError("race_full")  # pragma: no cover - a hundred joins raced this one

    async def ready(self, race: str, seat: int, ready: bool, now: int, countdown_ms: int) -> int:
        k = Keys(race)
        kind, rest = _reply(await self._ready(
            keys=[k.meta, k.player(seat), k.progress, k.events],
            args=[seat, int(ready), now, countdown_ms, k.chan],
        ))
        if kind != "ok":
            raise StoreError(rest[0])
        return int(rest[0])

    async def start(self, race: str, now: int, countdown_ms: int) -> int:
        k = Keys(race)
        kind, rest = _reply(await self._start(keys=[k.meta, k.events], args=[now, countdown_ms, k.chan]))
        if kind != "ok":
            raise StoreError(rest[0])
        return int(rest[0])

    async def commit_move(
        self, race: str, seat: int, now: int, seq: int, expected_n: int, move: str, home: int, moves: int,
        won: bool,
    ) -> tuple[str, list[Any]]:
        """Append one validated move; the reply kind is ok, dup, conflict or err.

        ``ok``: [version, race_done]; ``dup``: [version, n]; ``conflict``: [n];
        ``err``: [code].
        """
        return _reply(await self._moves.call(race, seat, [seat, now, seq, expected_n, move, home, moves, int(won)]))

    async def give_up(self, race: str, seat: int, now: int) -> tuple[int, bool]:
        k = Keys(race)
        kind, rest = _reply(await self._give_up(
            keys=[k.meta, k.player(seat), k.progress, k.events], args=[seat, now, k.chan]
        ))
        if kind != "ok":
            raise StoreError(rest[0])
        return int(rest[0]), bool(rest[1])

    async def presence(self, race: str, seat: int, delta: int) -> int:
        k = Keys(race)
        kind, rest = _reply(await self._presence(
            keys=[k.meta, k.player(seat), k.progress, k.events], args=[seat, delta, k.chan]
        ))
        if kind != "ok":
            raise StoreError(rest[0])
        return int(rest[0])

    async def end(self, meta: RaceMeta, now: int, results: bytes, retention: int) -> tuple[bool, int]:
        """Close the race and store its results once; ``(ended_now, version)``."""
        k = Keys(meta.id)
        rest_keys = [k.names, k.progress] + [k.player(s) for s in range(meta.players)]
        rest_keys += [k.log(s) for s in range(meta.players)]
        kind, rest = _reply(await self._end(
            keys=[k.meta, k.events, k.results, *rest_keys], args=[now, results, k.chan, retention]
        ))
        if kind == "err":
            raise StoreError(rest[0])
        await self.redis.zrem(ACTIVE, meta.id)
        await self.redis.expire(code_key(meta.code), retention)
        return kind == "ok", int(rest[0])

    async def snapshot(self, race: str) -> dict[str, Any]:
        """Every key of a race, dumped; tests compare two of these to prove nothing changed."""
        k = Keys(race)
        meta = await self.meta(race)
        out: dict[str, Any] = {"meta": await self.redis.hgetall(k.meta)}
        out["names"] = await self.redis.hgetall(k.names)
        out["progress"] = await self.redis.hgetall(k.progress)
        out["events"] = await self.redis.xlen(k.events)
        out["results"] = await self.redis.get(k.results)
        for seat in range(meta.players if meta else 0):
            out[f"p{seat}"] = await self.redis.hgetall(k.player(seat))
            out[f"log{seat}"] = await self.redis.lrange(k.log(seat), 0, -1)
        return out
