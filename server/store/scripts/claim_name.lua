-- KEYS: a name index key (keys.name_index_key). ARGV: account
-- Replies {'ok'} (the key now names the account, or named it already) or {'err', 'account_name_taken'}
-- (another account holds a name that looks the same; nothing written).
local held = redis.call('GET', KEYS[1])
if held and held ~= ARGV[1] then return {'err', 'account_name_taken'} end
redis.call('SET', KEYS[1], ARGV[1])
return {'ok'}
