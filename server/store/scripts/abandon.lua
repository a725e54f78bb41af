-- KEYS: every key of the race. ARGV: now, lobby_ttl_ms, players, chan
-- A lobby race nobody started within the lobby TTL of its creation: delete it.
local m = redis.call('HMGET', KEYS[1], 'status', 'created_at', 'players', 'version')
if not m[1] then return {'err', 'race_not_found'} end
if m[1] ~= 'lobby' then return {'err', 'race_closed'} end
if tonumber(ARGV[1]) < tonumber(m[2]) + tonumber(ARGV[2]) then return {'err', 'race_not_over'} end
if tonumber(m[3]) ~= tonumber(ARGV[3]) then return {'retry', tonumber(m[3])} end
local v = tonumber(m[4]) + 1
redis.call('PUBLISH', ARGV[4], v .. ' abandon')
redis.call('DEL', unpack(KEYS))
return {'ok', v}
