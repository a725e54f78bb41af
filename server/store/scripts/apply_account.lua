-- One finished race applied to one account, at most once (every key is the account's: one hash tag).
-- KEYS: the account hash, its history zset (race -> ended_at), its entries hash (race -> HistoryEntry JSON)
-- ARGV: race, ended_at, variant, won (1/0), finish_ms ('' = did not finish), entry JSON, rated (1/0),
--       mu_before, sigma_before, mu_after, sigma_after (rated only), history_max
-- Reply: {'ok' or 'already', mu or false, sigma or false, rated races}; {'missing'}: no such account.
-- The race in the history zset is the mark that it was applied, so a second call (another process, or
-- a retry after a crash) changes nothing. A rating's change (after - before) is added to the current
-- value: the same as setting 'after' unless another race of the account was applied since the plan.
if redis.call('EXISTS', KEYS[1]) == 0 then return {'missing'} end
local v = 'v:' .. ARGV[3] .. ':'
local function state(kind)
  local r = redis.call('HMGET', KEYS[1], v .. 'mu', v .. 'sigma', v .. 'rated')
  return {kind, r[1] or false, r[2] or false, tonumber(r[3] or '0')}
end
if redis.call('ZSCORE', KEYS[2], ARGV[1]) then return state('already') end

local function changed(current, before, after, positive)
  if not current or tonumber(current) == tonumber(before) then return after end
  local value = tonumber(current) + (tonumber(after) - tonumber(before))
  if positive and value <= 0 then return after end
  return string.format('%.17g', value)
end

redis.call('HINCRBY', KEYS[1], 'races', 1)
redis.call('HINCRBY', KEYS[1], v .. 'races', 1)
if ARGV[4] == '1' then
  redis.call('HINCRBY', KEYS[1], 'wins', 1)
  redis.call('HINCRBY', KEYS[1], v .. 'wins', 1)
end
if ARGV[5] ~= '' then
  local best = redis.call('HGET', KEYS[1], v .. 'best_ms')
  if not best or tonumber(ARGV[5]) < tonumber(best) then redis.call('HSET', KEYS[1], v .. 'best_ms', ARGV[5]) end
end
if ARGV[7] == '1' then
  local cur = redis.call('HMGET', KEYS[1], v .. 'mu', v .. 'sigma')
  redis.call('HSET', KEYS[1], v .. 'mu', changed(cur[1], ARGV[8], ARGV[10], false),
             v .. 'sigma', changed(cur[2], ARGV[9], ARGV[11], true))
  redis.call('HINCRBY', KEYS[1], v .. 'rated', 1)
end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
redis.call('HSET', KEYS[3], ARGV[1], ARGV[6])
-- Keep the newest history_max entries, but never drop the race just applied (its mark guards it).
local extra = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[12])
if extra > 0 then
  local old = {}
  for _, race in ipairs(redis.call('ZRANGE', KEYS[2], 0, extra)) do
    if race ~= ARGV[1] and #old < extra then old[#old + 1] = race end
  end
  redis.call('ZREM', KEYS[2], unpack(old))
  redis.call('HDEL', KEYS[3], unpack(old))
end
return state('ok')
