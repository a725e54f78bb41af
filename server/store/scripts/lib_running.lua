-- Race phase checks shared by moves and give-ups.
local function running_error(meta, now)
  local m = redis.call('HMGET', meta, 'status', 'starts_at', 'ends_at')
  if not m[1] then return 'race_not_found' end
  if m[1] == 'lobby' or now < tonumber(m[2]) then return 'race_not_started' end
  if m[1] == 'finished' or now >= tonumber(m[3]) then return 'race_over' end
  return nil
end
local function finish_player(meta, pkey, status, now)
  redis.call('HSET', pkey, 'status', status, 'finished_at', now)
  local done = redis.call('HINCRBY', meta, 'done', 1)
  return (done >= tonumber(redis.call('HGET', meta, 'players'))) and 1 or 0
end
