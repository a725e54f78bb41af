-- KEYS: bucket, lobbies. ARGV: race id, burst. Gives back what _ADMIT took (a creation that failed later).
-- A bucket full again is no bucket (as before the first creation): the key goes.
redis.call('ZREM', KEYS[2], ARGV[1])
local tokens = tonumber(redis.call('HGET', KEYS[1], 'tokens'))
if tokens and tokens + 1 >= tonumber(ARGV[2]) then
  redis.call('DEL', KEYS[1])
elseif tokens then
  redis.call('HSET', KEYS[1], 'tokens', tokens + 1)
end
return 1
