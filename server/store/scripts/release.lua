-- KEYS: bucket, lobbies. ARGV: race id. Gives back the lobby place _ADMIT took for a race that was not
-- created after all (pool_empty). The token stays spent: the attempt cost solver time all the same.
redis.call('ZREM', KEYS[2], ARGV[1])
return 1
