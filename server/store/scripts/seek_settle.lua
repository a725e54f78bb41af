-- KEYS: q, alive, got, formed, races. ARGV: race, alive until (ms), then the members' seek ids, '|', then
-- seek id, entry (msgpack) of each member put back in the pool.
-- A formed race is settled once (0 after): its matches are removed, the members who came back wait again.
if redis.call('ZREM', KEYS[4], ARGV[1]) == 0 then return 0 end
redis.call('HDEL', KEYS[5], ARGV[1])
local i = 3
while ARGV[i] ~= '|' do
  redis.call('HDEL', KEYS[3], ARGV[i])
  i = i + 1
end
for j = i + 1, #ARGV, 2 do
  redis.call('HSET', KEYS[1], ARGV[j], ARGV[j + 1])
  redis.call('ZADD', KEYS[2], ARGV[2], ARGV[j])
end
return 1
