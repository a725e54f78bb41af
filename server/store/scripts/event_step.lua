-- KEYS: event. ARGV: expected round, expected round_state, now, takeover (1/0), chan, then field, value, ...
-- Moves an event from one state to the next only if it is still where the caller saw it, so of the
-- processes that try the same step one wins. takeover: a state 'opening' whose claim ran out (its
-- process died while drawing the heats) may be claimed again.
local m = redis.call('HMGET', KEYS[1], 'round', 'round_state', 'claim_until')
if not m[1] then return {'err', 'event_not_found'} end
local same = m[1] == ARGV[1] and m[2] == ARGV[2]
if same and m[2] == 'opening' and ARGV[4] == '1' and tonumber(m[3] or 0) > tonumber(ARGV[3]) then same = false end
if not same then return {'conflict'} end
if #ARGV > 5 then redis.call('HSET', KEYS[1], unpack(ARGV, 6)) end
local v = redis.call('HINCRBY', KEYS[1], 'version', 1)
redis.call('PUBLISH', ARGV[5], 'step')
return {'ok', v}
