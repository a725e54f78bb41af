-- KEYS: account. ARGV: the current key's hash, the new key's hash, now (ms, the servers' clock)
-- Replaces the key only if the caller holds the current one, and notes when (seat tokens given before
-- no longer take an account's seat back without its key); a retried call finds its new key in place.
local existing = redis.call('HGET', KEYS[1], 'key_hash')
if not existing then return {'err', 'player_not_found'} end
if existing == ARGV[2] then return {'ok'} end
if existing ~= ARGV[1] then return {'err', 'bad_key'} end
redis.call('HSET', KEYS[1], 'key_hash', ARGV[2], 'key_since', ARGV[3])
return {'ok'}
