-- uses: claim
-- KEYS: the race's rematch hash. ARGV: action, now, account, then
--   answer: yes/no, the offer's window (ms), how many racers, claim token, keep (ms past the expiry)
--   made/release: claim token, [new race id, join code]
-- An offer no longer open whose time is up (expired, or declined) is forgotten when a racer answers:
-- that answer begins a new offer. Everything is checked before the first write.
local r = redis.call('HMGET', KEYS[1], 'status', 'expires_at', 'claim', 'claim_until', 'race', 'code')
local action, now, account = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local status, claim_until = r[1], tonumber(r[4] or 0)
if action == 'made' or action == 'release' then
  if not settle(KEYS[1], status, r[3], ARGV[4], action, ARGV[5], ARGV[6]) then return {'err', 'rematch_closed'} end
  return {'ok'}
end
if status == 'accepted' then return {'made'} end
if status and now >= tonumber(r[2]) and now >= claim_until then
  redis.call('DEL', KEYS[1])
  status = nil
end
local answer = ARGV[4]
if not status then
  if answer == 'no' then return {'ok'} end  -- nothing offered: nothing to decline
  redis.call('HSET', KEYS[1], 'status', 'open', 'expires_at', now + tonumber(ARGV[5]))
  redis.call('PEXPIREAT', KEYS[1], now + tonumber(ARGV[5]) + tonumber(ARGV[8]))
  status = 'open'
end
if status ~= 'open' or now < claim_until then return {'err', 'rematch_closed'} end
redis.call('HSET', KEYS[1], 'a:' .. account, answer)
if answer == 'no' then
  redis.call('HSET', KEYS[1], 'status', 'declined')
  return {'ok'}
end
local yes = 0
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  if string.sub(all[i], 1, 2) == 'a:' and all[i + 1] == 'yes' then yes = yes + 1 end
end
if yes >= tonumber(ARGV[6]) then
  redis.call('HSET', KEYS[1], 'claim', ARGV[7], 'claim_until', now + 30000)
  return {'make'}
end
return {'ok'}
