"""Server settings: defaults, environment variables and command-line flags.

Every setting has a sane default so that ``thieves-server`` alone runs a
working server; each can be set by flag or by a ``THIEVES_*`` variable
(flags win), so the same binary suits a laptop and a deployment.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Generic, Sequence, TypeVar, overload

from shared.protocol import MIN_TIME_LIMIT
from shared.variants import UnknownVariant, get_variant


MIN_ORGANISER_TOKEN = 16
"""Shortest ``--organiser-token`` the server starts with: 16 random characters are far beyond
guessing at the rate the per-address limit allows."""
MAX_LINGER_MS = 100.0
"""Most ``--commit-linger-ms``: longer would be a wait a player feels on every move of a busy server."""
REPLICA_ACKS = ("auto", "on", "off")
"""The values of ``--replica-acks`` (server/store/replicas.py)."""
MAX_REPLICA_ACK_TIMEOUT_MS = 2_500
"""Most ``--replica-ack-timeout``: the WAIT rides in a round trip of moves, which is given up after 5 s
(server/store/batcher.py ``EXCHANGE_TIMEOUT``); half that leaves the write itself its time."""


def option(default: Any, part: str, help: str, secret: bool = False) -> Any:
    """A setting: its default, the part of the server it belongs to (its group in ``--help``), and its one
    description, which ``--help`` shows with its environment variable. A secret is kept out of ``repr``."""
    return field(default=default, repr=not secret, metadata={"part": part, "help": help})


PARTS = {
    "process": "this process",
    "redis": "Redis",
    "races": "races",
    "edge": "the connection edge",
    "deals": "deals",
    "accounts": "accounts",
    "matchmaking": "matchmaking",
    "events": "events",
}
"""The parts of the server whose settings are grouped together, in ``--help``'s order; each is also the
name of its section of :class:`Config` (``config.races`` …)."""


# -- The sections: each part of the server takes its own settings, not the whole process's. Each is filled
# from the flat options of its part (``Config.races`` …), so an option is still described once, in Config,
# and the flags, environment variables, ``--help`` and the start summary stay one list (tests/test_config.py
# checks that a section holds exactly its part's options, typed alike).


@dataclass(frozen=True)
class ProcessSettings:
    """Where this process listens, its log, its shutdown (``Config.process``)."""

    host: str
    port: int
    log_level: str
    graceful_timeout: float


@dataclass(frozen=True)
class RedisSettings:
    """Which Redis, and how moves are sent to it (``Config.redis``)."""

    redis_url: str | None
    redis_cluster: bool
    redis_sentinel: str | None
    redis_master: str | None
    redis_wait: float
    data_dir: str
    commit_linger_ms: float
    replica_acks: str
    replica_ack_timeout: int

    def redis_urls(self) -> list[str]:
        """The URLs of ``--redis-url``: one Redis, or a cluster's start nodes (comma-separated: a cluster
        is found through any one of them that answers, so no node named here is needed alive)."""
        return [url.strip() for url in (self.redis_url or "").split(",") if url.strip()]

    def sentinels(self) -> list[tuple[str, int]]:
        """``(host, port)`` of each Sentinel of ``--redis-sentinel``; ``ValueError`` for a malformed one."""
        found = []
        for item in (self.redis_sentinel or "").split(","):
            host, colon, port = item.strip().rpartition(":")
            if not item.strip():
                continue
            if not colon or not host or not port.isdigit() or not 0 < int(port) < 65536:
                raise ValueError(f"--redis-sentinel is host:port[,host:port...], not {item.strip()!r}")
            found.append((host.strip("[]"), int(port)))
        return found

    def check(self) -> None:
        """``ValueError`` for settings that name Redis in two ways, or half of a way: Sentinel finds the
        master itself, so a URL beside it would be a second, contradicting answer."""
        sentinels = self.sentinels()
        if sentinels and self.redis_url:
            raise ValueError("--redis-url and --redis-sentinel both name the Redis: give one (with Sentinel, "
                             "--redis-master names the master Sentinel watches)")
        if sentinels and self.redis_cluster:
            raise ValueError("--redis-sentinel is for one Redis with replicas; a Redis Cluster fails over by "
                             "itself: give its nodes with --redis-url and --redis-cluster yes")
        if bool(sentinels) != bool(self.redis_master):
            raise ValueError("--redis-sentinel and --redis-master go together: the Sentinels to ask, and the "
                             "name of the master they watch")
        if len(self.redis_urls()) > 1 and not self.redis_cluster:
            raise ValueError("--redis-url lists several nodes only for a Redis Cluster (--redis-cluster yes); "
                             "for one Redis with replicas use --redis-sentinel")


@dataclass(frozen=True)
class RaceSettings:
    """Races' tokens, pacing, lobbies and creation limits (``Config.races``)."""

    token_secret: str | None = field(repr=False)
    token_ttl: int
    countdown: float
    progress_hz: float
    racer_hz: float
    retention: int
    lobby_ttl: int
    presence_lease: float
    create_burst: int
    create_interval: float
    lobbies_per_address: int
    lobbies_max: int


