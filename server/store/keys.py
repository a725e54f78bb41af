"""Every Redis key and channel name the server uses, in one place.

``{ID}`` (a race), ``{VARIANT}`` and ``{ADDR}`` are hash tags: every key one
script touches shares one, so the script runs in one slot of a Redis Cluster
(otherwise CROSSSLOT). The layout, and why, is in ``server/store/__init__.py``.
"""

from __future__ import annotations

EVENTS_MAX = 1000
"""About how many events a race's history keeps (XADD MAXLEN ~): a client
that missed more gets a full snapshot instead of a replay."""

ACTIVE = "races:active"
RECENT = "races:recent"
"""zset race id -> ended_at: the latest finished races (the front page's list), trimmed to RECENT_KEPT."""
RECENT_KEPT = 200
SECRET = "thieves:secret"
OPEN_LOBBIES = "lobbies:open"

_RACE = "race:{"
_CHANNEL_END = "}:chan"


class Keys:
    """Key names of one race (every one under the race's hash tag)."""

    __slots__ = ("race", "meta", "names", "progress", "history", "presence", "results", "chan", "tick", "free", "listening")

    def __init__(self, race: str) -> None:
        self.race = race
        base = f"{_RACE}{race}}}"
        self.meta = base
        self.names = f"{base}:names"
        self.progress = f"{base}:progress"
        self.history = f"{base}:history"
        self.presence = f"{base}:presence"
        self.results = f"{base}:results"
        self.chan = f"{base}:chan"
        self.tick = f"{base}:tick"
        self.listening = f"{base}:listening"
        """The processes that listen to the race's channel: instance -> lease expiry (ms), a sorted set."""
        self.free = f"{base}:free"

    def player(self, seat: int) -> str:
        return f"{self.meta}:p:{seat}"

    def log(self, seat: int) -> str:
        return f"{self.meta}:log:{seat}"

    def hint(self, seat: int) -> str:
        return f"{self.meta}:hint:{seat}"

    def seats(self) -> list[str]:
        """The keys a seat-changing script (join, leave, the lobby sweep) takes, in its KEYS order."""
        return [self.meta, self.names, self.progress, self.history, self.presence, self.free]

    def every(self, players: int) -> list[str]:
        """Every key the race may have, the race hash first (for EXPIRE and DEL)."""
        out = [self.meta, self.names, self.progress, self.history, self.presence, self.results, self.tick,
               self.free, self.listening]
        seats = range(players)
        return out + [self.player(s) for s in seats] + [self.log(s) for s in seats] + [self.hint(s) for s in seats]


KEYS_REPLACED = "accounts:key-replaced"
"""Pub/sub channel: ``<account> <old key hash>`` for each key just replaced (``POST /players/{name}/key``);
every process listens, and closes the connections that joined with the old key (docs/protocol.md)."""


def race_of_channel(channel: bytes | str) -> str | None:
    """The race id of a race's pub/sub channel (None for any other channel)."""
    name = channel.decode() if isinstance(channel, bytes) else channel
    if not (name.startswith(_RACE) and name.endswith(_CHANNEL_END)):
        return None
    return name[len(_RACE):-len(_CHANNEL_END)]


def code_key(code: str) -> str:
    """A join code's key: it names the race id."""
    return f"code:{code}"


def checked_key(variant: str) -> str:
    """One key per variant (its own hash tag): every pool operation is a one-key command."""
    return f"checked:{{{variant}}}"


def creator_keys(client: str) -> tuple[str, str]:
    """The creation bucket and lobby set of one client address (one hash tag: one slot)."""
    return f"creator:{{{client}}}:bucket", f"creator:{{{client}}}:lobbies"


def seek_places_key(client: str) -> str:
    """hash seek id -> pool: the seeks of one client address waiting (or forming a race), for the cap on
    the pools one address may wait in (its own slot, as a player's seek lock)."""
    return f"creator:{{{client}}}:seeks"


def presence_member(seat: int, gen: int, connection: str) -> str:
    """A presence zset member: the seat first, so a sweep knows whose count to lower, then the seat's
    generation (a lease of a seat given back in the lobby never counts for its next player)."""
    return f"{seat}|{gen}.{connection}"


