"""The race protocol: every WebSocket message, typed once for server and client.

Pure schema and codec, no I/O. Each frame is one binary WebSocket message
holding one msgpack map whose ``"type"`` field names the message; the other
keys are the fields of the matching :class:`msgspec.Struct` below. Anyone
with a msgpack library can speak it (``docs/protocol.md`` is the reference
for writing a client in another language).

Why msgspec: typed decoding validates every field (types, ranges, lengths)
while it parses, about three times faster than msgpack-python plus hand
checks, and rejects trailing bytes. Unknown *fields* are ignored so that a
newer peer may add optional fields; unknown *types* are an error.

Conversation (client ``->``, server ``<-``)::

    -> hello(race, role, name[, token, last_version])
    <- welcome(seat, token, race, version, view, progress)   or error + close
       (a resumed welcome: then the missed countdown/progress/finished)
    -> ready / start                 (lobby)
    <- progress ...                  (coalesced, any time)
    <- countdown(starts_at, ends_at, view)
    -> move(seq, move)               <- ack(seq, view, version) | reject(seq, reason)
    -> give_up                       <- gave_up(version)
    -> hint                          <- hint(move, winning, ...)   (races with hints)
    <- finished(results)             (deal and salt revealed)

Versions: every event a race stores (a join, a ready, the start, each
accepted move, a give-up, a disconnect, the end) raises the race's
``version`` by one, and every frame that reports state carries the version
it reflects. A client keeps the version of the last ``welcome`` or
``progress`` it applied (the version of the table it has) and sends it as
``hello.last_version`` when it reconnects.

Errors: a failed ``move`` is answered by ``reject`` (with the move's
``seq``); any other refused frame by ``error``. Codes are the
:class:`ErrorCode` values plus, for moves the rules forbid, the engine's
:class:`~shared.moves.IllegalReason` values. Gross abuse closes the socket
with a :class:`CloseCode`.

The package is cut by boundary: :mod:`.fields` (bounded field types, the frame base), :mod:`.race` (the
race's frames and payloads), :mod:`.matchmaking` (seeks, challenges, rematches), :mod:`.accounts` and
:mod:`.events` (HTTP bodies), :mod:`.codes` (error and close codes), :mod:`.errors` (the one refusal
tree) and :mod:`.codec` (bytes in and out). Every public name is re-exported here, so
``from shared import protocol as p; p.Hello`` is the way to use it.
"""

from __future__ import annotations

from .fields import (
    PROTOCOL_VERSION, MAX_FRAME_BYTES, MAX_NESTING, UNDO, MAX_SEQ, Seq, Version, Millis, MAX_NAME_LENGTH,
    Name, ACCOUNT_NAME_PATTERN, AccountKey, ISSUED_KEY_PATTERN, RaceRef, Token, JoinId, MoveText,
    Seat, SeatCount,
    MIN_TIME_LIMIT, TimeLimit, MAX_WIRE_DEAL, DealNumber, Role, StartMode, DealSource, HintVerdict,
    RaceStatus, PlayerStatus, FinalStatus,
)
from .codes import (
    ErrorCode, HTTP_STATUS, MOVE_REASONS, ALL_CODES, explain, CloseCode, CLOSE_EXPLANATIONS,
)
from .errors import (
    Refusal, http_status, CodedError, ProtocolError,
)
from .race import (
    View, Rules, RaceInfo, PlayerProgress, racer_sees, Standing, PlayerRecord, Results, Hello, Create, Leave,
    Ready, Start, Move, GiveUp, Ping, HintRequest, Welcome, Created, Error, Countdown, Ack, Reject, Progress,
    GaveUp, Left, Finished, Pong, HintAnswer, ClientMessage, ServerMessage, CLIENT_TYPES, SERVER_TYPES,
)
from .matchmaking import (
    Seek, SeekCancel, Seeking, Matched, SeekCancelled, SeekPoolLine, SeekPools, ChallengeStatus,
    ChallengeDeal, AccountNameText, ChallengeCreate, Challenge, ChallengeList, ChallengeSetting,
    RematchStatus, RematchAnswer, Rematch,
)
from .accounts import (
    Register, AccountKeyAnswer, KeyCheck, VariantRecord, Profile, HistoryEntry, HistoryPage, LeaderboardLine,
    Leaderboard,
)
from .events import (
    EventFormat, EventStatus, RoundState, EventName, RoundStatus, ArenaStatus, LiveStatus, EventCreate,
    EventCancel, EventHeat, EventRound, EventInfo, EntryOutcome, EventEntry, EventRoundScore,
    EventStandingLine, EventStandings, EventLiveLine, EventLive, DailyPlay, DailyLine, DailyBoard, EntryConditions,
    FairPlayDecision, FairPlayGame, FairPlayFlag, FairPlayReport,
)
from .codec import (
    encode, decode_client, decode_server, decode_json, error,
)

