-- KEYS: q, alive, got. ARGV: seek id
-- Cancel a seek still waiting (atomic with seek_match: a seek is either cancelled or matched, never both).
-- Replies {'cancelled'}, {'matched', the match (msgpack)} or {'gone'}.
if redis.call('HDEL', KEYS[1], ARGV[1]) == 1 then
  redis.call('ZREM', KEYS[2], ARGV[1])
  return {'cancelled'}
end
local got = redis.call('HGET', KEYS[3], ARGV[1])
if got then return {'matched', got} end
return {'gone'}
