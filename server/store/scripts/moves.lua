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
local AT = {}  -- a line field's place in LINE
for i, name in ipairs(LINE) do AT[name] = i end
local READ = {'seq', 'n', unpack(LINE)}
local meta = redis.call('HMGET', KEYS[1], 'status', 'starts_at', 'ends_at', 'version')
local version = tonumber(meta[4]) or 0
local version_before = version
-- The race's phase and version are read once for the whole batch (nothing in it changes the phase);
-- the version is counted here and written once at the end.
local function one_move(pkey, log, seat, now, seq, expected, move, home, moves, status)
  local bad = phase_error(meta, now)
  if bad then return {'err', bad} end
  local p = redis.call('HMGET', pkey, unpack(READ))
  local line = {}
  for i = 1, #LINE do line[i] = p[2 + i] end
  local was = line[AT.status]
  if was == 'finished' or was == 'gave_up' or was == 'left' then return {'err', 'player_finished'} end
  local last = tonumber(p[1])
  if seq <= last then
    if seq == last and redis.call('LINDEX', log, -1) == move then
      return {'dup', version, tonumber(p[2])}
    end
    return {'err', 'stale_sequence'}
  end
  if tonumber(p[2]) ~= expected then return {'conflict', tonumber(p[2])} end
  redis.call('RPUSH', log, move)
  local set = {'status', (status == 'finished') and 'racing' or status, 'seq', seq, 'n', expected + 1,
    'home', home, 'moves', moves}
  if home ~= tonumber(line[AT.home]) then
    set[#set + 1], set[#set + 2] = 'home_at', now
    line[AT.home_at] = now
  end
  redis.call('HSET', pkey, unpack(set))
  line[AT.status], line[AT.home], line[AT.moves] = status, home, moves
  local race_done = 0
  if status == 'finished' then
    race_done = finish_player(KEYS[1], pkey, 'finished', now)
    line[AT.finished_at] = now
  end
  local old = put_line(KEYS[2], seat, line)  -- the line the player hash now holds, without reading it back
  version = version + 1
  log_at(KEYS[3], version, 'move', seat, move, old)
  return {'ok', version, race_done}
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
if version ~= version_before then redis.call('HSET', KEYS[1], 'version', version) end
if last_v > 0 and (announce or redis.call('SET', KEYS[4], 1, 'PX', tonumber(ARGV[2]), 'NX')) then
  redis.call('PUBLISH', KEYS[1] .. ':chan', last_v .. ' move')
end
return replies
