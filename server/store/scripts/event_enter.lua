-- KEYS: event, entrants, arena. ARGV: account, name, now, 'enter', 'withdraw' or 'check_in'
-- Answers {'ok', entry JSON, outcome} or {'err', code}. Entering: in registration from round 1; once
-- running (late entry) from the next round, while one is left (an event with an end time, ends_at:
-- until then); outcome 'entered'. A second entry changes nothing ('already_entered'), except that it
-- brings an entrant who was paused (an arena's: it missed a race) back to the waiting ('resumed');
-- entering again after a withdrawal re-enters ('entered'). Nobody enters an event that is over
-- ('event_over') or was cancelled before its start ('event_closed'), nor withdraws from either.
local m = redis.call('HMGET', KEYS[1], 'status', 'round', 'rounds', 'late_entry', 'ends_at')
local timed = tonumber(m[5] or 0) > 0
if not m[1] then return {'err', 'event_not_found'} end
local over = m[1] == 'finished' or m[1] == 'cancelled'  -- (cancelled: called off before its start)
local raw = redis.call('HGET', KEYS[2], ARGV[1])
local function save(changed)  -- the entry changed: store it, bump the version (the feeds see it)
  redis.call('HSET', KEYS[2], ARGV[1], cjson.encode(changed))
  redis.call('HINCRBY', KEYS[1], 'version', 1)
end
local entry = raw and cjson.decode(raw) or nil
if ARGV[4] == 'check_in' then
  if not entry or entry.withdrawn then return {'err', 'not_entered'} end
  if m[1] ~= 'registration' then return {'err', 'event_closed'} end
  if not entry.checked_in then
    entry.checked_in = true
    save(entry)
  end
  return {'ok', cjson.encode(entry), 'checked_in'}
end
if ARGV[4] == 'withdraw' then
  if not entry then return {'err', 'not_entered'} end
  if over then return {'err', 'event_closed'} end
  if not entry.withdrawn then
    entry.withdrawn = true
    save(entry)
  end
  return {'ok', cjson.encode(entry), 'withdrawn'}
end
if m[1] == 'finished' then return {'err', 'event_over'} end
if over then return {'err', 'event_closed'} end
local closed = timed and m[1] == 'running' and tonumber(ARGV[3]) >= tonumber(m[5])
if entry and not entry.withdrawn then
  local st = redis.call('HGET', KEYS[3], ARGV[1])
  if st and cjson.decode(st).status == 'paused' then
    if closed then return {'err', 'event_closed'} end
    local s = cjson.decode(st)
    s.status = 'waiting'
    redis.call('HSET', KEYS[3], ARGV[1], cjson.encode(s))
    redis.call('HINCRBY', KEYS[1], 'version', 1)
    return {'ok', raw, 'resumed'}
  end
  return {'ok', raw, 'already_entered'}
end
local from = 1
if m[1] == 'running' then
  if m[4] ~= '1' or closed then return {'err', 'event_closed'} end
  if not timed then
    from = tonumber(m[2]) + 1
    if from > tonumber(m[3]) then return {'err', 'event_closed'} end
  end
end
if entry then from = math.max(from, tonumber(entry.from_round)) end
entry = {name = ARGV[2], joined_at = tonumber(ARGV[3]), from_round = from, withdrawn = false,
  checked_in = m[1] == 'running'}
redis.call('HSET', KEYS[2], ARGV[1], cjson.encode(entry))
redis.call('HSET', KEYS[1], 'entrants', redis.call('HLEN', KEYS[2]))
redis.call('HINCRBY', KEYS[1], 'version', 1)
return {'ok', cjson.encode(entry), 'entered'}