@dataclass(frozen=True)
class EdgeSettings:
    """The connection edge: queues, frame limits, HTTP timeouts and caps (``Config.edge``)."""

    send_queue: int
    send_bytes: int
    rate: float
    burst: int
    max_errors: int
    hello_timeout: float
    max_connections: int
    connections_per_address: int
    header_timeout: float
    body_timeout: float
    max_body: int
    trusted_proxies: str


@dataclass(frozen=True)
class DealSettings:
    """The checked-deal pool and hints (``Config.deals``)."""

    hint_budget: float
    hint_interval: float
    hint_workers: int
    checked_pool_size: int
    checked_variants: str
    checked_budget: float
    checked_wait: float

    def checked_targets(self) -> dict[str, int]:
        """Variant key -> deals to keep in its private pool; ``ValueError`` for an unknown variant."""
        if self.checked_pool_size <= 0:
            return {}
        out = {}
        for name in self.checked_variants.split(","):
            if not name.strip():
                continue
            try:
                out[get_variant(name.strip()).key] = self.checked_pool_size
            except UnknownVariant as exc:
                raise ValueError(f"--checked-variants: {exc}") from None
        return out


@dataclass(frozen=True)
class AccountSettings:
    """Registration and history (``Config.accounts``)."""

    history_max: int
    register_burst: int
    register_interval: float


@dataclass(frozen=True)
class MatchmakingSettings:
    """Challenges, rematches and seeks (``Config.matchmaking``)."""

    challenge_time: int
    seek_wave: float
    seek_join: float
    seek_expire: float
    seek_pools_per_address: int
    seek_deals: str


@dataclass(frozen=True)
class TournamentSettings:
    """Events, the daily deal and fair play (``Config.events``; not store/events.py's ``EventSettings``,
    which are one event's own)."""

    daily_time_limit: int
    daily_min_rated_races: int
    daily_min_account_age: int
    fairplay_cpu: float
    fairplay_link_ms: int
    organiser_token: str | None = field(repr=False)
    organiser_burst: int
    organiser_interval: float


Section = TypeVar("Section")


class SectionOf(Generic[Section]):
    """A :class:`Config` attribute that is one part's section, filled from the options of the same names
    the first time it is read, then kept in the instance (like ``functools.cached_property``: a frozen
    dataclass's ``__dict__`` still takes it; not a dataclass field, so no flag and no summary line)."""

    def __init__(self, kind: type[Section]) -> None:
        self.kind = kind
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, config: None, owner: type) -> "SectionOf[Section]": ...
    @overload
    def __get__(self, config: object, owner: type) -> Section: ...
    def __get__(self, config: object, owner: type) -> "Section | SectionOf[Section]":
        if config is None:
            return self
        made = self.kind(**{f.name: getattr(config, f.name) for f in fields(self.kind)})  # type: ignore[arg-type]
        config.__dict__[self.name] = made
        return made


