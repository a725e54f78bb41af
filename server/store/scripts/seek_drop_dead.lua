-- KEYS: q, alive. ARGV: now (ms)
-- Seeks whose connection stopped renewing them (its process died, an HTTP seeker stopped asking): out of
-- the pool. Replies their entries.
local ids = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[1])
local out = {}
for _, id in ipairs(ids) do
  local e = redis.call('HGET', KEYS[1], id)
  if e then table.insert(out, e) end
  redis.call('HDEL', KEYS[1], id)
  redis.call('ZREM', KEYS[2], id)
end
return out
