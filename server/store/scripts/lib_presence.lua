-- Presence: one zset member per player connection, scored by its lease's expiry.
-- (The player hash is named from the race key: same hash tag, same slot.)
local function presence_delta(meta, hist, progress, chan, seat, delta)
  local pkey = meta .. ':p:' .. seat
  local online = redis.call('HINCRBY', pkey, 'online', delta)
  if online < 0 then redis.call('HSET', pkey, 'online', 0) end
  local old = write_progress(progress, pkey, seat)
  return emit(meta, hist, chan, 'presence', seat, delta, old)
end
local function sweep(meta, hist, progress, presence, chan, now)
  for _, m in ipairs(redis.call('ZRANGEBYSCORE', presence, '-inf', '(' .. now)) do
    redis.call('ZREM', presence, m)
    presence_delta(meta, hist, progress, chan, string.match(m, '^(%d+)|'), -1)
  end
end
