"""Every code a client may be told: error codes with their sentences, and WebSocket close codes.
One table, so the server, the client and docs/protocol.md say the same words."""

from __future__ import annotations

import enum

from ..moves import IllegalReason
from .fields import MAX_FRAME_BYTES


# ------------------------------------------------------------------- codes
class ErrorCode(str, enum.Enum):
    """Protocol error codes (``error.code`` / ``reject.reason``).

    Move rejections for rule reasons use :class:`IllegalReason` values
    instead; :func:`explain` knows both.
    """

    BAD_FRAME = "bad_frame"
    UNKNOWN_TYPE = "unknown_type"
    BAD_FIELD = "bad_field"
    VERSION_MISMATCH = "version_mismatch"
    HELLO_REQUIRED = "hello_required"
    ALREADY_JOINED = "already_joined"
    RACE_NOT_FOUND = "race_not_found"
    RACE_FULL = "race_full"
    RACE_CLOSED = "race_closed"
    NAME_TAKEN = "name_taken"
    FORBIDDEN = "forbidden"
    NOT_YOUR_SEAT = "not_your_seat"
    SPECTATOR_CANNOT_MOVE = "spectator_cannot_move"
    RACE_NOT_STARTED = "race_not_started"
    PLAYER_FINISHED = "player_finished"
    RACE_OVER = "race_over"
    RACE_NOT_OVER = "race_not_over"
    BAD_TOKEN = "bad_token"
    TOKEN_EXPIRED = "token_expired"
    STALE_SEQUENCE = "stale_sequence"
    BAD_MOVE = "bad_move"
    UNDO_DISABLED = "undo_disabled"
    BAD_VARIANT = "bad_variant"
    BAD_DEAL = "bad_deal"
    NO_POOL = "no_pool"
    POOL_EMPTY = "pool_empty"
    HINTS_NOT_ALLOWED = "hints_not_allowed"
    HINT_TOO_SOON = "hint_too_soon"
    RATE_LIMITED = "rate_limited"
    CREATE_RATE_LIMITED = "create_rate_limited"
    TOO_MANY_LOBBIES = "too_many_lobbies"
    LOBBIES_FULL = "lobbies_full"
    SERVER_FULL = "server_full"
    TOO_MANY_CONNECTIONS = "too_many_connections"
    REQUEST_TIMEOUT = "request_timeout"
    BAD_REQUEST = "bad_request"
    BODY_TOO_LARGE = "body_too_large"
    UNAVAILABLE = "unavailable"
    INTERNAL = "internal"
    BAD_NAME = "bad_name"
    ACCOUNT_NAME_TAKEN = "account_name_taken"
    NAME_REGISTERED = "name_registered"
    BAD_KEY = "bad_key"
    ACCOUNT_REQUIRED = "account_required"
    PLAYER_NOT_FOUND = "player_not_found"
    NOT_ENOUGH_PLAYERS = "not_enough_players"
    REGISTER_RATE_LIMITED = "register_rate_limited"
    ORGANISER_REQUIRED = "organiser_required"
    EVENT_NOT_FOUND = "event_not_found"
    EVENT_CLOSED = "event_closed"
    EVENT_OVER = "event_over"
    NOT_AN_ENTRANT = "not_an_entrant"
    NOT_ENTERED = "not_entered"
    ENTRY_CONDITIONS_UNMET = "entry_conditions_unmet"
    ORGANISER_RATE_LIMITED = "organiser_rate_limited"
    UNSUPPORTED_MEDIA_TYPE = "unsupported_media_type"
    DEAL_SECRET = "deal_secret"
    # challenges (docs/protocol.md, "Challenges")
    CHALLENGE_NOT_FOUND = "challenge_not_found"
    CHALLENGE_EXPIRED = "challenge_expired"
    CHALLENGE_CLOSED = "challenge_closed"
    CHALLENGES_REFUSED = "challenges_refused"
    SELF_CHALLENGE = "self_challenge"
    TOO_MANY_CHALLENGES = "too_many_challenges"
    NOT_CHALLENGED = "not_challenged"
    NO_REMATCH = "no_rematch"
    NOT_A_RACER = "not_a_racer"
    REMATCH_CLOSED = "rematch_closed"
    BAD_SCHEDULE = "bad_schedule"
    # seeks
    SEEK_OUT_OF_RANGE = "seek_out_of_range"
    ALREADY_SEEKING = "already_seeking"
    NOT_SEEKING = "not_seeking"
    TOO_MANY_SEEK_POOLS = "too_many_seek_pools"
    SEEK_EXPIRED = "seek_expired"
    # the daily deal
    DAY_OVER = "day_over"

    @property
    def explanation(self) -> str:
        return _EXPLANATIONS[self]


