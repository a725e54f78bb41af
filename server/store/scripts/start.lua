-- uses: events
-- KEYS: meta, history. ARGV: now, countdown_ms, chan
local m = redis.call('HMGET', KEYS[1], 'status', 'players')
if not m[1] then return {'err', 'race_not_found'} end
if m[1] ~= 'lobby' then return {'err', 'race_closed'} end
if tonumber(m[2]) < 1 then return {'err', 'forbidden'} end
return {'ok', start_race(KEYS[1], KEYS[2], ARGV[3], tonumber(ARGV[1]), tonumber(ARGV[2]))}
