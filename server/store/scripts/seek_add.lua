-- KEYS: q, alive. ARGV: seek id, entry (msgpack), alive until (ms)
-- A seek joins its pool: its entry and its liveness, together.
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
return redis.call('HLEN', KEYS[1])
