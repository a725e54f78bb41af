-- KEYS: wave. ARGV: wave number, ttl (ms)
-- Claim the pairing of one wave of a pool: exactly one caller gets each wave number (and none an older one).
local last = tonumber(redis.call('GET', KEYS[1]) or -1)
if last >= tonumber(ARGV[1]) then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
