-- Presence: one zset member per player connection, "<seat>|<gen>.<connection>" (keys.presence_member),
-- scored by its lease's expiry. The seat's generation rides along so that a lease of a seat given
-- back in the lobby can never count for the seat's next player.
-- (The player hash is named from the race key: same hash tag, same slot.)
local function member_seat(m)
  local seat, gen = string.match(m, '^(%d+)|(%d+)%.')
  return seat, tonumber(gen)
end
local function presence_delta(meta, hist, progress, chan, seat, delta, now)
  local pkey = meta .. ':p:' .. seat
  local online = redis.call('HINCRBY', pkey, 'online', delta)
  if online < 0 then redis.call('HSET', pkey, 'online', 0) online = 0 end
  -- When the seat's last connection went: a lobby seat gone that long is freed (lib_seats.lua).
  redis.call('HSET', pkey, 'offline_at', (online == 0) and now or 0)
  local old = write_progress(progress, pkey, seat)
  return emit(meta, hist, chan, 'presence', seat, delta, old)
end
local function sweep(meta, hist, progress, presence, chan, now)
  for _, m in ipairs(redis.call('ZRANGEBYSCORE', presence, '-inf', '(' .. now)) do
    redis.call('ZREM', presence, m)
    local seat, gen = member_seat(m)
    if tonumber(redis.call('HGET', meta .. ':p:' .. seat, 'gen') or 0) == gen then
      presence_delta(meta, hist, progress, chan, seat, -1, now)
    end
  end
end