@dataclass(frozen=True)
class Config:
    """Every setting of a server process, grouped by the part that reads it; each described once (its
    ``help``: ``--help`` prints it, with the environment variable and the default). A part is handed its
    section (``config.races``, ``config.edge`` …), not this whole object: what it may read is then its
    type, and a test builds it without the other parts' settings."""

    # -- this process: where it listens, its log, its shutdown
    host: str = option("127.0.0.1", "process", "address to listen on")
    port: int = option(8000, "process", "port to listen on (0 picks a free one)")
    log_level: str = option("info", "process", "debug, info, warning or error")
    graceful_timeout: float = option(5.0, "process", "seconds shutdown waits for connections before closing them")

    # -- Redis: which one, and how moves are sent to it
    redis_url: str | None = option(None, "redis",
        "Redis to use (redis://, rediss:// or unix://; a cluster's nodes comma-separated); default: start "
        "an embedded redis-server (or the master --redis-sentinel finds)")
    redis_cluster: bool = option(False, "redis",
        "the Redis URL names nodes of a Redis Cluster (yes/no); several, comma-separated: the server starts "
        "while any one of them answers")
    redis_sentinel: str | None = option(None, "redis",
        "Sentinels (host:port, comma-separated) that find the master of one Redis with replicas, and "
        "again after a failover (instead of --redis-url; with --redis-master)")
    redis_master: str | None = option(None, "redis",
        "name of the master the --redis-sentinel Sentinels watch (their 'sentinel monitor' name)")
    redis_wait: float = option(30.0, "redis",
        "seconds to retry an unreachable Redis at start (with backoff) before exiting")
    data_dir: str = option(".thieves-data", "redis", "directory of the embedded Redis's append-only file")
    commit_linger_ms: float = option(5.0, "redis",
        "milliseconds a busy process waits for more moves to send to Redis together (only when moves "
        "arrive faster than one per linger; 0: never wait)")
    replica_acks: str = option("auto", "redis",
        "acknowledge a move, join or give-up only once a Redis replica has it (Redis WAIT), so that a "
        "failover loses nothing a player was told succeeded: on, off, or auto (on while the master "
        "reports a connected replica, checked at start and every few seconds)")
    replica_ack_timeout: int = option(500, "redis",
        "milliseconds a write waits for a replica to have it (replica acks on); beyond, the player is "
        "told unavailable and may resend")

    # -- races: tokens, pacing, lobbies and creation limits
    token_secret: str | None = option(None, "races",
        "HMAC key for player tokens; default: generated once and stored in Redis", secret=True)
    token_ttl: int = option(86_400, "races", "seconds a player token stays valid")
    countdown: float = option(3.0, "races", "seconds between the start signal and starts_at")
    progress_hz: float = option(10.0, "races", "most progress frames per second per race")
    racer_hz: float = option(4.0, "races",
        "most progress frames per second to a race's racers (its spectators get progress_hz)")
    retention: int = option(7 * 86_400, "races", "seconds a finished race's results stay in Redis")
    lobby_ttl: int = option(3_600, "races", "seconds a race may wait in the lobby before it is removed")
    presence_lease: float = option(15.0, "races",
        "seconds a dead server process's players still count as connected, a lobby seat stays taken "
        "after its last connection closed, and a challenge stays open after its challenger stopped "
        "waiting for the answer")
    create_burst: int = option(10, "races",
        "races one client address may create at once, over every process (0: no rate limit)")
    create_interval: float = option(6.0, "races",
        "seconds per race creation the per-address bucket gives back once the burst is spent")
    lobbies_per_address: int = option(20, "races",
        "lobbies (races not started yet) one client address may have open (0: no cap)")
    lobbies_max: int = option(10_000, "races", "lobbies open at once over every process (0: no cap)")

    # -- the connection edge: queues, frame limits, HTTP timeouts and caps
    send_queue: int = option(256, "edge", "frames queued per connection before a slow reader is cut loose")
    send_bytes: int = option(262_144, "edge",
        "bytes sent to a connection and not yet acknowledged by its TCP before a slow reader is cut "
        "loose")
    rate: float = option(60.0, "edge", "frames per second a connection may send (token bucket refill)")
    burst: int = option(120, "edge", "token bucket size: frames a connection may send at once")
    max_errors: int = option(20, "edge",
        "bad frames tolerated (refilling one per second) before closing the connection")
    hello_timeout: float = option(10.0, "edge", "seconds a new connection has to send hello")
    max_connections: int = option(0, "edge",
        "connections this process holds (WebSockets, event streams, HTTP keep-alive, requests being "
        "read) before refusing with server_full (HTTP 503, WebSocket close 4007) (0: the open-file limit "
        "less the descriptors kept for Redis, /health, /metrics and workers)")
    connections_per_address: int = option(64, "edge",
        "connections one client address may hold on this process before refusing with "
        "too_many_connections (HTTP 429, WebSocket close 4007) (0: no cap)")
    header_timeout: float = option(10.0, "edge",
        "seconds a request's head may take to arrive (HTTP 408 and close beyond)")
    body_timeout: float = option(30.0, "edge",
        "seconds a request's body may take to arrive once its head is in (HTTP 408 and close beyond)")
    max_body: int = option(65_536, "edge",
        "bytes a request body may have (HTTP 413 beyond, refused before it is read)")
    trusted_proxies: str = option("", "edge",
        "comma-separated addresses or networks of reverse proxies whose X-Forwarded-For names the client "
        "(default: none, the socket peer is the client)")

    # -- deals: the checked-deal pool and hints
    hint_budget: float = option(0.3, "deals", "seconds of solver time per hint in races that allow hints")
    hint_interval: float = option(5.0, "deals", "seconds a player must wait between two hints")
    hint_workers: int = option(1, "deals",
        "solver processes for hints (0: a thread of the server, which slows other players' moves)")
    checked_pool_size: int = option(8, "deals",
        "checked deals (secret, proved winnable) the server keeps ready per variant for pool races, "
        "solving fresh random deals in a low-priority worker process (0: keep none)")
    checked_variants: str = option("forty-thieves,sixty-thieves", "deals",
        "comma-separated variants whose checked-deal pool is kept full (pool races of other variants are "
        "solved on demand)")
    # Measured on a 2-core machine: most deals the solver wins at 2 s it wins within 0.1 s (Forty Thieves 16
    # of the 20 won at 2 s are won at 0.5 s), so 0.5 s fills about three times faster than 2 s (Forty Thieves
    # about 16 deals a minute instead of 5; Sixty Thieves about 4 instead of 1.5, with the pure-Python
    # solver). With the compiled solver (v5), 60 random deals at 0.5 s: Forty Thieves 20 won, about 60 a
    # CPU-minute; Sixty Thieves 11 won, about 26 a CPU-minute.
    checked_budget: float = option(0.5, "deals",
        "CPU seconds of solver time per random deal tried for the checked pool (deals not won in that "
        "time are dropped)")
    checked_wait: float = option(8.0, "deals",
        "seconds creating a pool race may spend solving when the checked pool is empty, before answering "
        "pool_empty (0: at once)")

    # -- accounts: registration and history
    history_max: int = option(1_000, "accounts", "races each account's history keeps (the newest)")
    register_burst: int = option(5, "accounts",
        "accounts one client address may register at once, over every process (0: no limit)")
    register_interval: float = option(60.0, "accounts",
        "seconds per registration the per-address bucket gives back once the burst is spent")

    # -- matchmaking: challenges, rematches and seeks
    challenge_time: int = option(120, "matchmaking",
        "seconds a challenge waits for the challenged player's answer before it expires, and a rematch "
        "offer for every racer's yes")
    seek_wave: float = option(0.5, "matchmaking", "seconds between two pairing waves of a seek pool")
    seek_join: float = option(10.0, "matchmaking",
        "seconds the players of a race formed from seeks have to join it (then a no-show is dropped)")
    seek_expire: float = option(600.0, "matchmaking",
        "seconds a seek may wait in its pool before it expires (the seeker is told: seek_expired)")
    seek_pools_per_address: int = option(4, "matchmaking",
        "seek pools one client address may wait in at once (0: no cap)")
    seek_deals: str = option("pool", "matchmaking",
        "deals of races formed from seeks: pool (a checked deal when one is ready, else random) or "
        "random")

    # -- events and the daily deal
    daily_time_limit: int = option(900, "events",
        "seconds each account's play of the daily deal lasts, from its own start")
    daily_min_rated_races: int = option(3, "events",
        "finished rated races in the deal's variant an account needs to count on the daily board (its "
        "play is listed after the counted ones)")
    daily_min_account_age: int = option(86_400, "events",
        "seconds an account must have existed to count on the daily board (a scout made for the day does "
        "not)")
    fairplay_cpu: float = option(6.0, "events",
        "seconds of solver CPU the fair-play analysis spends on one game at most, after the race, in the "
        "low-priority solver worker")
    fairplay_link_ms: int = option(5_000, "events",
        "accounts registered within this many ms of each other are linked in fair-play flags (0: only a "
        "shared registration address links them)")
    organiser_token: str | None = option(None, "events",
        "the secret that creates and starts tournament events (HTTP Authorization: Bearer); default: "
        "none, and the server runs no events", secret=True)
    organiser_burst: int = option(10, "events",
        "wrong organiser tokens one client address may send at once, over every process, before it is "
        "refused (429) whatever it sends (0: no limit)")
    organiser_interval: float = option(6.0, "events",
        "seconds per wrong organiser token the per-address bucket gives back once the burst is spent")

    def summary(self) -> dict[str, Any]:
        """What the server prints at start (never the secret)."""
        d = asdict(self)
        d["token_secret"] = "set" if self.token_secret else "generated, kept in Redis"
        d["organiser_token"] = "set" if self.organiser_token else "none (no events)"
        d["redis_url"] = self.redis_url or (
            "found by Sentinel" if self.redis_sentinel else f"embedded (data in {Path(self.data_dir).resolve()})")
        d["checked_variants"] = ", ".join(self.deals.checked_targets()) or "none (pool races solve on demand)"
        return d

    # -- each part's section, made on first use (a frozen Config never changes)
    process = SectionOf(ProcessSettings)
    redis = SectionOf(RedisSettings)
    races = SectionOf(RaceSettings)
    edge = SectionOf(EdgeSettings)
    deals = SectionOf(DealSettings)
    accounts = SectionOf(AccountSettings)
    matchmaking = SectionOf(MatchmakingSettings)
    events = SectionOf(TournamentSettings)


