-- uses: now bucket
-- KEYS: bucket, lobbies. ARGV: race id, burst, interval_ms, cap, ttl_ms, grace_ms, then members to
-- check: "c <id>" (the race is no longer a lobby) or "m <id>" (no such race, maybe not written yet).
-- Replies {'ok'}, {'err', code, wait_ms}. Writes nothing unless it admits.
local burst, interval, cap = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local ttl, grace = tonumber(ARGV[5]), tonumber(ARGV[6])
local tokens = burst
if burst > 0 then
  tokens = bucket_tokens(KEYS[1], burst, interval)
  if tokens < 1 then return {'err', 'create_rate_limited', math.ceil((1 - tokens) * interval)} end
end
local drop = {}
if cap > 0 then
  local young = now - ttl
  local open = redis.call('ZCOUNT', KEYS[2], young, '+inf')
  for i = 7, #ARGV do
    local kind, id = string.sub(ARGV[i], 1, 1), string.sub(ARGV[i], 3)
    local score = tonumber(redis.call('ZSCORE', KEYS[2], id))
    if score and score >= young and (kind == 'c' or score < now - grace) then
      drop[#drop + 1] = id
      open = open - 1
    end
  end
  if open >= cap then
    local oldest = redis.call('ZRANGEBYSCORE', KEYS[2], young, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
    return {'err', 'too_many_lobbies', tonumber(oldest[2]) + ttl - now}
  end
end
if burst > 0 then
  bucket_take(KEYS[1], tokens, burst, interval)
end
if cap > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', '(' .. (now - ttl))
  if #drop > 0 then redis.call('ZREM', KEYS[2], unpack(drop)) end
  redis.call('ZADD', KEYS[2], now, ARGV[1])
  redis.call('PEXPIRE', KEYS[2], ttl)
end
return {'ok'}
