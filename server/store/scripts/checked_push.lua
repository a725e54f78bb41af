-- KEYS: the pool list. ARGV: target, entry. The new length, or -1 when the pool is already full.
if redis.call('LLEN', KEYS[1]) >= tonumber(ARGV[1]) then return -1 end
return redis.call('RPUSH', KEYS[1], ARGV[2])
