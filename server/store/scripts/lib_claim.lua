-- The last step of an answer that claimed a challenge or a rematch offer while its race was made:
-- 'release' (no race could be made: open again) or else the race made (accepted, naming it). Only
-- with the claim's token, on a hash still open; false otherwise (another claim took over, or it closed).
local function settle(key, status, held, given, action, race, code)
  if status ~= 'open' or held ~= given then return false end
  if action == 'release' then
    redis.call('HSET', key, 'claim', '', 'claim_until', 0)
  else
    redis.call('HSET', key, 'status', 'accepted', 'race', race, 'code', code, 'claim', '', 'claim_until', 0)
  end
  return true
end
