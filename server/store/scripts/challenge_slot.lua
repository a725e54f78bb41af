-- KEYS: the challenger's open challenges (zset 'ID:CHALLENGED' -> until when it counts as open).
-- ARGV: now, member, until, the challenged account, cap to one account, cap in all.
-- Takes a slot for a new challenge, or says which cap is reached: {'ok'}, {'err', 'to_one', n} or
-- {'err', 'total', n}. Entries whose time is up (expired, or their challenger stopped waiting) are
-- trimmed first; nothing is written on a refusal.
local now = tonumber(ARGV[1])
local open = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now, '+inf')
if #open >= tonumber(ARGV[6]) then return {'err', 'total', #open} end
local suffix = ':' .. ARGV[4]
local to_one = 0
for _, member in ipairs(open) do
  if string.sub(member, -#suffix) == suffix then to_one = to_one + 1 end
end
if to_one >= tonumber(ARGV[5]) then return {'err', 'to_one', to_one} end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[2])
redis.call('PEXPIREAT', KEYS[1], redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')[2])
return {'ok'}