__all__ = [
    "PROTOCOL_VERSION",
    "MAX_FRAME_BYTES",
    "MAX_NESTING",
    "UNDO",
    "MAX_SEQ",
    "Seq",
    "Version",
    "Millis",
    "MAX_NAME_LENGTH",
    "Name",
    "ACCOUNT_NAME_PATTERN",
    "AccountKey",
    "ISSUED_KEY_PATTERN",
    "RaceRef",
    "Token",
    "JoinId",
    "MoveText",
    "Seat",
    "SeatCount",
    "MIN_TIME_LIMIT",
    "TimeLimit",
    "MAX_WIRE_DEAL",
    "DealNumber",
    "Role",
    "StartMode",
    "DealSource",
    "HintVerdict",
    "RaceStatus",
    "PlayerStatus",
    "FinalStatus",
    "ErrorCode",
    "HTTP_STATUS",
    "MOVE_REASONS",
    "ALL_CODES",
    "explain",
    "CloseCode",
    "CLOSE_EXPLANATIONS",
    "Refusal",
    "http_status",
    "CodedError",
    "ProtocolError",
    "View",
    "Rules",
    "RaceInfo",
    "PlayerProgress",
    "racer_sees",
    "Standing",
    "PlayerRecord",
    "Results",
    "Hello",
    "Create",
    "Leave",
    "Ready",
    "Start",
    "Move",
    "GiveUp",
    "Ping",
    "HintRequest",
    "Welcome",
    "Created",
    "Error",
    "Countdown",
    "Ack",
    "Reject",
    "Progress",
    "GaveUp",
    "Left",
    "Finished",
    "Pong",
    "HintAnswer",
    "ClientMessage",
    "ServerMessage",
    "CLIENT_TYPES",
    "SERVER_TYPES",
    "Seek",
    "SeekCancel",
    "Seeking",
    "Matched",
    "SeekCancelled",
    "SeekPoolLine",
    "SeekPools",
    "ChallengeStatus",
    "ChallengeDeal",
    "AccountNameText",
    "ChallengeCreate",
    "Challenge",
    "ChallengeList",
    "ChallengeSetting",
    "RematchStatus",
    "RematchAnswer",
    "Rematch",
    "Register",
    "AccountKeyAnswer",
    "KeyCheck",
    "VariantRecord",
    "Profile",
    "HistoryEntry",
    "HistoryPage",
    "LeaderboardLine",
    "Leaderboard",
    "EventFormat",
    "EventStatus",
    "RoundState",
    "EventName",
    "RoundStatus",
    "ArenaStatus",
    "LiveStatus",
    "EventCreate",
    "EventCancel",
    "EventHeat",
    "EventRound",
    "EventInfo",
    "EntryOutcome",
    "EventEntry",
    "EventRoundScore",
    "EventStandingLine",
    "EventStandings",
    "EventLiveLine",
    "EventLive",
    "DailyPlay",
    "DailyLine",
    "DailyBoard",
    "EntryConditions",
    "FairPlayDecision",
    "FairPlayGame",
    "FairPlayFlag",
    "FairPlayReport",
    "encode",
    "decode_client",
    "decode_server",
    "decode_json",
    "error",
]
