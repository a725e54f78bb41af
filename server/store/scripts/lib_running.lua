-- Race phase checks shared by moves and give-ups.
local function phase_error(m, now)
  -- m: the race's status, starts_at and ends_at (HMGET of its meta)
  if not m[1] then return 'race_not_found' end
  if m[1] == 'lobby' or now < tonumber(m[2]) then return 'race_not_started' end
  if m[1] == 'finished' or now >= tonumber(m[3]) then return 'race_over' end
  return nil
end
local function running_error(meta, now)
  return phase_error(redis.call('HMGET', meta, 'status', 'starts_at', 'ends_at'), now)
end
local function finish_player(meta, pkey, status, now)
  redis.call('HSET', pkey, 'status', status, 'finished_at', now)
  local done = redis.call('HINCRBY', meta, 'done', 1)
  return (done >= tonumber(redis.call('HGET', meta, 'players'))) and 1 or 0
end
