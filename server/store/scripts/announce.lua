-- A race's note of its version now (records.Note): for the moves whose note the moves script held back
-- (the committer owes it: server/race/hub.py). The version now covers them and any later. Its kind is the
-- kind of the race's last change: "move", or "end" once the race is over (the end is its last change).
-- Why not always "move": a hub that hears a version thinks it handled every change up to it, and a race
-- that ended just after its last move, with the end's own note lost (a subscription down a moment),
-- was then never announced as over: the catch-up saw nothing newer than what the hub had heard.
-- KEYS: meta
local m = redis.call('HMGET', KEYS[1], 'version', 'status')
if m[1] then
  redis.call('PUBLISH', KEYS[1] .. ':chan', m[1] .. ((m[2] == 'finished') and ' end' or ' move'))
end
return m[1]
