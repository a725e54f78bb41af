-- Reads that must see one moment (a script is atomic; a MULTI pipeline is not portable to clusters).
-- KEYS: meta, progress
return {redis.call('HGET', KEYS[1], 'version') or 0, redis.call('HGETALL', KEYS[2])}
