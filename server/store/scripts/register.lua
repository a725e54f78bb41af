-- uses: now
-- KEYS: account. ARGV: name, key_hash
-- Replies {'ok'} or {'err', 'account_name_taken'}; writes nothing unless it creates the account.
local existing = redis.call('HGET', KEYS[1], 'key_hash')
if existing then
  if existing == ARGV[2] then return {'ok'} end  -- this very call, retried after a lost answer
  return {'err', 'account_name_taken'}
end
redis.call('HSET', KEYS[1], 'name', ARGV[1], 'key_hash', ARGV[2], 'created_at', now, 'races', 0, 'wins', 0)
return {'ok'}
