-- KEYS: event, entrants.
-- At the start of an event that asks for check-in: every entrant who did not check in is withdrawn
-- (marked so: ``no_check_in``). Returns how many.
local dropped = 0
local all = redis.call('HGETALL', KEYS[2])
for i = 1, #all, 2 do
  local entry = cjson.decode(all[i + 1])
  if not entry.withdrawn and not entry.checked_in then
    entry.withdrawn, entry.no_check_in = true, true
    redis.call('HSET', KEYS[2], all[i], cjson.encode(entry))
    dropped = dropped + 1
  end
end
if dropped > 0 then
  redis.call('HINCRBY', KEYS[1], 'version', 1)
end
return dropped
