-- KEYS: meta. ARGV: join code, then field, value, ...
-- A race already stored with the same code is this very request sent again (a retried call).
if redis.call('EXISTS', KEYS[1]) == 1 then
  if redis.call('HGET', KEYS[1], 'code') == ARGV[1] then return {'ok', 0} end
  return {'err', 'exists'}
end
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
return {'ok', 0}
