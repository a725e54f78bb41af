-- uses: events presence seats
-- KEYS: meta, names, progress, history, presence, free. ARGV: expiry, now, chan, lease_ms, member...
-- Renews this process's leases (a member swept while its process stalled comes back, unless its seat
-- was given back meanwhile), expires the leases of processes that stopped renewing, and frees the
-- lobby seats whose connections have been gone for the lease.
local status = redis.call('HGET', KEYS[1], 'status')
if not status or status == 'finished' then return 0 end
local now = tonumber(ARGV[2])
for i = 5, #ARGV do
  local seat, gen = member_seat(ARGV[i])
  if tonumber(redis.call('HGET', KEYS[1] .. ':p:' .. seat, 'gen') or 0) == gen then
    if redis.call('ZADD', KEYS[5], ARGV[1], ARGV[i]) == 1 then
      presence_delta(KEYS[1], KEYS[4], KEYS[3], ARGV[3], seat, 1, now)
    end
  end
end
sweep(KEYS[1], KEYS[4], KEYS[3], KEYS[5], ARGV[3], now)
free_stale(KEYS, ARGV[3], now, tonumber(ARGV[4]))
return 1
