-- KEYS: pairing. ARGV: the claimer's token
-- A pairing is over: its lease goes (only its own: a lease that ran out may be another caller's now).
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1
