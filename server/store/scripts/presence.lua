-- uses: events presence
-- KEYS: meta, progress, history, presence. ARGV: op (+/-), seat, member, expiry, now, chan
-- A finished race keeps no presence (its keys are expiring); a seat given back counts no leases.
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return {'err', 'race_not_found'} end
if status == 'finished' then return {'ok', tonumber(redis.call('HGET', KEYS[1], 'version'))} end
local now = tonumber(ARGV[5])
sweep(KEYS[1], KEYS[3], KEYS[2], KEYS[4], ARGV[6], now)
local seat, gen = member_seat(ARGV[3])
if tonumber(redis.call('HGET', KEYS[1] .. ':p:' .. seat, 'gen') or 0) ~= gen then
  if ARGV[1] == '+' then return {'err', 'bad_token'} end
  return {'ok', tonumber(redis.call('HGET', KEYS[1], 'version'))}
end
if ARGV[1] == '+' then
  if redis.call('ZADD', KEYS[4], ARGV[4], ARGV[3]) == 1 then
    presence_delta(KEYS[1], KEYS[3], KEYS[2], ARGV[6], ARGV[2], 1, now)
  end
elseif redis.call('ZREM', KEYS[4], ARGV[3]) == 1 then
  presence_delta(KEYS[1], KEYS[3], KEYS[2], ARGV[6], ARGV[2], -1, now)
end
return {'ok', tonumber(redis.call('HGET', KEYS[1], 'version'))}
