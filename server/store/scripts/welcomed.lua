-- KEYS: a seat's player hash. ARGV: its generation.
-- The seat's welcome (its token) goes out next, with no Redis call in between: from now on the start counts it as come, even
-- without a connection (start.lua gives back the seats whose join was never answered). Nothing for a
-- seat given back or taken again since (another generation), nor one marked already (no write).
local p = redis.call('HMGET', KEYS[1], 'gen', 'welcomed')
if tonumber(p[1] or -1) == tonumber(ARGV[1]) and p[2] == '0' then
  redis.call('HSET', KEYS[1], 'welcomed', 1)
  return 1
end
return 0
