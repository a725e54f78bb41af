-- KEYS: a token bucket (lib_bucket.lua). ARGV: burst
-- Gives back a token taken for an attempt that did not count; a bucket full again is removed, as if
-- nothing had been taken (one that expired meanwhile stays gone).
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local tokens = tonumber(redis.call('HINCRBYFLOAT', KEYS[1], 'tokens', 1))
if tokens >= tonumber(ARGV[1]) then redis.call('DEL', KEYS[1]) end
return 0
