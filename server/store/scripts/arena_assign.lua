-- KEYS: event, arena, races, entrants. ARGV: race, starts_at, code, then the group's accounts
-- Puts a freshly made race's group in it, only if each is still waiting (and has not withdrawn):
-- two processes pairing at once never put an entrant in two races.
local states = {}
for i = 4, #ARGV do
  local e = redis.call('HGET', KEYS[4], ARGV[i])
  if not e or cjson.decode(e).withdrawn then return {'conflict'} end
  local raw = redis.call('HGET', KEYS[2], ARGV[i])
  local s = raw and cjson.decode(raw) or {status = 'waiting', race = '', points = 0, streak = 0, wins = 0,
    races = 0, home = 0, last = {}}
  if s.status ~= 'waiting' then return {'conflict'} end
  states[ARGV[i]] = s
end
local group = {}
for i = 4, #ARGV do
  local s = states[ARGV[i]]
  s.status, s.race = 'playing', ARGV[1]
  redis.call('HSET', KEYS[2], ARGV[i], cjson.encode(s))
  group[#group + 1] = ARGV[i]
end
redis.call('HSET', KEYS[3], ARGV[1], cjson.encode({entrants = group, starts_at = tonumber(ARGV[2]),
  code = ARGV[3], started = false, scored = false}))
redis.call('HINCRBY', KEYS[1], 'version', 1)
return {'ok'}
