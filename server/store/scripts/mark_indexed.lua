-- KEYS: the names' index mark (keys.NAMES_INDEXED). ARGV: the claim the scan set as it began, the look version
-- Marks the index as built by this look version, unless the claim is gone: a registration by a process of
-- another look version cleared it during the scan, which may have missed that account (the next start
-- scans again). Replies 1 when marked, 0 when not.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
return 1
