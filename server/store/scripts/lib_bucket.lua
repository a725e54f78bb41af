-- A token bucket in a hash (tokens, stamp): `burst` tokens, one back every `interval` ms, refilled
-- lazily from Redis's clock (`now`, lib_now.lua), so every process agrees.
local function bucket_tokens(key, burst, interval)
  local b = redis.call('HMGET', key, 'tokens', 'stamp')
  if not b[1] then return burst end
  return math.min(burst, tonumber(b[1]) + math.max(0, now - tonumber(b[2])) / interval)
end
local function bucket_take(key, tokens, burst, interval)
  redis.call('HSET', key, 'tokens', tokens - 1, 'stamp', now)
  redis.call('PEXPIRE', key, math.ceil(burst * interval) + 1000)
end