_EXPLANATIONS = {
    ErrorCode.BAD_FRAME: "the frame is not a msgpack map with a string 'type' field",
    ErrorCode.UNKNOWN_TYPE: "no client message has that type",
    ErrorCode.BAD_FIELD: "a field is missing, of the wrong type or out of range",
    ErrorCode.VERSION_MISMATCH: "the client speaks another protocol version",
    ErrorCode.HELLO_REQUIRED: "the first frame of a connection must be hello",
    ErrorCode.ALREADY_JOINED: "this connection has already joined a race",
    ErrorCode.RACE_NOT_FOUND: "no race has that id or join code",
    ErrorCode.RACE_FULL: "every seat of the race is taken",
    ErrorCode.RACE_CLOSED: "the race has started or ended: new players cannot join (spectators can)",
    ErrorCode.NAME_TAKEN: "another player of the race has that name",
    ErrorCode.FORBIDDEN: "this connection may not do that",
    ErrorCode.NOT_YOUR_SEAT: "a move for another player's seat",
    ErrorCode.SPECTATOR_CANNOT_MOVE: "spectators watch; they cannot play",
    ErrorCode.RACE_NOT_STARTED: "the race has not started yet",
    ErrorCode.PLAYER_FINISHED: "this player's game is over (won or given up)",
    ErrorCode.RACE_OVER: "the race is over",
    ErrorCode.RACE_NOT_OVER: "the race has not ended yet: results come at the end",
    ErrorCode.BAD_TOKEN: "the token is not one this server signed for this race",
    ErrorCode.TOKEN_EXPIRED: "the token has expired",
    ErrorCode.STALE_SEQUENCE: "seq is not above the last accepted move's seq",
    ErrorCode.BAD_MOVE: "the move is not in the move notation",
    ErrorCode.UNDO_DISABLED: "this race does not allow undo",
    ErrorCode.BAD_VARIANT: "no game of the family has that name",
    ErrorCode.BAD_DEAL: "the deal source or deal number is not valid",
    ErrorCode.NO_POOL: "the server cannot check deals of that variant: use deal_source 'random' or 'number'",
    ErrorCode.POOL_EMPTY: "no checked deal was ready and none was found in time: try again in a few seconds",
    ErrorCode.HINTS_NOT_ALLOWED: "this race was created without hints",
    ErrorCode.HINT_TOO_SOON: "one hint at a time: wait a little before asking again",
    ErrorCode.RATE_LIMITED: "too many frames: slow down",
    ErrorCode.CREATE_RATE_LIMITED: "this address created races faster than the server allows: the message "
    "says when the next is allowed (HTTP 429 with Retry-After); nothing was stored",
    ErrorCode.TOO_MANY_LOBBIES: "this address has as many races waiting in the lobby as the server allows: "
    "start or let one expire first (HTTP 429 with Retry-After); nothing was stored",
    ErrorCode.LOBBIES_FULL: "the server holds as many races waiting in the lobby as it allows: try again "
    "later (HTTP 503 with Retry-After); nothing was stored",
    ErrorCode.SERVER_FULL: "this server process holds as many connections as it allows: reconnect later "
    "or to another server (HTTP 503 with Retry-After; a WebSocket is closed with 4007)",
    ErrorCode.TOO_MANY_CONNECTIONS: "this client address holds as many connections to this server process as "
    "one address may: close one or retry later (HTTP 429 with Retry-After; a WebSocket is closed with 4007)",
    ErrorCode.REQUEST_TIMEOUT: "the request's head or body did not arrive in time (HTTP 408; the connection "
    "is closed)",
    ErrorCode.BAD_REQUEST: "the request is not valid HTTP/1.1: a malformed request line or header, such as a "
    "control character like NUL in a header (HTTP 400), or a request head still unfinished past 16 KiB (HTTP 431); the "
    "connection is closed",
    ErrorCode.BODY_TOO_LARGE: "the request body is larger than the server reads (HTTP 413; the connection is "
    "closed)",
    ErrorCode.UNAVAILABLE: "the race store (Redis) does not answer; try again shortly",
    ErrorCode.INTERNAL: "the server failed on this frame; it has been logged",
    ErrorCode.BAD_NAME: "an account name is 2 to 24 letters, digits, '_' or '-', starting with a letter or digit",
    ErrorCode.ACCOUNT_NAME_TAKEN: "an account with that name, or one that looks like it, exists on this server",
    ErrorCode.NAME_REGISTERED: "that name belongs to a registered player: pick another, or join with its account key",
    ErrorCode.BAD_KEY: "the account key is not valid on this server (mistyped, or replaced by a newer one)",
    ErrorCode.ACCOUNT_REQUIRED: "this race is rated: only players with an account may join (thieves register NAME)",
    ErrorCode.PLAYER_NOT_FOUND: "no account has that name on this server",
    ErrorCode.NOT_ENOUGH_PLAYERS: "a rated race needs at least two players to start",
    ErrorCode.REGISTER_RATE_LIMITED: "this address registered accounts faster than the server allows: "
    "the message says when the next is allowed (HTTP 429 with Retry-After); nothing was stored",
    ErrorCode.ORGANISER_REQUIRED: "only the server's organiser token may do that (never a player's key); "
    "a server without --organiser-token runs no events",
    ErrorCode.EVENT_NOT_FOUND: "no event has that id",
    ErrorCode.EVENT_CLOSED: "the event takes no more entries (it started without late entry, its last round "
    "has begun, or an arena's time is up)",
    ErrorCode.EVENT_OVER: "the event is over: its final standings stand",
    ErrorCode.NOT_AN_ENTRANT: "this race is a heat of an event: only the entrants drawn into it may play",
    ErrorCode.NOT_ENTERED: "you have not entered this event: enter it first (POST /events/{id}/entrants), then "
    "check in",
    ErrorCode.ENTRY_CONDITIONS_UNMET: "the event asks more of an entrant's account than yours has yet (rated "
    "races, its age, a rating range): the message says what is missing (HTTP 403)",
    ErrorCode.ORGANISER_RATE_LIMITED: "this address sent too many wrong organiser tokens: wait before trying "
    "again (HTTP 429 with Retry-After)",
    ErrorCode.UNSUPPORTED_MEDIA_TYPE: "a request that may carry a body (POST, PUT, PATCH, DELETE) must say "
    "'Content-Type: application/json' (HTTP 415)",
    ErrorCode.DEAL_SECRET: "the race is over, but its deal and games stay secret while others may still play "
    "that deal (a daily deal's day, an event): its results show the standings only",
    ErrorCode.CHALLENGE_NOT_FOUND: "no challenge has that id (or it ended long enough ago to be forgotten)",
    ErrorCode.CHALLENGE_EXPIRED: "the challenge was not answered in time; nothing was made",
    ErrorCode.CHALLENGE_CLOSED: "the challenge was answered already (accepted, declined or cancelled)",
    ErrorCode.CHALLENGES_REFUSED: "that player does not take challenges (thieves account challenges off)",
    ErrorCode.SELF_CHALLENGE: "a challenge goes to another player, not to yourself",
    ErrorCode.TOO_MANY_CHALLENGES: "you have as many open challenges as the server allows: wait for an answer, "
    "or cancel one (thieves challenges cancel ID)",
    ErrorCode.NOT_CHALLENGED: "that challenge is not yours to answer: only the challenged player may accept "
    "or decline it, only the challenger may cancel it",
    ErrorCode.NO_REMATCH: "this race offers no rematch (a heat of an event, a play of the daily deal, or a race "
    "with a player who has no account)",
    ErrorCode.NOT_A_RACER: "only the racers of a race may offer or answer its rematch",
    ErrorCode.REMATCH_CLOSED: "a racer declined this rematch (or it is being made right now): a new offer can "
    "be made once this one expires",
    ErrorCode.BAD_SCHEDULE: "an event's starts_at is not in the future (or is after the year 9999), its repeat "
    "is not a five-field cron expression (or never comes before the year 10000), or it repeats without a "
    "starts_at; nothing was stored",
    # seeks
    ErrorCode.SEEK_OUT_OF_RANGE: "a seek asks for 2 to 8 players and a time limit of 30 to 3600 seconds; "
    "nothing was stored",
    ErrorCode.ALREADY_SEEKING: "this player already waits for a race (one seek at a time): cancel it first; "
    "nothing was stored",
    ErrorCode.NOT_SEEKING: "this connection has no seek waiting",
    ErrorCode.TOO_MANY_SEEK_POOLS: "this address's seeks wait in as many pools as one address may: seek in one "
    "of those, or cancel a seek there first; nothing was stored",
    ErrorCode.SEEK_EXPIRED: "nobody was paired with this seek in the time a seek may wait: seek again, maybe "
    "in a busier pool (thieves list shows them)",
    ErrorCode.DAY_OVER: "the day of this daily deal is over: a play begins and ends within its UTC day (the "
                        "day's board shows the deal and every game once it is over); play today's deal",
}

