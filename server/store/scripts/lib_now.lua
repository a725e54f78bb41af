-- The library of scripts that read Redis's own clock: ``now`` in milliseconds (every process agrees).
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
