-- uses: events presence
-- KEYS: meta, names, progress, history, presence, free.
-- ARGV: name, name_key, home0, chan, connection id, lease expiry, account ('' for none), now,
--   join id ('' for none: the hello's join_id)
-- Replies {'ok', seat, version, gen, 'new'|'again'}: a new seat (the lowest given back, else the next),
-- or the seat this account, this join id (a hello sent again after its answer was lost) or this very
-- call (retried) holds already.
local m = redis.call('HMGET', KEYS[1], 'status', 'players', 'seats', 'free', 'version', 'called_off_at')
if not m[1] then return {'err', 'race_not_found'} end
local now = tonumber(ARGV[8])
local held = redis.call('HGET', KEYS[2], ARGV[2])
if held then
  local pkey = KEYS[1] .. ':p:' .. held
  local p = redis.call('HMGET', pkey, 'gen', 'account', 'join')
  local gen = tonumber(p[1] or 0)
  local member = held .. '|' .. gen .. '.' .. ARGV[5]
  if redis.call('ZSCORE', KEYS[5], member) then return {'ok', tonumber(held), tonumber(m[5]), gen, 'again'} end
  local same_join = ARGV[9] ~= '' and p[3] == ARGV[9] and (p[2] or '') == ARGV[7]
  if same_join or (ARGV[7] ~= '' and p[2] == ARGV[7]) then
    local v = tonumber(m[5])
    if m[1] ~= 'finished' and redis.call('ZADD', KEYS[5], ARGV[6], member) == 1 then
      v = presence_delta(KEYS[1], KEYS[4], KEYS[3], ARGV[4], held, 1, now)
    end
    return {'ok', tonumber(held), v, gen, 'again'}
  end
  if m[1] ~= 'lobby' then return {'err', 'race_closed'} end
  return {'err', 'name_taken'}
end
if m[1] ~= 'lobby' or (tonumber(m[6]) or 0) > 0 then return {'err', 'race_closed'} end  -- (called off)
local players, seats, free = tonumber(m[2]), tonumber(m[3]), tonumber(m[4] or 0)
if players - free >= seats then return {'err', 'race_full'} end
local seat, gen = players, 0
if free > 0 then
  seat = tonumber(redis.call('ZRANGE', KEYS[6], 0, 0)[1])
  redis.call('ZREM', KEYS[6], seat)
  redis.call('HINCRBY', KEYS[1], 'free', -1)
  gen = tonumber(redis.call('HGET', KEYS[1] .. ':p:' .. seat, 'gen') or 0)
else
  redis.call('HINCRBY', KEYS[1], 'players', 1)
end
local pkey = KEYS[1] .. ':p:' .. seat
redis.call('HSET', KEYS[2], ARGV[2], seat)
redis.call('DEL', pkey, KEYS[1] .. ':log:' .. seat, KEYS[1] .. ':hint:' .. seat)
-- welcomed 0: not yet answered (welcomed.lua marks it once the welcome is sent; start.lua gives back a
-- seat still unmarked at the start: a join stored whose answer was lost, which nobody will play).
redis.call('HSET', pkey, 'name', ARGV[1], 'name_key', ARGV[2], 'account', ARGV[7], 'join', ARGV[9], 'gen', gen,
  'status', 'waiting', 'seq', 0, 'n', 0, 'home', ARGV[3], 'moves', 0, 'home_at', 0, 'finished_at', 0,
  'online', 1, 'offline_at', 0, 'welcomed', 0)
redis.call('ZADD', KEYS[5], ARGV[6], seat .. '|' .. gen .. '.' .. ARGV[5])
local old = write_progress(KEYS[3], pkey, seat)
return {'ok', seat, emit(KEYS[1], KEYS[4], ARGV[4], 'join', seat, ARGV[1], old), gen, 'new'}