SECTIONS: dict[str, type] = {part: vars(Config)[part].kind for part in PARTS}
"""Each part's section class, by the part's name (its attribute of :class:`Config`)."""


def _yes_no(text: str) -> bool:
    """A switch from a flag or the environment: 1/0, yes/no, true/false, on/off."""
    word = text.strip().lower()
    if word in ("1", "yes", "true", "on"):
        return True
    if word in ("0", "no", "false", "off"):
        return False
    raise ValueError(f"expected yes or no, not {text!r}")


def env_name(name: str) -> str:
    return "THIEVES_" + name.upper()


def parse_args(argv: Sequence[str] | None = None, environ: dict[str, str] | None = None) -> Config:
    """Flags over environment over defaults."""
    env = os.environ if environ is None else environ
    parser = argparse.ArgumentParser(
        prog="thieves-server",
        description="The Forty Thieves race server: races in Redis, msgpack over WebSockets. "
        "Every option can also be set by the environment variable shown.",
    )
    defaults = Config()
    groups = {part: parser.add_argument_group(title) for part, title in PARTS.items()}
    for f in fields(Config):
        default = getattr(defaults, f.name)
        kind: Any = type(default) if default is not None else str
        if kind is bool:
            kind = _yes_no
        raw = env.get(env_name(f.name))
        try:
            value = kind(raw) if raw not in (None, "") else default
        except ValueError as exc:
            raise ValueError(f"{env_name(f.name)}={raw!r} does not convert: {exc}") from None
        groups[f.metadata["part"]].add_argument(
            "--" + f.name.replace("_", "-"),
            type=kind,
            default=value,
            help=f"{f.metadata['help']} (env {env_name(f.name)}; default {default!r})",
        )
    ns = parser.parse_args(argv)
    config = Config(**vars(ns))
    config.redis.check()
    if config.organiser_token is not None and len(config.organiser_token) < MIN_ORGANISER_TOKEN:
        raise ValueError(f"--organiser-token must be at least {MIN_ORGANISER_TOKEN} characters (it is "
                         f"{len(config.organiser_token)}): a short one is guessed; make one with "
                         "python3 -c 'import secrets; print(secrets.token_hex(24))'")
    for name in ("progress_hz", "racer_hz"):
        if not getattr(config, name) > 0:  # also refuses nan
            raise ValueError(f"--{name.replace('_', '-')} is frames a second: more than 0, not {getattr(config, name)}")
    if not 0 <= config.commit_linger_ms <= MAX_LINGER_MS:  # also refuses nan
        raise ValueError(f"--commit-linger-ms is milliseconds from 0 to {MAX_LINGER_MS:g}, not {config.commit_linger_ms}")
    if config.replica_acks not in REPLICA_ACKS:
        raise ValueError(f"--replica-acks is one of {', '.join(REPLICA_ACKS)}, not {config.replica_acks!r}")
    if not 0 < config.replica_ack_timeout <= MAX_REPLICA_ACK_TIMEOUT_MS:
        raise ValueError(f"--replica-ack-timeout is milliseconds from 1 to {MAX_REPLICA_ACK_TIMEOUT_MS}, "
                         f"not {config.replica_ack_timeout}")
    if config.daily_time_limit < MIN_TIME_LIMIT:  # the daily deal's races keep every race's minimum too
        raise ValueError(f"--daily-time-limit must be at least {MIN_TIME_LIMIT} seconds, not {config.daily_time_limit}")
    if config.seek_deals not in ("pool", "random"):
        raise ValueError(f"--seek-deals is pool or random, not {config.seek_deals!r}")
    return config
