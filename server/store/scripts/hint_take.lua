-- uses: running
-- KEYS: meta, pkey, hint. ARGV: now, interval_ms
-- Checks that the player may have a hint now and reserves it (hint_at = now):
-- the rate limit holds across every connection and process of the seat. The
-- checks come before the one write, so a refusal writes nothing.
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
