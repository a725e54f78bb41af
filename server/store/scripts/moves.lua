-- uses: events running
-- KEYS: meta, progress, history, tick, then for move i: player key, log key.
-- ARGV[1]: msgpack list of [seat, now, seq, expected_n, move, home, moves, status]
--          (status after the move: racing, blocked or finished)
-- ARGV[2]: tick_ms.
-- The moves of one race that arrived together, each checked and applied in
-- turn exactly as if it came alone (one packed argument: redis-py spends more
-- time packing arguments than Redis spends running this). Returns one reply
-- per move. Moves publish at most one "move" message per tick_ms per race (the
-- tick key lives that long); hubs flush once more a tick later, so no move
-- goes unannounced.
local function one_move(pkey, log, seat, now, seq, expected, move, home, moves, status)
  local bad = running_error(KEYS[1], now)
  if bad then return {'err', bad} end
  local p = redis.call('HMGET', pkey, 'status', 'seq', 'n', 'home')
  if p[1] == 'finished' or p[1] == 'gave_up' or p[1] == 'left' then return {'err', 'player_finished'} end
  local last = tonumber(p[2])
  if seq <= last then
    if seq == last and redis.call('LINDEX', log, -1) == move then
      return {'dup', tonumber(redis.call('HGET', KEYS[1], 'version')), tonumber(p[3])}
    end
    return {'err', 'stale_sequence'}
  end
  if tonumber(p[3]) ~= expected then return {'conflict', tonumber(p[3])} end
  redis.call('RPUSH', log, move)
  redis.call('HSET', pkey, 'status', (status == 'finished') and 'racing' or status, 'seq', seq,
    'n', expected + 1, 'home', home, 'moves', moves)
  if home ~= tonumber(p[4]) then redis.call('HSET', pkey, 'home_at', now) end
  local race_done = 0
  if status == 'finished' then race_done = finish_player(KEYS[1], pkey, 'finished', now) end
  local old = write_progress(KEYS[2], pkey, seat)
  return {'ok', log_event(KEYS[1], KEYS[3], 'move', seat, move, old), race_done}
end
local replies, announce, last_v = {}, false, 0
for i, m in ipairs(cmsgpack.unpack(ARGV[1])) do
  local r = one_move(KEYS[3 + 2 * i], KEYS[4 + 2 * i], m[1], m[2], m[3], m[4], m[5], m[6], m[7], m[8])
  if r[1] == 'ok' then
    last_v = r[2]
    if r[3] == 1 then announce = true end
  end
  replies[i] = r
end
if last_v > 0 and (announce or redis.call('SET', KEYS[4], 1, 'PX', tonumber(ARGV[2]), 'NX')) then
  redis.call('PUBLISH', KEYS[1] .. ':chan', last_v .. ' move')
end
return replies
