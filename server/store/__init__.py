"""Everything the server keeps in Redis: key names, Lua scripts, typed records, reads and pub/sub.

Nothing else in the project speaks Redis: the rest of the server sees
the records of ``records.py``. Where things are: ``keys.py`` names every
key and channel; ``scripts/`` holds each Lua script in its own file
(``scripts.py`` loads them); ``records.py`` the typed records and how they
encode; ``races.py`` the :class:`Store` (its parts by job: ``race_base.py``,
``race_reads.py``, ``race_life.py``, ``race_play.py``, ``checked_deals.py``); ``batcher.py`` the group commit
of moves; ``pubsub.py`` the subscription; ``limits.py`` the creation
limits. Layout (``{ID}`` is a hash tag,
so one race's keys share a cluster slot and a script never touches two
races)::

    race:{ID}              hash   the race: settings, status, times, version,
                                  the secret deal and salt, counters
    race:{ID}:names        hash   lower-cased player name -> seat
    race:{ID}:p:SEAT       hash   a player: name, status, seq, n (log length),
                                  home, moves, home_at, finished_at, online,
                                  helped (1 after a hint), hint_at (ms),
                                  name_key, account (lower-case name or ""),
                                  gen (raised when the seat is given back;
                                  tokens are signed with it), offline_at (ms
                                  the last connection went, 0 while online);
                                  status "left": a lobby seat given back
    race:{ID}:log:SEAT     list   the player's moves in notation, "U" = undo
    race:{ID}:hint:SEAT    string the player's last hint (shared.hints.Hint
                                  JSON, with the line it follows: the next
                                  hint continues it, from any process)
    race:{ID}:progress     hash   seat -> msgpack [name, status, home, moves,
                                  home_at, finished_at, online, helped] (one
                                  read gives the whole progress table)
    race:{ID}:history      stream every event, entry id "<version>-1":
                                  k=kind s=seat d=data o=the seat's progress
                                  line before the event (capped at about
                                  EVENTS_MAX entries; replayed on reconnect)
    race:{ID}:presence     zset   "<seat>|<gen>.<connection id>" -> lease expiry
                                  (ms); gen: the seat's generation
    race:{ID}:free         zset   seats given back in the lobby, not yet taken
                                  again (the next join takes the lowest)
    race:{ID}:results      string msgpack Results once the race is over
    race:{ID}:tick         string exists for 1/progress_hz s after a move was
                                  announced (throttles pub/sub for moves)
    code:{CODE}            string join code -> race id
    races:active           zset   ids of races in lobby or running
    thieves:secret         string the generated token secret
    checked:{VARIANT}      list   the private pool of checked deals of one
                                  variant: JSON {variant, deal, line} (see
                                  server/deals/checked.py); filled at the tail,
                                  taken from the head by LPOP, so no deal
                                  goes to two races
    creator:{ADDR}:bucket  hash   a client address's race-creation token
                                  bucket: tokens, stamp (ms, Redis clock)
    creator:{ADDR}:lobbies zset   race id -> creation time: the address's
                                  lobbies, for the per-address cap
    creator:{ADDR}:seeks   hash   seek id -> pool: the address's seeks, for
                                  the cap on the pools it may wait in
                                  (server/store/seeks.py)
    lobbies:open           zset   race id -> creation time: every lobby, for
                                  the total cap (these three: see
                                  server/store/limits.py)
    results:pending        zset   race id -> when it ended: the outbox of finished
                                  races with accounts whose results are not yet
                                  applied (written before the race ends)
    race:{ID}:ratings      string a rated race's whole rating update (JSON
                                  RatingPlan), stored once: the first writer wins
    account:{NAME}:history zset   race id -> ended_at: the account's races (the
                                  newest --history-max); a race in it is applied
    account:{NAME}:entries hash   race id -> JSON HistoryEntry
    leaderboard:{VARIANT}  zset   account -> shown rating (these five: see
                                  server/store/history.py and
                                  server/accounts/recorder.py)

Pub/sub: channel ``race:{ID}:chan`` carries ``"<version> <kind>"`` after
every event (moves: at most one per progress tick), so each server process
refreshes its own connections. Plain PUBLISH, also on a Redis Cluster: the
cluster bus delivers it to subscribers on every node (see docs/protocol.md,
"Running several servers", for why not SPUBLISH).

Versions and the history: every event bumps ``version`` and is stored with
the stream id ``<version>-1``, so ``XRANGE history <v+1> <w>`` is exactly
the events a client that saw version ``v`` missed, and a first id other
than ``v+1`` proves the cap cut the gap (the client then gets a full
snapshot). The progress line each event overwrote rides along (``o``), so
the table as the client last saw it can be rebuilt and only the lines that
differ are sent.

Presence is leased: each connection of a player holds a member of the
presence zset whose score is an expiry its server process renews every
``lease/3`` seconds. A SIGKILLed process renews nothing, so its members
expire and the next sweep (any process's heartbeat, or the next join)
marks those players disconnected: counts never stay too high.

Moves are committed through ``batcher.MoveBatcher``: the moves that come in
while one round trip is under way go together in the next one, all in one
``moves.lua`` call on one Redis (on a Redis Cluster, where a script's keys
share a slot, one call per race, sent concurrently, by a batcher of each
node's own: ``node_batches.py``, so a node that stops answering holds up
only its own races). Each move is still
checked and applied atomically, in arrival order. The hubs' progress-table
reads ride in the same round trips (``MoveBatcher.script_call``).

Why an append-only move log and no state blob: a move appends a few
bytes instead of rewriting a whole game, which keeps the append-only file
small; a game is rebuilt by replaying its log on the deal (a few hundred
moves take well under a millisecond), and that replay keeps the undo
history that a position snapshot would lose. Every write of a move, its
event, its progress line and the race version happens in one script that
first checks the log length the server validated against, so two
processes serving one player can never both apply a move. Scripts check
everything before their first write, so a refused call writes nothing.
"""

from .client import NOT_READY, UNAVAILABLE, RedisClient, RedisTarget, outage_backoff, redis_client, redis_retry
from .keys import ACTIVE, EVENTS_MAX, OPEN_LOBBIES, SECRET, Keys, checked_key, code_key, creator_keys, presence_member
from .limits import CreationLimits, CreationSettings, Limited, retry_after
from .races import Store
from .records import (LINE_FIELDS, MOVE_FIELDS, SEALED, CommitResult, Committed, Conflict, Duplicate, Event, EventKind,
                      HintRefused, Line, MoveCommit, Note, PlayerState, RaceMeta, SeatClaim, Seated, StoreError,
                      decode_line)

__all__ = [
    "NOT_READY", "UNAVAILABLE", "RedisClient", "RedisTarget", "outage_backoff", "redis_client", "redis_retry",
    "ACTIVE", "EVENTS_MAX", "OPEN_LOBBIES", "SECRET", "Keys", "checked_key", "code_key", "creator_keys",
    "presence_member", "CreationLimits", "CreationSettings", "Limited", "retry_after", "Store", "LINE_FIELDS", "MOVE_FIELDS", "SEALED",
    "CommitResult", "Committed", "Conflict", "Duplicate", "Event", "EventKind", "HintRefused", "Line", "MoveCommit", "Note",
    "PlayerState", "RaceMeta", "SeatClaim", "Seated", "StoreError", "decode_line",
]
