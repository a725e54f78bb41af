-- uses: events seats
-- KEYS: meta, names, progress, history, presence, free. ARGV: seat, gen, chan
-- A player gives its lobby seat back. The generation is the connection's: a connection of a seat
-- that was freed and taken again cannot free the new player's seat.
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return {'err', 'race_not_found'} end
if status ~= 'lobby' then return {'err', 'race_closed'} end
local p = redis.call('HMGET', KEYS[1] .. ':p:' .. ARGV[1], 'status', 'gen')
if p[1] == 'left' or tonumber(p[2] or 0) ~= tonumber(ARGV[2]) then
  return {'ok', tonumber(redis.call('HGET', KEYS[1], 'version'))}  -- already given back: the same answer
end
return {'ok', free_seat(KEYS, ARGV[1], ARGV[3], 'leave')}
