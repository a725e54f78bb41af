-- A race's note of its version now, as a "move" note (records.Note): for the moves whose note the moves
-- script held back (the committer owes it: server/race/hub.py). The version now covers them and any later.
-- KEYS: meta
local v = redis.call('HGET', KEYS[1], 'version')
if v then redis.call('PUBLISH', KEYS[1] .. ':chan', v .. ' move') end
return v
