"""Everything the server keeps in Redis: key names, Lua scripts, reads.

Nothing else in the project speaks Redis. Layout (``{ID}`` is a hash tag,
so one race's keys share a cluster slot and a script never touches two
races)::

    race:{ID}              hash   the race: settings, status, times, version,
                                  the secret deal and salt, counters
    race:{ID}:names        hash   lower-cased player name -> seat
    race:{ID}:p:SEAT       hash   a player: name, status, seq, n (log length),
                                  home, moves, home_at, finished_at, online,
                                  helped (1 after a hint), hint_at (ms)
    race:{ID}:log:SEAT     list   the player's moves in notation, "U" = undo
    race:{ID}:hint:SEAT    string the player's last hint (shared.hints.Hint
                                  JSON, with the line it follows: the next
                                  hint continues it, from any process)
    race:{ID}:progress     hash   seat -> msgpack [name, status, home, moves,
                                  home_at, finished_at, online, helped] (one
                                  read gives the whole progress table)
    race:{ID}:history      stream every event, entry id "<version>-1":
                                  k=kind s=seat d=data o=the seat's progress
                                  line before the event (capped at about
                                  EVENTS_MAX entries; replayed on reconnect)
    race:{ID}:presence     zset   "<seat>|<connection id>" -> lease expiry (ms)
    race:{ID}:results      string msgpack Results once the race is over
    race:{ID}:tick         string exists for 1/progress_hz s after a move was
                                  announced (throttles pub/sub for moves)
    code:{CODE}            string join code -> race id
    races:active           zset   ids of races in lobby or running
    thieves:secret         string the generated token secret
    checked:{VARIANT}      list   the private pool of checked deals of one
                                  variant: JSON {variant, deal, line} (see
                                  server/checked.py); filled at the tail,
                                  taken from the head by LPOP, so no deal
                                  goes to two races
    creator:{ADDR}:bucket  hash   a client address's race-creation token
                                  bucket: tokens, stamp (ms, Redis clock)
    creator:{ADDR}:lobbies zset   race id -> creation time: the address's
                                  lobbies, for the per-address cap
    lobbies:open           zset   race id -> creation time: every lobby, for
                                  the total cap (these three: see
                                  server/store_limits.py)

Pub/sub: channel ``race:{ID}:chan`` carries ``"<version> <kind>"`` after
every event (moves: at most one per progress tick), so each server process
refreshes its own connections. Plain PUBLISH, also on a Redis Cluster: the
cluster bus delivers it to subscribers on every node (see docs/protocol.md,
"Running several servers", for why not SPUBLISH).

Versions and the history: every event bumps ``version`` and is stored with
the stream id ``<version>-1``, so ``XRANGE history <v+1> <w>`` is exactly
the events a client that saw version ``v`` missed, and a first id other
than ``v+1`` proves the cap cut the gap (the client then gets a full
snapshot). The progress line each event overwrote rides along (``o``), so
the table as the client last saw it can be rebuilt and only the lines that
differ are sent.

Presence is leased: each connection of a player holds a member of the
presence zset whose score is an expiry its server process renews every
``lease/3`` seconds. A SIGKILLed process renews nothing, so its members
expire and the next sweep (any process's heartbeat, or the next join)
marks those players disconnected: counts never stay too high.

Moves are committed through :class:`MoveBatcher`: the moves that come in
while one round trip is under way go together in the next one, one script
call per race, all in one pipeline (on a Redis Cluster, where a script call
cannot be pipelined, the per-race calls go out concurrently instead). Each
move is still checked and applied atomically, in arrival order.

Why an append-only move log and no state blob: a move appends a few
bytes instead of rewriting a whole game, which keeps the append-only file
small; a game is rebuilt by replaying its log on the deal (a few hundred
moves take well under a millisecond), and that replay keeps the undo
history that a position snapshot would lose. Every write of a move, its
event, its progress line and the race version happens in one script that
first checks the log length the server validated against, so two
processes serving one player can never both apply a move. Scripts check
everything before their first write, so a refused call writes nothing.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from dataclasses import dataclass
from typing import Any

import msgspec
import redis.asyncio as aioredis

from .metrics import Timer
from .standings import Line
from .store_limits import close_lobbies

EVENTS_MAX = 1000
"""About how many events a race's history keeps (XADD MAXLEN ~): a client
that missed more gets a full snapshot instead of a replay."""

# Shared Lua: bump the version, log the event (id "<version>-1"), tell every process.
_LUA_PRELUDE = r"""
local function log_event(meta, hist, kind, seat, data, old)
  local v = redis.call('HINCRBY', meta, 'version', 1)
  if old then
    redis.call('XADD', hist, 'MAXLEN', '~', EVENTS_MAX, v .. '-1', 'k', kind, 's', seat, 'd', data, 'o', old)
  else
    redis.call('XADD', hist, 'MAXLEN', '~', EVENTS_MAX, v .. '-1', 'k', kind, 's', seat, 'd', data)
  end
  return v
