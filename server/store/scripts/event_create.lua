-- KEYS: event. ARGV: field, value, ... (the whole event)
-- A retried call finds its event in place (same id): nothing is written twice.
if redis.call('EXISTS', KEYS[1]) == 1 then return {'ok'} end
redis.call('HSET', KEYS[1], unpack(ARGV))
return {'ok'}
