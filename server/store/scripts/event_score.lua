-- uses: event_state
-- KEYS: event, results. ARGV: transition, status, round_state, round, pairings (as read), now, count of
-- fields n, field, value (n pairs), then account, result JSON per entrant of the round.
-- Scores a round once: the results are written only if the state table's move succeeds, in the same call.
local n = tonumber(ARGV[7])
local fields = n > 0 and {unpack(ARGV, 8, 7 + 2 * n)} or {}
local why = event_move(KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], fields)
if why == 'conflict' then return {'conflict'} end
if why then return {'err', why} end
for i = 8 + 2 * n, #ARGV, 2 do
  redis.call('HSET', KEYS[2], ARGV[4] .. '|' .. ARGV[i], ARGV[i + 1])
end
return {'ok', redis.call('HINCRBY', KEYS[1], 'version', 1)}
