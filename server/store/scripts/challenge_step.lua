-- uses: claim
-- KEYS: challenge. ARGV: action, now, actor (the account acting), claim token, then for claim the
-- claim's length (ms), for accept the race id and join code, for seen the lease (ms).
-- Actions: claim (an accept begins: the race is being made), accept (it is made), release (it could not
-- be: the challenge is open again), decline, cancel (the challenger's), seen (the challenger still waits:
-- its lease is renewed). Who may act is checked first, so a stranger learns nothing of the challenge's
-- state. An open challenge whose challenger's lease ran out (nobody waits for the answer any more) is
-- withdrawn first: it becomes cancelled. Then everything before the one write.
local c = redis.call('HMGET', KEYS[1], 'status', 'challenger', 'challenged', 'expires_at', 'claim', 'claim_until',
                     'lease_until')
if not c[1] then return {'err', 'challenge_not_found'} end
local action, now, actor = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local status, expires, claim, claim_until = c[1], tonumber(c[4]), c[5] or '', tonumber(c[6] or 0)
local lease_until = tonumber(c[7] or 0)
local who = (action == 'cancel' or action == 'seen') and c[2] or c[3]
if actor ~= who then return {'err', 'not_challenged'} end
if action ~= 'cancel' and status == 'open' and lease_until > 0 and now >= lease_until and lease_until < expires and now >= claim_until then
  redis.call('HSET', KEYS[1], 'status', 'cancelled', 'withdrawn', 1)
  return {'err', 'challenge_closed', 'withdrawn'}
end
if action == 'accept' or action == 'release' then
  if not settle(KEYS[1], status, claim, ARGV[4], action, ARGV[5], ARGV[6]) then
    return {'err', 'challenge_closed', status}
  end
  return {'ok'}
end
if status ~= 'open' then return {'err', 'challenge_closed', status} end
if now < claim_until then return {'err', 'challenge_closed', 'accepting'} end
if now >= expires then return {'err', 'challenge_expired'} end
if action == 'seen' then
  redis.call('HSET', KEYS[1], 'lease_until', now + tonumber(ARGV[5]))
elseif action == 'claim' then
  redis.call('HSET', KEYS[1], 'claim', ARGV[4], 'claim_until', now + tonumber(ARGV[5]))
elseif action == 'decline' then
  redis.call('HSET', KEYS[1], 'status', 'declined')
else
  redis.call('HSET', KEYS[1], 'status', 'cancelled')
end
return {'ok'}