HTTP_STATUS: dict[ErrorCode, int] = {
    ErrorCode.BAD_KEY: 401,
    ErrorCode.ORGANISER_REQUIRED: 403, ErrorCode.CHALLENGES_REFUSED: 403,
    ErrorCode.NOT_CHALLENGED: 403, ErrorCode.NOT_A_RACER: 403, ErrorCode.ENTRY_CONDITIONS_UNMET: 403,
    ErrorCode.RACE_NOT_FOUND: 404, ErrorCode.PLAYER_NOT_FOUND: 404, ErrorCode.EVENT_NOT_FOUND: 404,
    ErrorCode.CHALLENGE_NOT_FOUND: 404,
    ErrorCode.REQUEST_TIMEOUT: 408,
    ErrorCode.RACE_NOT_OVER: 409, ErrorCode.DEAL_SECRET: 409, ErrorCode.ACCOUNT_NAME_TAKEN: 409,
    ErrorCode.EVENT_CLOSED: 409, ErrorCode.EVENT_OVER: 409, ErrorCode.NOT_ENTERED: 409,
    ErrorCode.CHALLENGE_CLOSED: 409, ErrorCode.NO_REMATCH: 409, ErrorCode.REMATCH_CLOSED: 409,
    ErrorCode.CHALLENGE_EXPIRED: 410,
    ErrorCode.BODY_TOO_LARGE: 413,
    ErrorCode.UNSUPPORTED_MEDIA_TYPE: 415,
    ErrorCode.CREATE_RATE_LIMITED: 429, ErrorCode.TOO_MANY_LOBBIES: 429, ErrorCode.TOO_MANY_CONNECTIONS: 429,
    ErrorCode.REGISTER_RATE_LIMITED: 429, ErrorCode.ORGANISER_RATE_LIMITED: 429,
    ErrorCode.TOO_MANY_CHALLENGES: 429,
    ErrorCode.INTERNAL: 500,
    ErrorCode.UNAVAILABLE: 503, ErrorCode.POOL_EMPTY: 503, ErrorCode.LOBBIES_FULL: 503, ErrorCode.SERVER_FULL: 503,
}
"""Each code's HTTP status, as docs/protocol.md gives it beside the code (400 for any code not here): one
table, so a handler raises the code and the answer carries the status the doc promises."""

