-- uses: now
-- KEYS: open lobbies. ARGV: race id, max, ttl_ms. {'ok'} or {'err', 'lobbies_full', wait_ms}.
-- Members older than the TTL no longer count; the janitor removes them (CreationLimits.repair), so
-- that a refusal here, or its undoing (ZREM) after the address refused, leaves the set as it was.
local young = now - tonumber(ARGV[3])
if redis.call('ZCOUNT', KEYS[1], young, '+inf') >= tonumber(ARGV[2]) then
  local oldest = redis.call('ZRANGEBYSCORE', KEYS[1], young, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
  return {'err', 'lobbies_full', tonumber(oldest[2]) + tonumber(ARGV[3]) - now}
end
redis.call('ZADD', KEYS[1], now, ARGV[1])
return {'ok'}
