-- The library of every script that logs an event: bump the version, log the event (stream id
-- "<version>-1"), tell every process (a records.Note), keep a seat's progress line.
-- Double-braced names are filled in by scripts.py from the one Python definition of each.
local LINE = { {{LINE_FIELDS}} }  -- records.LINE_FIELDS: two texts, then whole numbers
local function log_untrimmed(hist, v, kind, seat, data, old)
  -- An event into the history, its id "<version>-1"; a batch of them trims once (trim_log). Texts where
  -- they can be: a number passed to Redis is printed as a float first.
  local id = string.format('%d-1', v)
  if old then
    redis.call('XADD', hist, id, 'k', kind, 's', seat, 'd', data, 'o', old)
  else
    redis.call('XADD', hist, id, 'k', kind, 's', seat, 'd', data)
  end
end
local function trim_log(hist)
  redis.call('XTRIM', hist, 'MAXLEN', '~', '{{EVENTS_MAX}}')
end
local function log_at(hist, v, kind, seat, data, old)
  log_untrimmed(hist, v, kind, seat, data, old)
  trim_log(hist)
end
local function log_event(meta, hist, kind, seat, data, old)
  local v = redis.call('HINCRBY', meta, 'version', 1)
  log_at(hist, v, kind, seat, data, old)
  return v
end
local function emit(meta, hist, chan, kind, seat, data, old)
  local v = log_event(meta, hist, kind, seat, data, old)
  redis.call('PUBLISH', chan, v .. ' ' .. kind)  -- records.Note: "<version> <kind>"
  return v
end
local LINE_HEAD = string.char(0x90 + #LINE)  -- a msgpack array of #LINE (< 16) items
local function line_blob(f)
  -- f: the values of LINE in order, as the player hash holds them: the stored line (whole numbers from
  -- the third field on, a field not written yet counting 0); packed item by item after the array's head
  return LINE_HEAD .. cmsgpack.pack({{LINE_PACK}})
end
local function write_progress(progress, pkey, seat)
  -- the player's line into the progress hash; returns the line it replaced
  local old = redis.call('HGET', progress, seat)
  redis.call('HSET', progress, seat, line_blob(redis.call('HMGET', pkey, unpack(LINE))))
  return old
end
local function ends_by(meta)
  -- the latest a race may end (a daily deal's play: the end of its day); 0: none
  return tonumber(redis.call('HGET', meta, 'ends_by') or 0) or 0
end
local function too_late(meta, now, countdown)
  -- a race with an ends_by cannot start once its countdown would end then or later (day_over)
  local by = ends_by(meta)
  return by > 0 and now + countdown >= by
end
local function start_race(meta, hist, chan, now, countdown)
  local tl = tonumber(redis.call('HGET', meta, 'time_limit'))
  local starts = now + countdown
  local ends, by = starts + tl * 1000, ends_by(meta)
  if by > 0 and by < ends then ends = by end  -- begun late, it is shorter: it ends by then all the same
  redis.call('HSET', meta, 'status', 'started', 'starts_at', starts, 'ends_at', ends)
  -- Seats given back in the lobby and not taken again stay empty: they count as done from the start.
  redis.call('HINCRBY', meta, 'done', tonumber(redis.call('HGET', meta, 'free') or 0))
  return emit(meta, hist, chan, 'start', -1, starts, false)
end
