-- A page of one account's history, newest first (every key is the account's: one hash tag).
-- KEYS: the account hash, its history zset, its entries hash
-- ARGV: the cursor's ended_at ('' = from the newest), the cursor's race, limit
-- Reply: {0} no such account; else {1, more (1/0), entry JSON, ...}
if redis.call('EXISTS', KEYS[1]) == 0 then return {0} end
local start = 0
if ARGV[1] ~= '' then
  local r = redis.call('ZREVRANK', KEYS[2], ARGV[2])
  if r then
    start = r + 1
  else -- the cursor's race was trimmed meanwhile: go on after everything newer than it
    start = redis.call('ZCOUNT', KEYS[2], ARGV[1], '+inf')
  end
end
local limit = tonumber(ARGV[3])
local ids = redis.call('ZREVRANGE', KEYS[2], start, start + limit)
local more = 0
if #ids > limit then
  more = 1
  ids[#ids] = nil
end
local out = {1, more}
if #ids > 0 then
  for _, entry in ipairs(redis.call('HMGET', KEYS[3], unpack(ids))) do
    if entry then out[#out + 1] = entry end
  end
end
return out
