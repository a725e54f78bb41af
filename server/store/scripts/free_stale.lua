-- uses: events seats
-- KEYS: meta, names, progress, history, presence, free. ARGV: now, lease_ms, chan
-- The janitor's sweep of a lobby: seats whose every connection has been gone for the lease.
if not redis.call('HGET', KEYS[1], 'status') then return 0 end
return free_stale(KEYS, ARGV[3], tonumber(ARGV[1]), tonumber(ARGV[2]))
