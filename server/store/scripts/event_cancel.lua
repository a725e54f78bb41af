-- uses: event_state
-- KEYS: event, its series (or a key of its slot, for a one-off), the series' latest occurrence (the event
-- itself for a one-off), then (ending a series) every other occurrence. ARGV: '1' to end the series
-- (else the event alone), the latest as the caller read it, now.
-- An event is called off by the state table's 'cancel' (only while it takes entries: 'event_closed'
-- once it started). Ending a series marks it cancelled (no occurrence is made after this), takes the
-- repeat off every occurrence (each then reads as a one-off's: no cron to come), and calls the latest
-- off if it has not started (the only one
-- that may still take entries). Answers 'moved' when the series made an occurrence since the caller
-- read its latest (read again). Nothing is written unless it is done.
local function cancel(key)
  local m = redis.call('HMGET', key, 'status', 'round_state', 'round', 'pairings')
  local why = event_move(key, 'cancel', m[1] or '', m[2] or '', m[3] or '0', m[4] or '0', ARGV[3], {})
  if not why then redis.call('HINCRBY', key, 'version', 1) end
  return why
end
if redis.call('EXISTS', KEYS[1]) == 0 then return {'err', 'event_not_found'} end
if ARGV[1] ~= '1' then
  local why = cancel(KEYS[1])
  if why == 'illegal_transition' or why == 'conflict' then return {'err', 'event_closed'} end
  if why then return {'err', why} end
  return {'ok'}
end
local latest = redis.call('HGET', KEYS[2], 'latest')
if not latest then return {'err', 'bad_field'} end
if latest ~= ARGV[2] then return {'moved'} end
redis.call('HSET', KEYS[2], 'cancelled', 1)
for i = 1, #KEYS do
  local was = i ~= 2 and redis.call('HGET', KEYS[i], 'repeat')
  if was and was ~= '' then
    redis.call('HSET', KEYS[i], 'repeat', '')
    redis.call('HINCRBY', KEYS[i], 'version', 1)
  end
end
cancel(KEYS[3])
return {'ok'}
