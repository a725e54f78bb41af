-- uses: events running
-- KEYS: meta, pkey, progress, history, hint. ARGV: seat, hint json, now, chan
-- Keeps the hint for the next one and marks the player as helped: the first
-- hint changes the progress line (an event, a version); later ones do not.
local bad = running_error(KEYS[1], tonumber(ARGV[3]))
if bad then return {'err', bad} end
redis.call('SET', KEYS[5], ARGV[2])
if redis.call('HGET', KEYS[2], 'helped') == '1' then
  return {'ok', tonumber(redis.call('HGET', KEYS[1], 'version'))}
end
redis.call('HSET', KEYS[2], 'helped', 1)
local old = write_progress(KEYS[3], KEYS[2], ARGV[1])
return {'ok', emit(KEYS[1], KEYS[4], ARGV[4], 'help', ARGV[1], '', old)}
