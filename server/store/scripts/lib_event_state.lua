-- The event's state table (shared/event_states.py TRANSITIONS, filled in by scripts.py): every
-- transition's from-states, its target and whether it waits for a claim to run out.
local MOVES = { {{EVENT_TRANSITIONS}} }
local PROTECTED = { {{EVENT_PROTECTED}} }
local function event_move(meta, name, status, round_state, round, pairings, now, fields)
  -- Moves the event by transition ``name`` from the state the caller read (status, round_state, round,
  -- pairings), setting ``fields`` (name, value, ...) too. Returns nil when done, else why not:
  -- 'illegal_transition' (the table does not lead there from the state read, or a field it may not
  -- set), 'conflict' (the event moved since it was read: another process stepped first), or
  -- 'event_not_found'. Nothing is written unless it is done.
  local m = redis.call('HMGET', meta, 'status', 'round_state', 'round', 'pairings', 'claim_until')
  if not m[1] then return 'event_not_found' end
  local t = MOVES[name]
  if not t or not t.from[status .. '/' .. round_state] then return 'illegal_transition' end
  for i = 1, #fields, 2 do
    if PROTECTED[fields[i]] then return 'illegal_transition' end
  end
  if m[1] ~= status or m[2] ~= round_state or (m[3] or '0') ~= round or (m[4] or '0') ~= pairings then
    return 'conflict'
  end
  if t.after_claim and tonumber(m[5] or 0) > tonumber(now) then return 'conflict' end
  redis.call('HSET', meta, 'status', t.status, 'round_state', t.round_state)
  if #fields > 0 then redis.call('HSET', meta, unpack(fields)) end
  return nil
end
