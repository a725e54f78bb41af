-- KEYS: a race's meta. ARGV: the sealed sentinel (records.SEALED).
-- A race still sealed is revealed as any race is at its end (reveal_at 0: no process's clock has to
-- agree that the time has come); one already unsealed, or gone, is left as it is, so that
-- unsealing again (a retry, another process finishing the same event) changes nothing. One race a
-- call: each race has its own hash tag, so an event's races are unsealed one by one on a cluster too.
if redis.call('HGET', KEYS[1], 'reveal_at') == ARGV[1] then
  redis.call('HSET', KEYS[1], 'reveal_at', 0)
  return 1
end
return 0