RESULTS_PENDING = "results:pending"
"""zset race id -> when it was put there (ms): finished races whose results are not yet applied to
accounts (history, totals, ratings). Written before the race ends, removed once every part is applied."""


class AccountKeys:
    """Key names of one account (every one under the account's hash tag, its lower-case name).

    ``account:{bob}`` hash: name (as registered), key_hash (hex SHA-256 of the key's secret),
    key_since (when the key last replaced another, ms; absent before), created_at, races, wins,
    challenges ("off" while the account refuses challenges; absent: it takes them), and per variant ``v:<variant>:races|wins|best_ms|mu|sigma|rated``;
    ``:history`` zset race id -> ended_at; ``:entries`` hash race id -> JSON HistoryEntry.
    """

    __slots__ = ("account", "main", "history", "entries", "challenges", "sent")

    def __init__(self, account: str) -> None:
        self.account = account
        self.main = f"account:{{{account}}}"
        self.history = f"{self.main}:history"
        self.entries = f"{self.main}:entries"
        self.challenges = f"{self.main}:challenges"
        """zset challenge id -> expires_at: the challenges the account sent or received (an index: the
        challenge's own hash says which, and whether it still exists)."""
        self.sent = f"{self.main}:sent"
        """zset ``ID:CHALLENGED`` -> until when the challenge counts as open (its expiry, or sooner its
        challenger's lease): the open challenges the account sent, counted against the caps in one script
        (challenge_slot.lua)."""


NAMES_INDEXED = "accounts:names-indexed"
"""The :data:`~shared.names.LOOK_VERSION` every account's name is indexed by (absent: not known to be;
``AccountStore.reindex``)."""
ACCOUNT_MATCH = "account:{*}"
"""SCAN pattern of the accounts' main hashes (and their ``:history``/``:entries``, to skip)."""


def name_index_key(key: str) -> str:
    """string -> account id: the account whose name has the confusable key ``key`` (shared/names.py's
    ``name_key``), in its own slot. One key per look of a name, so of two registrations of look-alike
    names exactly one can set it, atomically, on a Redis Cluster too."""
    return f"account-name:{{{key}}}"


def leaderboard_key(variant: str) -> str:
    """zset account -> shown rating, of the accounts with a rating in ``variant`` (its own slot)."""
    return f"leaderboard:{{{variant}}}"


def rating_plan_key(race: str) -> str:
    """The race's whole rating update, stored once (under the race's hash tag) before any account's part."""
    return f"{Keys(race).meta}:ratings"


def register_keys(client: str) -> str:
    """A client address's account-registration token bucket (its own hash tag)."""
    return f"register:{{{client}}}:bucket"


def organiser_keys(client: str) -> str:
    """A client address's bucket of failed organiser-token attempts (its own hash tag)."""
    return f"organiser:{{{client}}}:bucket"


EVENTS_ACTIVE = "events:active"
"""zset event id -> creation time: events open for entries or running (the runner's work list)."""
EVENTS_ALL = "events:all"
"""zset event id -> creation time: every event kept (``GET /events``)."""


class EventKeys:
    """Key names of one tournament event (every one under the event's hash tag).

    ``event:{E}`` hash: the settings, status, round, round_state, pairings (an arena's count of
    pairings), next_at, claim_until, version,
    the current round's secret deal (``deal``, ``line``) and ``schedule`` (JSON list of the rounds
    drawn: heats, their races and entrants, each round's deal); ``:entrants`` hash account -> JSON
    {name, joined_at, from_round, withdrawn}; ``:results`` hash "<round>|<account>" -> JSON of the
    entrant's round (scoring.RoundResult and its doubled points). Nothing is published: the feeds and
    the runner read the event's ``version``.
    """

    __slots__ = ("event", "meta", "entrants", "results", "arena", "races")

    def __init__(self, event: str) -> None:
        self.event = event
        series, dash, occurrence = event.partition("-")
        # An occurrence of a series ("S-3") shares its series' hash tag, so that one script may create
        # the next occurrence, or cancel the series and its next occurrence, at once (series_keys).
        self.meta = f"event:{{{series}}}{dash}{occurrence}"
        self.entrants = f"{self.meta}:entrants"
        self.results = f"{self.meta}:results"
        self.arena = f"{self.meta}:arena"
        """Arenas: hash account -> JSON state {status, race, points, streak, wins, races, home, last}."""
        self.races = f"{self.meta}:races"
        """Arenas: hash race id -> JSON {entrants, starts_at, started, scored}."""


