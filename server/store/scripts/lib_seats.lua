-- Giving a lobby seat back (leave.lua, and lobby seats whose connections are long gone).
-- The seat keeps its number: its player hash turns 'left' with the next generation (its tokens and
-- leases stop counting), its line leaves the table, its name is free, and the next join takes it.
-- KEYS layout every caller shares: meta, names, progress, history, presence, free.
local function free_seat(k, seat, chan, why)
  local pkey = k[1] .. ':p:' .. seat
  local p = redis.call('HMGET', pkey, 'status', 'name_key')
  if p[1] == 'ready' then redis.call('HINCRBY', k[1], 'ready_count', -1) end
  redis.call('HDEL', k[2], p[2])
  for _, m in ipairs(redis.call('ZRANGE', k[5], 0, -1)) do
    if string.match(m, '^(%d+)|') == tostring(seat) then redis.call('ZREM', k[5], m) end
  end
  redis.call('HSET', pkey, 'status', 'left', 'online', 0, 'offline_at', 0)
  redis.call('HINCRBY', pkey, 'gen', 1)
  local old = redis.call('HGET', k[3], seat)
  redis.call('HDEL', k[3], seat)
  redis.call('ZADD', k[6], seat, seat)
  redis.call('HINCRBY', k[1], 'free', 1)
  return emit(k[1], k[4], chan, 'leave', seat, why, old)
end
-- Lobby seats with no connection for lease_ms: freed. Returns how many.
local function free_stale(k, chan, now, lease_ms)
  if redis.call('HGET', k[1], 'status') ~= 'lobby' then return 0 end
  local freed = 0
  for seat = 0, tonumber(redis.call('HGET', k[1], 'players') or 0) - 1 do
    local p = redis.call('HMGET', k[1] .. ':p:' .. seat, 'status', 'online', 'offline_at')
    if (p[1] == 'waiting' or p[1] == 'ready') and tonumber(p[2] or 0) <= 0 then
      local since = tonumber(p[3] or 0)
      if since > 0 and since + lease_ms <= now then
        free_seat(k, seat, chan, 'lease')
        freed = freed + 1
      end
    end
  end
  return freed
end
