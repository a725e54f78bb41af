-- uses: now bucket
-- KEYS: a token bucket. ARGV: burst, interval_ms
-- Replies {'ok'} (a token taken) or {'err', wait_ms} (none left; nothing written).
local burst, interval = tonumber(ARGV[1]), tonumber(ARGV[2])
local tokens = bucket_tokens(KEYS[1], burst, interval)
if tokens < 1 then return {'err', math.ceil((1 - tokens) * interval)} end
bucket_take(KEYS[1], tokens, burst, interval)
return {'ok'}