MOVE_REASONS: frozenset[str] = frozenset(r.value for r in IllegalReason)
"""Rule reasons a ``reject`` may carry (the engine's IllegalReason codes)."""

ALL_CODES: frozenset[str] = MOVE_REASONS | {c.value for c in ErrorCode}


def explain(code: str) -> str:
    """A human sentence for any error or reject code."""
    try:
        return ErrorCode(code).explanation
    except ValueError:
        pass
    try:
        return IllegalReason(code).explanation
    except ValueError:
        return code


class CloseCode(enum.IntEnum):
    """WebSocket close codes the server uses; see :data:`CLOSE_EXPLANATIONS`.

    An ``error`` frame naming the cause precedes every 4xxx close.
    """

    NORMAL = 1000
    GOING_AWAY = 1001
    MESSAGE_TOO_BIG = 1009
    INTERNAL_ERROR = 1011
    SERVICE_RESTART = 1012
    TRY_AGAIN_LATER = 1013
    HELLO_REFUSED = 4000
    VERSION_MISMATCH = 4001
    HELLO_TIMEOUT = 4002
    BAD_TOKEN = 4003
    TOO_MANY_ERRORS = 4004
    FLOODING = 4005
    SLOW_READER = 4006
    SERVER_FULL = 4007
    KEY_REPLACED = 4008

    @property
    def explanation(self) -> str:
        return CLOSE_EXPLANATIONS[self]


CLOSE_EXPLANATIONS: dict[CloseCode, str] = {
    CloseCode.NORMAL: "the server ended the connection normally",
    CloseCode.GOING_AWAY: "the server is going away",
    CloseCode.MESSAGE_TOO_BIG: f"a frame exceeded {MAX_FRAME_BYTES} bytes",
    CloseCode.INTERNAL_ERROR: "the server hit an unexpected error",
    CloseCode.SERVICE_RESTART: "the server is restarting (graceful shutdown): reconnect",
    CloseCode.TRY_AGAIN_LATER: "the race store (Redis) is unavailable: reconnect later",
    CloseCode.HELLO_REFUSED: "hello was refused (race unknown, full or closed, bad name); see the error frame",
    CloseCode.VERSION_MISMATCH: "hello carried another protocol version",
    CloseCode.HELLO_TIMEOUT: "no valid hello arrived in time",
    CloseCode.BAD_TOKEN: "hello carried a forged, foreign or expired token",
    CloseCode.TOO_MANY_ERRORS: "too many bad frames on this connection",
    CloseCode.FLOODING: "the connection kept sending far above its rate limit",
    CloseCode.SLOW_READER: "the client read too slowly and its send queue filled up",
    CloseCode.SERVER_FULL: "the server process holds as many connections as it allows, or as many as one "
    "address may (the error frame says which): reconnect after a pause, or to another server",
    CloseCode.KEY_REPLACED: "the key this connection joined with was replaced: rejoin with the new key",
}
