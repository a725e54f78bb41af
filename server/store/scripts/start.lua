-- uses: events seats
-- KEYS: meta, names, progress, history, presence, free (the seat scripts' layout). ARGV: now, countdown_ms, chan
-- Seats whose join was stored but never answered (welcomed 0: Redis failed before the welcome went out,
-- and no retry of that hello came) are given back first, as a lobby seat whose connections are gone:
-- nobody holds their token, and a racer who never comes would keep the race from ending before its time.
local m = redis.call('HMGET', KEYS[1], 'status', 'players', 'free', 'rated', 'called_off_at')
if not m[1] then return {'err', 'race_not_found'} end
if m[1] ~= 'lobby' or (tonumber(m[5]) or 0) > 0 then return {'err', 'race_closed'} end  -- (called off)
local unanswered = {}
for seat = 0, tonumber(m[2]) - 1 do
  local p = redis.call('HMGET', KEYS[1] .. ':p:' .. seat, 'status', 'welcomed')
  if p[2] == '0' and (p[1] == 'waiting' or p[1] == 'ready') then unanswered[#unanswered + 1] = seat end
end
local taken = tonumber(m[2]) - tonumber(m[3] or 0) - #unanswered
if taken < 1 then return {'err', 'forbidden'} end
if m[4] == '1' and taken < 2 then return {'err', 'not_enough_players'} end
if too_late(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2])) then return {'err', 'day_over'} end
for _, seat in ipairs(unanswered) do free_seat(KEYS, seat, ARGV[3], 'unanswered') end
return {'ok', start_race(KEYS[1], KEYS[4], ARGV[3], tonumber(ARGV[1]), tonumber(ARGV[2]))}
