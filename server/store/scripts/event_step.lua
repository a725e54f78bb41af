-- uses: event_state
-- KEYS: event. ARGV: transition, status, round_state, round, pairings (as the caller read them), now,
-- then field, value, ...
-- Moves an event by one transition of the state table, only if it is still where the caller saw it:
-- of the processes that try the same step one wins, and a move the table does not allow is refused.
local why = event_move(KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], {unpack(ARGV, 7)})
if why == 'conflict' then return {'conflict'} end
if why then return {'err', why} end
return {'ok', redis.call('HINCRBY', KEYS[1], 'version', 1)}