def series_key(series: str) -> str:
    """A recurring event's series (hash: repeat, settings, last, latest, cancelled), under the hash tag
    its occurrences (``S-1``, ``S-2``, ...: :class:`EventKeys`) share."""
    return f"series:{{{series}}}"


def occurrence_id(series: str, number: int) -> str:
    """The id of occurrence ``number`` of ``series``: known in advance, so that of the processes that
    make it one does (the event's create script writes a new event only)."""
    return f"{series}-{number}"


class DailyKeys:
    """The daily deal of one variant on one UTC day (one hash tag: ``{<variant>:<date>}``).

    ``daily:{forty-thieves:2026-12-01}`` hash: deal, line (a checked deal's winning line), created_at;
    ``:plays`` hash account -> the race id of its one play of the day.
    """

    __slots__ = ("day", "plays")

    def __init__(self, variant: str, date: str) -> None:
        self.day = f"daily:{{{variant}:{date}}}"
        self.plays = f"{self.day}:plays"


def challenge_key(challenge: str) -> str:
    """A challenge's hash (records.ChallengeRecord), under its own hash tag: every step of a challenge
    is a one-key script. It outlives its answer by ``challenges.KEEP_MS`` (a Redis TTL), so a late
    answer reads ``challenge_expired`` or the outcome rather than ``challenge_not_found``."""
    return f"challenge:{{{challenge}}}"


def rematch_key(race: str) -> str:
    """A finished race's rematch offer (hash: ``status``, ``expires_at``, ``a:<account>`` yes/no, then the new
    ``race`` and ``code``; ``claim``/``claim_until`` while the new race is made), under the race's hash
    tag: one-key scripts. It goes ``challenges.KEEP_MS`` after the offer's expiry (a Redis TTL)."""
    return f"{Keys(race).meta}:rematch"


SEEK_POOLS = "seeks:pools"
"""set of pool names (shared/seeks.py ``Pool.key``) in use: the waves' and the front page's list (an idle pool
leaves it at its next wave: store/seeks.py ``drop_if_idle``)."""


class SeekKeys:
    """Key names of one seek pool (every one under the pool's hash tag, its name: one slot).

    ``seek:{P}:q`` hash seek id -> msgpack SeekEntry (waiting); ``:alive`` zset seek id -> until when its
    connection vouches for it (ms; a placed seek's too, until its race is settled); ``:got`` hash seek id
    -> msgpack Matched (placed, race not settled); ``:formed`` zset race -> join deadline; ``:races``
    hash race -> msgpack FormedRace; ``:wave`` the last wave number claimed (one pairing per wave);
    ``:pairing`` the token of the process pairing the pool now (a lease: no two pairings of one pool
    overlap).
    """

    __slots__ = ("pool", "q", "alive", "got", "formed", "races", "wave", "pairing")

    def __init__(self, pool: str) -> None:
        self.pool = pool
        base = f"seek:{{{pool}}}"
        self.q = f"{base}:q"
        self.alive = f"{base}:alive"
        self.got = f"{base}:got"
        self.formed = f"{base}:formed"
        self.races = f"{base}:races"
        self.wave = f"{base}:wave"
        self.pairing = f"{base}:pairing"

    def all(self) -> list[str]:
        """The keys a match or settle script takes, in its KEYS order."""
        return [self.q, self.alive, self.got, self.formed, self.races]


def seeker_key(who: str) -> str:
    """string -> ``<pool> <seek id>``: the one seek a player has (its own slot), set only if absent."""
    return f"seeker:{{{who}}}"


def shy_key(who: str) -> str:
    """Counter (expiring) of the races formed from a player's seeks that it did not come to."""
    return f"seek-shy:{{{who}}}"
