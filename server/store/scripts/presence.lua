-- uses: events presence
-- KEYS: meta, progress, history, presence. ARGV: op (+/-), seat, member, expiry, now, chan
-- A finished race keeps no presence (its keys are expiring).
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return {'err', 'race_not_found'} end
if status == 'finished' then return {'ok', tonumber(redis.call('HGET', KEYS[1], 'version'))} end
sweep(KEYS[1], KEYS[3], KEYS[2], KEYS[4], ARGV[6], tonumber(ARGV[5]))
if ARGV[1] == '+' then
  if redis.call('ZADD', KEYS[4], ARGV[4], ARGV[3]) == 1 then
    presence_delta(KEYS[1], KEYS[3], KEYS[2], ARGV[6], ARGV[2], 1)
  end
elseif redis.call('ZREM', KEYS[4], ARGV[3]) == 1 then
  presence_delta(KEYS[1], KEYS[3], KEYS[2], ARGV[6], ARGV[2], -1)
end
return {'ok', tonumber(redis.call('HGET', KEYS[1], 'version'))}