end
local function emit(meta, hist, chan, kind, seat, data, old)
  local v = log_event(meta, hist, kind, seat, data, old)
  redis.call('PUBLISH', chan, v .. ' ' .. kind)
  return v
end
local function write_progress(progress, pkey, seat)
  local old = redis.call('HGET', progress, seat)
  local f = redis.call('HMGET', pkey, 'name', 'status', 'home', 'moves', 'home_at', 'finished_at', 'online',
    'helped')
  redis.call('HSET', progress, seat, cmsgpack.pack({f[1], f[2], tonumber(f[3]), tonumber(f[4]),
    tonumber(f[5]), tonumber(f[6]), tonumber(f[7]), tonumber(f[8]) or 0}))
  return old
end
local function start_race(meta, hist, chan, now, countdown)
  local tl = tonumber(redis.call('HGET', meta, 'time_limit'))
  local starts = now + countdown
  redis.call('HSET', meta, 'status', 'started', 'starts_at', starts, 'ends_at', starts + tl * 1000)
  return emit(meta, hist, chan, 'start', -1, starts, false)
end
""".replace("EVENTS_MAX", str(EVENTS_MAX))

# Presence: one zset member per player connection, scored by its lease's expiry.
# (The player hash is named from the race key: same hash tag, same slot.)
_LUA_PRESENCE = r"""
local function presence_delta(meta, hist, progress, chan, seat, delta)
  local pkey = meta .. ':p:' .. seat
  local online = redis.call('HINCRBY', pkey, 'online', delta)
  if online < 0 then redis.call('HSET', pkey, 'online', 0) end
  local old = write_progress(progress, pkey, seat)
  return emit(meta, hist, chan, 'presence', seat, delta, old)
end
local function sweep(meta, hist, progress, presence, chan, now)
  for _, m in ipairs(redis.call('ZRANGEBYSCORE', presence, '-inf', '(' .. now)) do
    redis.call('ZREM', presence, m)
    presence_delta(meta, hist, progress, chan, string.match(m, '^(%d+)|'), -1)
  end
end
"""

# KEYS: meta. ARGV: join code, then field, value, ...
# A race already stored with the same code is this very request sent again (a retried call).
_CREATE = r"""
if redis.call('EXISTS', KEYS[1]) == 1 then
  if redis.call('HGET', KEYS[1], 'code') == ARGV[1] then return {'ok', 0} end
  return {'err', 'exists'}
end
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
return {'ok', 0}
"""

# KEYS: meta, names, pkey, progress, history, presence.
# ARGV: seat, name, name_key, home0, chan, presence member, lease expiry
# A presence member already there is this very join sent again (a retried call): its seat is taken.
_JOIN = r"""
if redis.call('ZSCORE', KEYS[6], ARGV[6]) then
  return {'ok', tonumber(redis.call('HGET', KEYS[1], 'version'))}
end
local m = redis.call('HMGET', KEYS[1], 'status', 'players', 'seats')
if not m[1] then return {'err', 'race_not_found'} end
if m[1] ~= 'lobby' then return {'err', 'race_closed'} end
local players, seats = tonumber(m[2]), tonumber(m[3])
if players >= seats then return {'err', 'race_full'} end
if players ~= tonumber(ARGV[1]) then return {'retry', players} end
if redis.call('HSETNX', KEYS[2], ARGV[3], ARGV[1]) == 0 then return {'err', 'name_taken'} end
redis.call('HSET', KEYS[3], 'name', ARGV[2], 'status', 'waiting', 'seq', 0, 'n', 0, 'home', ARGV[4],
  'moves', 0, 'home_at', 0, 'finished_at', 0, 'online', 1)
