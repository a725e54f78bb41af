-- KEYS: event[, series]. ARGV: n, then the series' n field, value pairs (n = 0: no series), then the
-- event's field, value, ...
-- A retried call finds its event in place (same id): nothing is written twice. The first occurrence of
-- a series is stored with its series (the repeat, the settings each occurrence is made from).
if redis.call('EXISTS', KEYS[1]) == 1 then return {'ok'} end
local n = tonumber(ARGV[1])
if n > 0 then
  redis.call('HSET', KEYS[2], unpack(ARGV, 2, 1 + 2 * n))
end
redis.call('HSET', KEYS[1], unpack(ARGV, 2 + 2 * n))
return {'ok'}
