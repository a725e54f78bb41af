-- KEYS: q, alive, got. ARGV: seek id, alive until (ms), present since (ms: liveness at or above it means
-- a connection vouched for the seek lately), 1 if the new connection may take the seek over (it proved
-- the seeker's account key), else 0 (a name alone proves nothing: its seek stays 'held' while it exists)
-- A player's new connection takes over its seek if no connection vouches for it any more (its process
-- died, or its connection closed after the seek was placed). Replies {'held'} (a connection vouches for
-- it), {'waiting', entry (msgpack)}, {'matched', the match (msgpack)} or {'gone'} (not in the pool).
local score = tonumber(redis.call('ZSCORE', KEYS[2], ARGV[1]) or -1)
if score >= tonumber(ARGV[3]) then return {'held'} end
local entry = redis.call('HGET', KEYS[1], ARGV[1])
local got = entry and false or redis.call('HGET', KEYS[3], ARGV[1])
if not entry and not got then return {'gone'} end
if ARGV[4] ~= '1' then return {'held'} end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
if entry then return {'waiting', entry} end
return {'matched', got}
