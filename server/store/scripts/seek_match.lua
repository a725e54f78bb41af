-- KEYS: q, alive, got, formed, races. ARGV: race, join deadline (ms), the formed race (msgpack), then
-- seek id, match (msgpack) for each member.
-- Places a group in its race only if every member still waits; else nothing changes (0).
for i = 4, #ARGV, 2 do
  if redis.call('HEXISTS', KEYS[1], ARGV[i]) == 0 then return 0 end
end
for i = 4, #ARGV, 2 do
  redis.call('HDEL', KEYS[1], ARGV[i])
  redis.call('ZREM', KEYS[2], ARGV[i])
  redis.call('HSET', KEYS[3], ARGV[i], ARGV[i + 1])
end
redis.call('ZADD', KEYS[4], ARGV[2], ARGV[1])
redis.call('HSET', KEYS[5], ARGV[1], ARGV[3])
return 1
