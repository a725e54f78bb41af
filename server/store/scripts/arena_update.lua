-- KEYS: event, arena, races. ARGV: race, what ('started' or 'scored'), then account, state JSON, ...
-- Marks an arena race started, or scores it once (its entrants' new states in the same step).
local raw = redis.call('HGET', KEYS[3], ARGV[1])
if not raw then return {'err', 'race_not_found'} end
local r = cjson.decode(raw)
if r[ARGV[2]] then return {'conflict'} end
r[ARGV[2]] = true
redis.call('HSET', KEYS[3], ARGV[1], cjson.encode(r))
for i = 3, #ARGV, 2 do redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1]) end
redis.call('HINCRBY', KEYS[1], 'version', 1)
return {'ok'}
