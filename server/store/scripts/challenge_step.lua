-- uses: claim
-- KEYS: challenge. ARGV: action, now, actor (the account acting), claim token, then for claim the
-- claim's length (ms), for accept the race id and join code.
-- Actions: claim (an accept begins: the race is being made), accept (it is made), release (it could not
-- be: the challenge is open again), decline, cancel (the challenger's). Who may act is checked first,
-- so a stranger learns nothing of the challenge's state; then everything before the one write.
local c = redis.call('HMGET', KEYS[1], 'status', 'challenger', 'challenged', 'expires_at', 'claim', 'claim_until')
if not c[1] then return {'err', 'challenge_not_found'} end
local action, now, actor = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local status, expires, claim, claim_until = c[1], tonumber(c[4]), c[5] or '', tonumber(c[6] or 0)
local who = (action == 'cancel') and c[2] or c[3]
if actor ~= who then return {'err', 'not_challenged'} end
if action == 'accept' or action == 'release' then
  if not settle(KEYS[1], status, claim, ARGV[4], action, ARGV[5], ARGV[6]) then
    return {'err', 'challenge_closed', status}
  end
  return {'ok'}
end
if status ~= 'open' then return {'err', 'challenge_closed', status} end
if now < claim_until then return {'err', 'challenge_closed', 'accepting'} end
if now >= expires then return {'err', 'challenge_expired'} end
if action == 'claim' then
  redis.call('HSET', KEYS[1], 'claim', ARGV[4], 'claim_until', now + tonumber(ARGV[5]))
elseif action == 'decline' then
  redis.call('HSET', KEYS[1], 'status', 'declined')
else
  redis.call('HSET', KEYS[1], 'status', 'cancelled')
end
return {'ok'}
