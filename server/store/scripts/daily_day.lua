-- KEYS: day. ARGV: deal, line, now
-- The day's deal: the first caller's, whoever asks after gets the same one.
if redis.call('HSETNX', KEYS[1], 'deal', ARGV[1]) == 1 then
  redis.call('HSET', KEYS[1], 'line', ARGV[2], 'created_at', ARGV[3])
end
return redis.call('HMGET', KEYS[1], 'deal', 'line')
