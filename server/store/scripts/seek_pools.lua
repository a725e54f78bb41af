-- KEYS: the address's seeks (hash seek id -> its pool). ARGV: seek id, pool, cap (0: none), ttl (ms)
-- A seek of the address enters its pool, unless that is a pool the address has no seek in yet and it
-- has seeks in `cap` pools already: then the reply is those pools, and nothing is written. (A seek
-- that ends leaves the hash by HDEL: one field, so leaving twice is leaving once.)
local pools, n = {}, 0
for _, pool in ipairs(redis.call('HVALS', KEYS[1])) do
  if not pools[pool] then
    pools[pool] = true
    n = n + 1
  end
end
if tonumber(ARGV[3]) > 0 and not pools[ARGV[2]] and n >= tonumber(ARGV[3]) then
  local out = {}
  for pool in pairs(pools) do out[#out + 1] = pool end
  return out
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 0
