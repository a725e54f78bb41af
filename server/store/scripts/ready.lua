-- uses: events
-- KEYS: meta, pkey, progress, history. ARGV: seat, ready(0/1), now, countdown_ms, chan, gen
local m = redis.call('HMGET', KEYS[1], 'status', 'start_mode', 'players', 'seats', 'free')
if not m[1] then return {'err', 'race_not_found'} end
if m[1] ~= 'lobby' then return {'err', 'race_closed'} end
local p = redis.call('HMGET', KEYS[2], 'status', 'gen')
if p[1] == 'left' or tonumber(p[2] or 0) ~= tonumber(ARGV[6]) then return {'err', 'seat_left'} end
local want = (ARGV[2] == '1') and 'ready' or 'waiting'
if p[1] == want then return {'ok', tonumber(redis.call('HGET', KEYS[1], 'version'))} end
if want == 'ready' and too_late(KEYS[1], tonumber(ARGV[3]), tonumber(ARGV[4])) then return {'err', 'day_over'} end
redis.call('HSET', KEYS[2], 'status', want)
local readies = redis.call('HINCRBY', KEYS[1], 'ready_count', (want == 'ready') and 1 or -1)
local old = write_progress(KEYS[3], KEYS[2], ARGV[1])
local v = emit(KEYS[1], KEYS[4], ARGV[5], 'ready', ARGV[1], want, old)
local taken = tonumber(m[3]) - tonumber(m[5] or 0)
if m[2] == 'all-ready' and taken == tonumber(m[4]) and readies == tonumber(m[4]) then
  return {'ok', start_race(KEYS[1], KEYS[4], ARGV[5], tonumber(ARGV[3]), tonumber(ARGV[4])), 1}
end
return {'ok', v, 0}
