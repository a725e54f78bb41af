-- uses: events running
-- KEYS: meta, pkey, progress, history. ARGV: seat, now, chan
local bad = running_error(KEYS[1], tonumber(ARGV[2]))
if bad then return {'err', bad} end
local st = redis.call('HGET', KEYS[2], 'status')
if st == 'finished' or st == 'gave_up' or st == 'left' then return {'err', 'player_finished'} end
local race_done = finish_player(KEYS[1], KEYS[2], 'gave_up', tonumber(ARGV[2]))
local old = write_progress(KEYS[3], KEYS[2], ARGV[1])
return {'ok', emit(KEYS[1], KEYS[4], ARGV[3], 'give_up', ARGV[1], '', old), race_done}
