-- KEYS: series, the occurrence that left registration (started or cancelled), the next occurrence (all
-- under the series' hash tag). ARGV: the next's id and number, then its hash (field, value, ...).
-- Makes the next occurrence once: its id is known in advance, and it is written only if absent and only
-- while the series goes on, so of processes racing here one makes it, and none once the series was
-- cancelled (then the occurrence that left registration loses its repeat: no further occurrence).
-- Answers 'cancelled', or 'ok' and 1 when made now, 0 when it was there.
local s = redis.call('HMGET', KEYS[1], 'cancelled', 'last')
if s[1] == '1' then
  if redis.call('HGET', KEYS[2], 'repeat') ~= '' then
    redis.call('HSET', KEYS[2], 'repeat', '')
    redis.call('HINCRBY', KEYS[2], 'version', 1)
  end
  return {'cancelled'}
end
if redis.call('EXISTS', KEYS[3]) == 1 then return {'ok', 0} end
redis.call('HSET', KEYS[3], unpack(ARGV, 3))
if tonumber(ARGV[2]) > tonumber(s[2] or 0) then
  redis.call('HSET', KEYS[1], 'last', ARGV[2], 'latest', ARGV[1])
end
return {'ok', 1}
