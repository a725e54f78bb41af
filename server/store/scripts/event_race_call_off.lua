-- KEYS: a race's meta. ARGV: now
-- An event gives up a race of its own that did not start at its time (too few of its entrants came),
-- as it scores it: from then on the race takes no player (join.lua, start.lua: race_closed). Only a
-- race still in the lobby, once. Replies 1 when the race is called off (now or before), 0 otherwise.
local status = redis.call('HGET', KEYS[1], 'status')
if status ~= 'lobby' then return 0 end
if (tonumber(redis.call('HGET', KEYS[1], 'called_off_at')) or 0) == 0 then
  redis.call('HSET', KEYS[1], 'called_off_at', ARGV[1])
end
return 1
