-- KEYS: q, alive, got, formed, races. ARGV: race, now (ms), then the members' seek ids, '|', then
-- seek id, entry (msgpack) of each member put back in the pool.
-- A formed race is settled once (0 after): its matches are removed, the members who came back wait again.
-- A member put back keeps its liveness; one whose connection is gone (no liveness left) gets a past one,
-- so the next wave drops it rather than pair it with players who would wait for it in vain. The others'
-- seeks are over: their liveness goes.
if redis.call('ZREM', KEYS[4], ARGV[1]) == 0 then return 0 end
redis.call('HDEL', KEYS[5], ARGV[1])
local i = 3
while ARGV[i] ~= '|' do i = i + 1 end
local back = {}
for j = i + 1, #ARGV, 2 do
  back[ARGV[j]] = true
  redis.call('HSET', KEYS[1], ARGV[j], ARGV[j + 1])
  redis.call('ZADD', KEYS[2], 'NX', ARGV[2], ARGV[j])
end
for j = 3, i - 1 do
  redis.call('HDEL', KEYS[3], ARGV[j])
  if not back[ARGV[j]] then redis.call('ZREM', KEYS[2], ARGV[j]) end
end
return 1
