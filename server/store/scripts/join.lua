-- uses: events
-- KEYS: meta, names, pkey, progress, history, presence.
-- ARGV: seat, name, name_key, home0, chan, presence member, lease expiry
-- A presence member already there is this very join sent again (a retried call): its seat is taken.
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
