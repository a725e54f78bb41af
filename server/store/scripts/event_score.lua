-- KEYS: event, results, scores. ARGV: round, chan, count of fields n, field, value (n pairs), then
-- account, doubled matchpoints, result JSON per entrant of the round.
-- Scores a round once: only while the event is running that round; the state moves on in the same call.
local m = redis.call('HMGET', KEYS[1], 'round', 'round_state')
if not m[1] then return {'err', 'event_not_found'} end
if m[1] ~= ARGV[1] or m[2] ~= 'running' then return {'conflict'} end
local n = tonumber(ARGV[3])
redis.call('HSET', KEYS[1], unpack(ARGV, 4, 3 + 2 * n))
for i = 4 + 2 * n, #ARGV, 3 do
  redis.call('HSET', KEYS[2], ARGV[1] .. '|' .. ARGV[i], ARGV[i + 2])
  redis.call('ZINCRBY', KEYS[3], tonumber(ARGV[i + 1]), ARGV[i])
end
local v = redis.call('HINCRBY', KEYS[1], 'version', 1)
redis.call('PUBLISH', ARGV[2], 'scored')
return {'ok', v}