redis.call('ZADD', KEYS[6], ARGV[7], ARGV[6])
redis.call('HINCRBY', KEYS[1], 'players', 1)
local old = write_progress(KEYS[4], KEYS[3], ARGV[1])
return {'ok', emit(KEYS[1], KEYS[5], ARGV[5], 'join', ARGV[1], ARGV[2], old)}
"""

# KEYS: meta, pkey, progress, history. ARGV: seat, ready(0/1), now, countdown_ms, chan
_READY = r"""
local m = redis.call('HMGET', KEYS[1], 'status', 'start_mode', 'players', 'seats')
if not m[1] then return {'err', 'race_not_found'} end
if m[1] ~= 'lobby' then return {'err', 'race_closed'} end
local want = (ARGV[2] == '1') and 'ready' or 'waiting'
local st = redis.call('HGET', KEYS[2], 'status')
if st == want then return {'ok', tonumber(redis.call('HGET', KEYS[1], 'version'))} end
redis.call('HSET', KEYS[2], 'status', want)
local readies = redis.call('HINCRBY', KEYS[1], 'ready_count', (want == 'ready') and 1 or -1)
local old = write_progress(KEYS[3], KEYS[2], ARGV[1])
local v = emit(KEYS[1], KEYS[4], ARGV[5], 'ready', ARGV[1], want, old)
if m[2] == 'all-ready' and tonumber(m[3]) == tonumber(m[4]) and readies == tonumber(m[4]) then
  return {'ok', start_race(KEYS[1], KEYS[4], ARGV[5], tonumber(ARGV[3]), tonumber(ARGV[4])), 1}
end
return {'ok', v, 0}
"""

# KEYS: meta, history. ARGV: now, countdown_ms, chan
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

# KEYS: meta, progress, history, tick, then for move i: player key, log key.
# ARGV[1]: msgpack list of [seat, now, seq, expected_n, move, home, moves, status]
#          (status after the move: racing, blocked or finished)
# ARGV[2]: tick_ms.
# The moves of one race that arrived together, each checked and applied in
# turn exactly as if it came alone (one packed argument: redis-py spends more
# time packing arguments than Redis spends running this). Returns one reply
# per move. Moves publish at most one "move" message per tick_ms per race (the
# tick key lives that long); hubs flush once more a tick later, so no move
# goes unannounced.
_MOVES = r"""
local function one_move(pkey, log, seat, now, seq, expected, move, home, moves, status)
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
  redis.call('HSET', pkey, 'status', (status == 'finished') and 'racing' or status, 'seq', seq,
    'n', expected + 1, 'home', home, 'moves', moves)
  if home ~= tonumber(p[4]) then redis.call('HSET', pkey, 'home_at', now) end
  local race_done = 0
  if status == 'finished' then race_done = finish_player(KEYS[1], pkey, 'finished', now) end
  local old = write_progress(KEYS[2], pkey, seat)
  return {'ok', log_event(KEYS[1], KEYS[3], 'move', seat, move, old), race_done}
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

# KEYS: meta, pkey, hint. ARGV: now, interval_ms
# Checks that the player may have a hint now and reserves it (hint_at = now):
# the rate limit holds across every connection and process of the seat. The
# checks come before the one write, so a refusal writes nothing.
_HINT_TAKE = r"""
local m = redis.call('HMGET', KEYS[1], 'status', 'hints')
if not m[1] then return {'err', 'race_not_found'} end
if m[2] ~= '1' then return {'err', 'hints_not_allowed'} end
local now = tonumber(ARGV[1])
local bad = running_error(KEYS[1], now)
if bad then return {'err', bad} end
local p = redis.call('HMGET', KEYS[2], 'status', 'hint_at', 'n')
if p[1] == 'finished' or p[1] == 'gave_up' then return {'err', 'player_finished'} end
local wait = (tonumber(p[2]) or 0) + tonumber(ARGV[2]) - now
if wait > 0 then return {'err', 'hint_too_soon', wait} end
redis.call('HSET', KEYS[2], 'hint_at', now)
return {'ok', tonumber(p[3]), redis.call('GET', KEYS[3]) or ''}
"""

