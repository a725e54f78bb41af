-- uses: events
-- KEYS: meta, history, results, then every other key of the race (to expire).
-- ARGV: now, results blob, chan, retention seconds
local m = redis.call('HMGET', KEYS[1], 'status', 'ends_at', 'done', 'players')
if not m[1] then return {'err', 'race_not_found'} end
if m[1] == 'finished' then return {'already', tonumber(redis.call('HGET', KEYS[1], 'version'))} end
if m[1] ~= 'started' then return {'err', 'race_not_started'} end
if tonumber(ARGV[1]) < tonumber(m[2]) and tonumber(m[3]) < tonumber(m[4]) then
  return {'err', 'race_not_over'}
end
redis.call('HSET', KEYS[1], 'status', 'finished', 'ended_at', ARGV[1])
redis.call('SET', KEYS[3], ARGV[2])
local v = emit(KEYS[1], KEYS[2], ARGV[3], 'end', -1, '', false)
for i = 1, #KEYS do redis.call('EXPIRE', KEYS[i], tonumber(ARGV[4])) end
return {'ok', v}
