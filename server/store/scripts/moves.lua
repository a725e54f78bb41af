-- uses: events running
-- KEYS: for each race r = 1..R: meta, progress, history, tick, listening; then for move i: player key, log key.
-- ARGV[1]: msgpack list of the moves, each a list of its race's number r (1..R), then the fields of
--          records.MoveCommit by name (M below: records.MOVE_FIELDS): seat, now, seq, expected_n, move,
--          home, moves, status (after the move: racing, blocked or finished), n_after (expected_n + 1).
--          seat, now, seq, home, moves and n_after come as decimal texts: they go into Redis as they
--          are, where a Lua number would be printed as a float by every redis.call.
-- ARGV[2]: tick_ms. ARGV[3]: R. ARGV[4]: the committing process's instance (server/store/pubsub.py).
-- The moves that arrived together (one race's on a Redis Cluster, every race's on one Redis), each
-- checked and applied in turn exactly as if it came alone (one packed argument: redis-py spends more
-- time packing arguments than Redis spends running this). Returns one reply per move: a stored move's
-- is {'ok', version, race_done, line, held}, line being the progress line it wrote (so the committing
-- process's hub updates its table without reading it back). Moves publish a "move" message only when
-- another process listens to the race (a live member of its listening set other than ARGV[4]: the
-- committer's own hub learns its moves from these replies), and then at most one per tick_ms per race
-- (the tick key lives that long); held is 1 on the last stored move of a race whose message was held
-- back by the tick key: its committer announces it a tick later (server/race/hub.py), so every version
-- is announced to whoever listens.
local M = { {{MOVE_AT}} }  -- a move's value's place in its packed list, by name (records.MOVE_FIELDS)
-- (each place looked up once here, not for every move)
local RACE, SEAT, NOW, SEQ, EXPECTED = M.race, M.seat, M.now, M.seq, M.expected_n
local MOVE, HOME, MOVES, STATUS, N_AFTER = M.move, M.home, M.moves, M.status, M.n_after
local AT = {}  -- a line field's place in LINE
for i, name in ipairs(LINE) do AT[name] = i end
local READ = {'seq', 'n', unpack(LINE)}
local races = tonumber(ARGV[3])
-- Each race's phase and version are read once for the whole batch (nothing in it changes the phase);
-- the version is counted here and written once at the end.
local meta, version, before, last_v, last_i, announce, last_now = {}, {}, {}, {}, {}, {}, {}
for r = 1, races do
  meta[r] = redis.call('HMGET', KEYS[5 * r - 4], 'status', 'starts_at', 'ends_at', 'version')
  version[r] = tonumber(meta[r][4]) or 0
  before[r], last_v[r], announce[r] = version[r], 0, false
end
local function one_move(r, pkey, log, m)
  local seat, now, seq, expected, move = m[SEAT], m[NOW], m[SEQ], m[EXPECTED], m[MOVE]
  local home, moves, status = m[HOME], m[MOVES], m[STATUS]
  local bad = phase_error(meta[r], tonumber(now))
  if bad then return {'err', bad} end
  local p = redis.call('HMGET', pkey, unpack(READ))
  local line = {}
  for i = 1, #LINE do line[i] = p[2 + i] end
  local was = line[AT.status]
  if was == 'finished' or was == 'gave_up' or was == 'left' then return {'err', 'player_finished'} end
  local last, seq_n = tonumber(p[1]), tonumber(seq)
  if seq_n <= last then
    if seq_n == last and redis.call('LINDEX', log, -1) == move then
      return {'dup', version[r], tonumber(p[2])}
    end
    return {'err', 'stale_sequence'}
  end
  if tonumber(p[2]) ~= expected then return {'conflict', tonumber(p[2])} end
  -- The line it replaces, as the progress hash holds it (read: cheaper than packing it again).
  local old = redis.call('HGET', KEYS[5 * r - 3], seat)
  redis.call('RPUSH', log, move)
  local set = {'status', (status == 'finished') and 'racing' or status, 'seq', seq, 'n', m[N_AFTER],
    'home', home, 'moves', moves}
  if tonumber(home) ~= tonumber(line[AT.home]) then
    set[#set + 1], set[#set + 2] = 'home_at', now
    line[AT.home_at] = now
  end
  redis.call('HSET', pkey, unpack(set))
  line[AT.status], line[AT.home], line[AT.moves] = status, home, moves
  local race_done = 0
  if status == 'finished' then
    race_done = finish_player(KEYS[5 * r - 4], pkey, 'finished', now)
    line[AT.finished_at] = now
  end
  local blob = line_blob(line)
  redis.call('HSET', KEYS[5 * r - 3], seat, blob)  -- what the player hash now holds, not read back
  version[r] = version[r] + 1
  log_untrimmed(KEYS[5 * r - 2], version[r], 'move', seat, move, old)
  return {'ok', version[r], race_done, blob, 0}
end
-- Whether a process other than ``me`` listens to the race (its lease in the listening set not run out).
local function heard_elsewhere(listening, me, now)
  for _, who in ipairs(redis.call('ZRANGEBYSCORE', listening, now, '+inf', 'LIMIT', 0, 2)) do
    if who ~= me then return true end
  end
  return false
end
local replies, first = {}, 5 * races
for i, m in ipairs(cmsgpack.unpack(ARGV[1])) do
  local r = m[RACE]
  local reply = one_move(r, KEYS[first + 2 * i - 1], KEYS[first + 2 * i], m)
  if reply[1] == 'ok' then
    last_v[r], last_i[r], last_now[r] = reply[2], i, m[NOW]
    if reply[3] == 1 then announce[r] = true end
  end
  replies[i] = reply
end
for r = 1, races do
  local meta_key = KEYS[5 * r - 4]
  if version[r] ~= before[r] then
    redis.call('HSET', meta_key, 'version', version[r])
    trim_log(KEYS[5 * r - 2])
  end
  if last_v[r] > 0 and heard_elsewhere(KEYS[5 * r], ARGV[4], last_now[r]) then
    if announce[r] or redis.call('SET', KEYS[5 * r - 1], 1, 'PX', tonumber(ARGV[2]), 'NX') then
      redis.call('PUBLISH', meta_key .. ':chan', last_v[r] .. ' move')
    else
      replies[last_i[r]][5] = 1
    end
  end
end
return replies
