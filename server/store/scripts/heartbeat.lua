-- uses: events presence
-- KEYS: meta, progress, history, presence. ARGV: expiry, now, chan, member...
-- Renews this process's leases (a member swept while its process stalled comes back)
-- and expires the leases of processes that stopped renewing.
local status = redis.call('HGET', KEYS[1], 'status')
if not status or status == 'finished' then return 0 end
for i = 4, #ARGV do
  if redis.call('ZADD', KEYS[4], ARGV[1], ARGV[i]) == 1 then
    presence_delta(KEYS[1], KEYS[3], KEYS[2], ARGV[3], string.match(ARGV[i], '^(%d+)|'), 1)
  end
end
sweep(KEYS[1], KEYS[3], KEYS[2], KEYS[4], ARGV[3], tonumber(ARGV[2]))
return 1
