-- KEYS: wave, pairing. ARGV: wave number, ttl (ms), the claimer's token
-- Claim the pairing of one wave of a pool: exactly one caller gets each wave number (and none an older
-- one), and none while another caller's pairing still runs (its lease, renewed by each placement).
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
local last = tonumber(redis.call('GET', KEYS[1]) or -1)
if last >= tonumber(ARGV[1]) then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[2])
return 1
