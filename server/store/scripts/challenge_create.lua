-- KEYS: challenge. ARGV: when the hash goes (ms, PEXPIREAT), then field, value, ...
-- One key: the challenge's own slot. A second challenge of the same id (60 bits of chance) is refused.
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
redis.call('PEXPIREAT', KEYS[1], ARGV[1])
return 1
