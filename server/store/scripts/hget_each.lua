-- KEYS: hashes (of any slots: a single Redis only; a cluster client reads them with a pipeline). ARGV: field.
-- Each hash's field (nil where absent), in the order of KEYS: one command for them all.
local out = {}
for i, key in ipairs(KEYS) do
  out[i] = redis.call('HGET', key, ARGV[1])
end
return out
