-- KEYS: a race's meta. ARGV: the sealed sentinel (records.SEALED), the reveal time (ms).
-- A race still sealed gets its reveal time; one already unsealed, or gone, is left as it is, so that
-- unsealing again (a retry, another process finishing the same event) changes nothing. One race a
-- call: each race has its own hash tag, so an event's races are unsealed one by one on a cluster too.
if redis.call('HGET', KEYS[1], 'reveal_at') == ARGV[1] then
  redis.call('HSET', KEYS[1], 'reveal_at', ARGV[2])
  return 1
end
return 0
