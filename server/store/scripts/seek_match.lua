-- KEYS: q, alive, got, formed, races, pairing. ARGV: race, join deadline (ms), the formed race (msgpack),
-- the pairer's token, lease ttl (ms), then seek id, match (msgpack) for each member.
-- Places a group in its race only if the pairer still holds the pool's wave (else -1: another process
-- may be pairing it now) and every member still waits (else 0); nothing changes unless it replies 1.
-- A placed seek keeps its liveness (its connection goes on vouching for it until the race settles).
if redis.call('GET', KEYS[6]) ~= ARGV[4] then return -1 end
for i = 6, #ARGV, 2 do
  if redis.call('HEXISTS', KEYS[1], ARGV[i]) == 0 then return 0 end
end
for i = 6, #ARGV, 2 do
  redis.call('HDEL', KEYS[1], ARGV[i])
  redis.call('HSET', KEYS[3], ARGV[i], ARGV[i + 1])
end
redis.call('ZADD', KEYS[4], ARGV[2], ARGV[1])
redis.call('HSET', KEYS[5], ARGV[1], ARGV[3])
redis.call('PEXPIRE', KEYS[6], ARGV[5])
return 1
