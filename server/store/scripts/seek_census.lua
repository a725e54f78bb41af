-- KEYS: q, formed, alive. ARGV: now (ms)
-- How many seeks wait in the pool, races form from it, and seeks wait that nobody vouched for lately.
return {redis.call('HLEN', KEYS[1]), redis.call('ZCARD', KEYS[2]), redis.call('ZCOUNT', KEYS[3], '-inf', ARGV[1])}