# KEYS: meta, pkey, progress, history, hint. ARGV: seat, hint json, now, chan
# Keeps the hint for the next one and marks the player as helped: the first
# hint changes the progress line (an event, a version); later ones do not.
_HINT_GIVE = r"""
local bad = running_error(KEYS[1], tonumber(ARGV[3]))
if bad then return {'err', bad} end
redis.call('SET', KEYS[5], ARGV[2])
if redis.call('HGET', KEYS[2], 'helped') == '1' then
  return {'ok', tonumber(redis.call('HGET', KEYS[1], 'version'))}
end
redis.call('HSET', KEYS[2], 'helped', 1)
local old = write_progress(KEYS[3], KEYS[2], ARGV[1])
return {'ok', emit(KEYS[1], KEYS[4], ARGV[4], 'help', ARGV[1], '', old)}
"""

# KEYS: meta, pkey, progress, history. ARGV: seat, now, chan
_GIVE_UP = r"""
local bad = running_error(KEYS[1], tonumber(ARGV[2]))
if bad then return {'err', bad} end
local st = redis.call('HGET', KEYS[2], 'status')
if st == 'finished' or st == 'gave_up' then return {'err', 'player_finished'} end
local race_done = finish_player(KEYS[1], KEYS[2], 'gave_up', tonumber(ARGV[2]))
local old = write_progress(KEYS[3], KEYS[2], ARGV[1])
return {'ok', emit(KEYS[1], KEYS[4], ARGV[3], 'give_up', ARGV[1], '', old), race_done}
"""

# KEYS: meta, progress, history, presence. ARGV: op (+/-), seat, member, expiry, now, chan
# A finished race keeps no presence (its keys are expiring).
_PRESENCE = r"""
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return {'err', 'race_not_found'} end
if status == 'finished' then return {'ok', tonumber(redis.call('HGET', KEYS[1], 'version'))} end
sweep(KEYS[1], KEYS[3], KEYS[2], KEYS[4], ARGV[6], tonumber(ARGV[5]))
if ARGV[1] == '+' then
  if redis.call('ZADD', KEYS[4], ARGV[4], ARGV[3]) == 1 then
    presence_delta(KEYS[1], KEYS[3], KEYS[2], ARGV[6], ARGV[2], 1)
  end
elseif redis.call('ZREM', KEYS[4], ARGV[3]) == 1 then
  presence_delta(KEYS[1], KEYS[3], KEYS[2], ARGV[6], ARGV[2], -1)
end
return {'ok', tonumber(redis.call('HGET', KEYS[1], 'version'))}
"""

# KEYS: meta, progress, history, presence. ARGV: expiry, now, chan, member...
# Renews this process's leases (a member swept while its process stalled comes back)
# and expires the leases of processes that stopped renewing.
_HEARTBEAT = r"""
local status = redis.call('HGET', KEYS[1], 'status')
if not status or status == 'finished' then return 0 end
for i = 4, #ARGV do
  if redis.call('ZADD', KEYS[4], ARGV[1], ARGV[i]) == 1 then
    presence_delta(KEYS[1], KEYS[3], KEYS[2], ARGV[3], string.match(ARGV[i], '^(%d+)|'), 1)
  end
end
sweep(KEYS[1], KEYS[3], KEYS[2], KEYS[4], ARGV[3], tonumber(ARGV[2]))
return 1
"""

