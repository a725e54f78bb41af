-- uses: events
-- KEYS: meta, history. ARGV: now, countdown_ms, chan
local m = redis.call('HMGET', KEYS[1], 'status', 'players', 'free', 'rated', 'called_off_at')
if not m[1] then return {'err', 'race_not_found'} end
if m[1] ~= 'lobby' or (tonumber(m[5]) or 0) > 0 then return {'err', 'race_closed'} end  -- (called off)
local taken = tonumber(m[2]) - tonumber(m[3] or 0)
if taken < 1 then return {'err', 'forbidden'} end
if m[4] == '1' and taken < 2 then return {'err', 'not_enough_players'} end
if too_late(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2])) then return {'err', 'day_over'} end
return {'ok', start_race(KEYS[1], KEYS[2], ARGV[3], tonumber(ARGV[1]), tonumber(ARGV[2]))}