# KEYS: meta, history, results, then every other key of the race (to expire).
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
local v = emit(KEYS[1], KEYS[2], ARGV[3], 'end', -1, '', false)
for i = 1, #KEYS do redis.call('EXPIRE', KEYS[i], tonumber(ARGV[4])) end
return {'ok', v}
"""

# KEYS: every key of the race. ARGV: now, lobby_ttl_ms, players, chan
# A lobby race nobody started within the lobby TTL of its creation: delete it.
_ABANDON = r"""
local m = redis.call('HMGET', KEYS[1], 'status', 'created_at', 'players', 'version')
if not m[1] then return {'err', 'race_not_found'} end
if m[1] ~= 'lobby' then return {'err', 'race_closed'} end
if tonumber(ARGV[1]) < tonumber(m[2]) + tonumber(ARGV[2]) then return {'err', 'race_not_over'} end
if tonumber(m[3]) ~= tonumber(ARGV[3]) then return {'retry', tonumber(m[3])} end
local v = tonumber(m[4]) + 1
redis.call('PUBLISH', ARGV[4], v .. ' abandon')
redis.call('DEL', unpack(KEYS))
return {'ok', v}
"""

# Reads that must see one moment (a script is atomic; a MULTI pipeline is not portable to clusters).
# KEYS: meta, progress
_READ_LINES = r"""
return {redis.call('HGET', KEYS[1], 'version') or 0, redis.call('HGETALL', KEYS[2])}
"""
# KEYS: player, log
_READ_PLAYER = r"""
return {redis.call('HGETALL', KEYS[1]), redis.call('LRANGE', KEYS[2], 0, -1)}
"""


class MoveBatcher:
    """Moves that arrive while a round trip is under way go together in the next one.

    Why: redis-py spends most of a call's cost in Python, per command and per
    argument (design.md: about 8,000 sequential EVALSHA a second on one
    connection). Pending moves are grouped by race, one script call per race
    (a script never touches two races' keys), all calls in one pipeline: one
    write and one read for everything waiting. On a Redis Cluster redis-py
    refuses script calls in a pipeline ("Calling pipelined function evalsha
    is blocked"), so there the per-race calls go out concurrently, each to
    its race's node. Each move is still checked and applied atomically, in
    arrival order.
    """

    def __init__(self, redis: Any, script: Any, tick_ms: int, cluster: bool = False,
                 timer: Timer | None = None) -> None:
        self.redis = redis
        self.script = script
        self.tick_ms = tick_ms
        self.cluster = cluster
        self.timer = timer
        self._pending: dict[str, list[tuple[int, bytes, asyncio.Future[Any]]]] = {}
        self._flusher: asyncio.Task[None] | None = None

    async def call(self, race: str, seat: int, fields: list[Any]) -> Any:
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending.setdefault(race, []).append((seat, _pack(fields), fut))
        if self._flusher is None:
            self._flusher = asyncio.ensure_future(self._flush())
        return await fut

    def _calls(self, batch: dict[str, list[tuple[int, bytes, asyncio.Future[Any]]]]) -> list[tuple[list[str], list[Any]]]:
        out = []
        for race, items in batch.items():
            k = Keys(race)
            keys = [k.meta, k.progress, k.history, k.tick]
            for seat, _, _ in items:
                keys += [k.player(seat), k.log(seat)]
            out.append((keys, [_pack_list([fields for _, fields, _ in items]), self.tick_ms]))
        return out

    async def _round_trip(self, calls: list[tuple[list[str], list[Any]]]) -> list[Any]:
        if self.cluster:
            return list(await asyncio.gather(*(self.script(keys=k, args=a) for k, a in calls),
                                             return_exceptions=True))
        async with self.redis.pipeline(transaction=False) as pipe:
            for keys, args in calls:
                await self.script(keys=keys, args=args, client=pipe)
            return list(await pipe.execute(raise_on_error=False))

    async def _flush(self) -> None:
        try:
            while self._pending:
                batch, self._pending = self._pending, {}
                started = time.perf_counter()
                try:
                    results = await self._round_trip(self._calls(batch))
                except BaseException as exc:  # the round trip failed: every caller hears it
                    error = exc if isinstance(exc, Exception) else ConnectionError(repr(exc))
                    for items in batch.values():
                        for _, _, fut in items:
                            if not fut.done():
                                fut.set_exception(error)
                    if not isinstance(exc, Exception):
                        raise
                    continue
                if self.timer is not None:
                    self.timer("moves", time.perf_counter() - started)
                for items, result in zip(batch.values(), results):
                    for i, (_, _, fut) in enumerate(items):
                        if fut.done():
                            continue
                        if isinstance(result, BaseException):
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


class HintRefused(StoreError):
    """A hint refused; ``wait_ms`` says how long until the next is allowed (``hint_too_soon``)."""

    def __init__(self, code: str, wait_ms: int = 0) -> None:
        super().__init__(code)
        self.wait_ms = wait_ms


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
    checked: bool = False
    """The deal was drawn from the private pool of deals proved winnable."""
    hints: bool = False
    line: str = ""
    """A checked race's winning line from the start (moves separated by spaces), secret until the end."""

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


@dataclass(frozen=True)
class Event:
    """One entry of a race's history: what the client-visible table needs of it."""

    version: int
    kind: str
    seat: int
    old: Line | None
    """The seat's progress line before the event (None: the seat did not exist, or no line changed)."""


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
        checked=d.get("checked") == "1",
        hints=d.get("hints") == "1",
        line=d.get("line", ""),
        start_mode=d["start_mode"],
        status=d["status"],
        **{k: int(d.get(k) or 0) for k in _INT_FIELDS},
    )


_pack = msgspec.msgpack.Encoder().encode
_line_decoder = msgspec.msgpack.Decoder(tuple[str, str, int, int, int, int, int, int])
_old_line_decoder = msgspec.msgpack.Decoder(tuple[str, str, int, int, int, int, int])


def _line_from(seat: int, blob: bytes) -> Line:
    try:
        return Line(seat, *_line_decoder.decode(blob))
    except msgspec.ValidationError:  # a line written before the helped mark existed (a server upgrade)
        return Line(seat, *_old_line_decoder.decode(blob))


def _pairs(flat: list[bytes]) -> dict[bytes, bytes]:
    """A HGETALL reply as Lua returns it (a flat list) as a dict."""
    return dict(zip(flat[::2], flat[1::2]))


class Keys:
    """Key names of one race (every one under the race's hash tag)."""

    __slots__ = ("race", "meta", "names", "progress", "history", "presence", "results", "chan", "tick")

    def __init__(self, race: str) -> None:
        self.race = race
        base = f"race:{{{race}}}"
        self.meta = base
        self.names = f"{base}:names"
        self.progress = f"{base}:progress"
        self.history = f"{base}:history"
        self.presence = f"{base}:presence"
        self.results = f"{base}:results"
        self.chan = f"{base}:chan"
        self.tick = f"{base}:tick"

    def player(self, seat: int) -> str:
        return f"{self.meta}:p:{seat}"

    def log(self, seat: int) -> str:
        return f"{self.meta}:log:{seat}"

    def hint(self, seat: int) -> str:
        return f"{self.meta}:hint:{seat}"

    def every(self, players: int) -> list[str]:
        """Every key the race may have, the race hash first (for EXPIRE and DEL)."""
        out = [self.meta, self.names, self.progress, self.history, self.presence, self.results, self.tick]
        seats = range(players)
        return out + [self.player(s) for s in seats] + [self.log(s) for s in seats] + [self.hint(s) for s in seats]


def code_key(code: str) -> str:
    return f"code:{code}"


ACTIVE = "races:active"
SECRET = "thieves:secret"


def checked_key(variant: str) -> str:
    """One key per variant (its own hash tag): every pool operation is a one-key command."""
    return f"checked:{{{variant}}}"


# KEYS: the pool list. ARGV: target, entry. The new length, or -1 when the pool is already full.
_CHECKED_PUSH = r"""
if redis.call('LLEN', KEYS[1]) >= tonumber(ARGV[1]) then return -1 end
return redis.call('RPUSH', KEYS[1], ARGV[2])
"""


def _reply(raw: list[Any]) -> tuple[str, list[Any]]:
    kind = raw[0].decode() if isinstance(raw[0], bytes) else raw[0]
    rest = [x.decode() if isinstance(x, bytes) else x for x in raw[1:]]
    return kind, rest


class Store:
    """Async access to races in one Redis, or a Redis Cluster (one slot per race)."""

    def __init__(self, redis: Any, tick_ms: int = 100, timer: Timer | None = None, probe: Any = None) -> None:
        self.redis = redis
        self.probe = probe if probe is not None else redis
        """A client that does not retry: one quick PING says whether Redis answers now."""
        self.down = False
        """Set when a command failed through all its retries; cleared by the next PING that answers."""
        self.tick_ms = tick_ms
        self.cluster = isinstance(redis, aioredis.RedisCluster)
        self.timer = timer
        reg = redis.register_script
        self._create = reg(_CREATE)
        self._join = reg(_LUA_PRELUDE + _JOIN)
        self._ready = reg(_LUA_PRELUDE + _READY)
        self._start = reg(_LUA_PRELUDE + _START)
        self._moves_script = reg(_LUA_PRELUDE + _LUA_RUNNING + _MOVES)
        self._give_up = reg(_LUA_PRELUDE + _LUA_RUNNING + _GIVE_UP)
        self._hint_take = reg(_LUA_RUNNING + _HINT_TAKE)
        self._hint_give = reg(_LUA_PRELUDE + _LUA_RUNNING + _HINT_GIVE)
        self._presence = reg(_LUA_PRELUDE + _LUA_PRESENCE + _PRESENCE)
        self._heartbeat = reg(_LUA_PRELUDE + _LUA_PRESENCE + _HEARTBEAT)
        self._end = reg(_LUA_PRELUDE + _END)
        self._abandon = reg(_ABANDON)
        self._read_lines = reg(_READ_LINES)
        self._read_player = reg(_READ_PLAYER)
        self._checked_push = reg(_CHECKED_PUSH)
        self._moves = MoveBatcher(redis, self._moves_script, tick_ms, self.cluster, timer)

    # ------------------------------------------------------------ setup
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
        fields: list[Any] = [meta.code]
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
        return [_meta_from(r) if r else None for r in raws]

    async def versions(self, ids: list[str]) -> list[int | None]:
        """Each race's version in one round trip (None for a race that is gone)."""
        if not ids:
            return []
        async with self.redis.pipeline(transaction=False) as pipe:
            for rid in ids:
                pipe.hget(Keys(rid).meta, "version")
            raws = await pipe.execute()
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
        version, flat = await self._read_lines(keys=[k.meta, k.progress])
        if self.timer is not None:
            self.timer("lines", time.perf_counter() - started)
        raw = _pairs(flat)
        lines = sorted((_line_from(int(s), b) for s, b in raw.items()), key=lambda line: line.seat)
        return int(version or 0), lines

    async def player(self, race: str, seat: int) -> PlayerState | None:
        """A player's stored state and whole move log, read together."""
        k = Keys(race)
        flat, log = await self._read_player(keys=[k.player(seat), k.log(seat)])
        if not flat:
            return None
        d = {a.decode(): b.decode() for a, b in _pairs(flat).items()}
        line = Line(seat, d["name"], d["status"], int(d["home"]), int(d["moves"]), int(d["home_at"]),
                    int(d["finished_at"]), int(d["online"]), int(d.get("helped") or 0))
        return PlayerState(seat, d["name"], d["status"], int(d["seq"]), int(d["n"]),
                           [m.decode() for m in log], line)

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
                             _line_from(seat, old) if old else None))
        return out

    # ------------------------------------------------------- the scripts
    async def join(self, race: str, name: str, home0: int, member: str, expiry: int) -> tuple[int, int]:
        """Take the next free seat, holding a presence lease: ``(seat, version)``; raises :class:`StoreError`."""
        k = Keys(race)
        for _ in range(100):
            players = int(await self.redis.hget(k.meta, "players") or 0)
            kind, rest = _reply(await self._join(
                keys=[k.meta, k.names, k.player(players), k.progress, k.history, k.presence],
                args=[players, name, name.casefold(), home0, k.chan, presence_member(players, member), expiry],
            ))
            if kind == "ok":
                return players, int(rest[0])
            if kind == "err":
                raise StoreError(rest[0])
        raise StoreError("race_full")  # pragma: no cover - a hundred joins raced this one

    async def ready(self, race: str, seat: int, ready: bool, now: int, countdown_ms: int) -> int:
        k = Keys(race)
        kind, rest = _reply(await self._ready(
            keys=[k.meta, k.player(seat), k.progress, k.history],
            args=[seat, int(ready), now, countdown_ms, k.chan],
        ))
        if kind != "ok":
            raise StoreError(rest[0])
        if len(rest) > 1 and rest[1]:  # the last ready started the race
            await close_lobbies(self.redis, [race])
        return int(rest[0])

    async def start(self, race: str, now: int, countdown_ms: int) -> int:
        k = Keys(race)
        kind, rest = _reply(await self._start(keys=[k.meta, k.history], args=[now, countdown_ms, k.chan]))
        if kind != "ok":
            raise StoreError(rest[0])
        await close_lobbies(self.redis, [race])
        return int(rest[0])

    async def commit_move(
        self, race: str, seat: int, now: int, seq: int, expected_n: int, move: str, home: int, moves: int,
        status: str,
    ) -> tuple[str, list[Any]]:
        """Append one validated move; ``status`` is the player's after it (racing, blocked, finished).

        The reply kind is ok, dup, conflict or err. ``ok``: [version,
        race_done]; ``dup``: [version, n]; ``conflict``: [n]; ``err``: [code].
        """
        return _reply(await self._moves.call(race, seat, [seat, now, seq, expected_n, move, home, moves, status]))

    async def give_up(self, race: str, seat: int, now: int) -> tuple[int, bool]:
        k = Keys(race)
        kind, rest = _reply(await self._give_up(
            keys=[k.meta, k.player(seat), k.progress, k.history], args=[seat, now, k.chan]
        ))
        if kind != "ok":
            raise StoreError(rest[0])
        return int(rest[0]), bool(rest[1])

    async def take_hint(self, race: str, seat: int, now: int, interval_ms: int) -> tuple[int, str | None]:
        """Reserve a hint for the seat (rate limit, race and player checks):
        ``(log length, the previous hint's JSON or None)``; raises :class:`HintRefused`."""
        k = Keys(race)
        kind, rest = _reply(await self._hint_take(keys=[k.meta, k.player(seat), k.hint(seat)],
                                                  args=[now, interval_ms]))
        if kind != "ok":
            raise HintRefused(rest[0], int(rest[1]) if len(rest) > 1 else 0)
        return int(rest[0]), rest[1] or None

    async def give_hint(self, race: str, seat: int, hint_json: str, now: int) -> int:
        """Keep the hint for the next one and mark the player helped; the race version."""
        k = Keys(race)
        kind, rest = _reply(await self._hint_give(
            keys=[k.meta, k.player(seat), k.progress, k.history, k.hint(seat)],
            args=[seat, hint_json, now, k.chan],
        ))
        if kind != "ok":
            raise StoreError(rest[0])
        return int(rest[0])

    async def presence(self, race: str, seat: int, member: str, online: bool, expiry: int, now: int) -> int:
        """Take (``online``) or drop one connection's presence lease on a seat; the race version."""
        k = Keys(race)
        kind, rest = _reply(await self._presence(
            keys=[k.meta, k.progress, k.history, k.presence],
            args=["+" if online else "-", seat, presence_member(seat, member), expiry, now, k.chan],
        ))
        if kind != "ok":
            raise StoreError(rest[0])
        return int(rest[0])

    async def heartbeat(self, race: str, members: list[tuple[int, str]], expiry: int, now: int) -> None:
        """Renew this process's leases on a race and expire those nobody renews."""
        k = Keys(race)
        await self._heartbeat(keys=[k.meta, k.progress, k.history, k.presence],
                              args=[expiry, now, k.chan, *(presence_member(s, m) for s, m in members)])

    async def end(self, meta: RaceMeta, now: int, results: bytes, retention: int) -> tuple[bool, int]:
        """Close the race and store its results once; ``(ended_now, version)``."""
        k = Keys(meta.id)
        every = k.every(meta.players)
        rest_keys = [key for key in every if key not in (k.meta, k.history, k.results)]
        kind, rest = _reply(await self._end(
            keys=[k.meta, k.history, k.results, *rest_keys], args=[now, results, k.chan, retention]
        ))
        if kind == "err":
            raise StoreError(rest[0])
        await self.redis.zrem(ACTIVE, meta.id)
        await self.redis.expire(code_key(meta.code), retention)
        return kind == "ok", int(rest[0])

    async def abandon(self, meta: RaceMeta, now: int, lobby_ttl_ms: int) -> bool:
        """Delete a lobby race older than the lobby TTL; False if it started, grew or is young."""
        k = Keys(meta.id)
        kind, rest = _reply(await self._abandon(keys=k.every(meta.players),
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


def presence_member(seat: int, connection: str) -> str:
    """A presence zset member: the seat first, so a sweep knows whose count to lower."""
    return f"{seat}|{connection}"
