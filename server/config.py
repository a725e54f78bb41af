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
from typing import Any, Sequence

from shared.protocol import MIN_TIME_LIMIT
from shared.variants import UnknownVariant, get_variant


MIN_ORGANISER_TOKEN = 16
"""Shortest ``--organiser-token`` the server starts with: 16 random characters are far beyond
guessing at the rate the per-address limit allows."""
MAX_LINGER_MS = 100.0
"""Most ``--commit-linger-ms``: longer would be a wait a player feels on every move of a busy server."""


@dataclass(frozen=True)
class Config:
    host: str = "127.0.0.1"
    port: int = 8000
    redis_url: str | None = None
    """None: start an embedded redis-server with its data in ``data_dir``."""
    redis_cluster: bool = False
    """The URL names one node of a Redis Cluster (the rest are discovered)."""
    redis_wait: float = 30.0
    """Seconds to keep retrying an unreachable Redis at start before giving up."""
    data_dir: str = ".thieves-data"
    token_secret: str | None = field(default=None, repr=False)
    """None: generate one and keep it in Redis, so every process agrees."""
    token_ttl: int = 86_400
    countdown: float = 3.0
    progress_hz: float = 10.0
    racer_hz: float = 4.0
    """Most progress frames a second to a race's racers (its spectators: ``progress_hz``)."""
    commit_linger_ms: float = 5.0
    """Milliseconds a busy process gathers moves before it sends them to Redis together (server/store/batcher.py)."""
    send_queue: int = 256
    send_bytes: int = 262_144
    """Bytes written to a client and not yet acknowledged by its TCP before it is cut as a slow reader."""
    rate: float = 60.0
    burst: int = 120
    max_errors: int = 20
    hello_timeout: float = 10.0
    retention: int = 7 * 86_400
    history_max: int = 1_000
    """History entries each account keeps (the newest; older ones are dropped as new ones come)."""
    lobby_ttl: int = 3_600
    presence_lease: float = 15.0
    graceful_timeout: float = 5.0
    hint_budget: float = 0.3
    """Seconds of solver time per hint (races that allow hints)."""
    hint_interval: float = 5.0
    """Seconds a player waits between two hints."""
    hint_workers: int = 1
    """Solver processes for hints; 0 runs them in a thread of the server process."""
    checked_pool_size: int = 8
    """Checked deals kept ready per variant of ``checked_variants`` in the private pool (0: none kept)."""
    checked_variants: str = "forty-thieves,sixty-thieves"
    """Comma-separated variants whose private pool is kept topped up (others are solved on demand)."""
    checked_budget: float = 0.5
    """CPU seconds of solver time per random deal tried for the private pool. Measured on this
    2-core machine: most deals the solver wins at 2 s it wins within 0.1 s (Forty Thieves 16 of the
    20 won at 2 s are won at 0.5 s), so 0.5 s fills about three times faster than 2 s
    (Forty Thieves about 16 deals a minute instead of 5; Sixty Thieves about 4 instead of 1.5, with
    the pure-Python solver). With the compiled solver (v5), 60 random deals at 0.5 s: Forty Thieves
    20 won, about 60 a CPU-minute; Sixty Thieves 11 won, about 26 a CPU-minute."""
    checked_wait: float = 8.0
    """Seconds a pool race's creation may spend solving when the private pool is empty (0: fail at once)."""
    max_connections: int = 0
    """Connections this process holds: WebSockets, event streams, HTTP keep-alive, requests being read
    (0: derived from the open-file limit, see server/ops/limits.py and server/ops/edge.py)."""
    connections_per_address: int = 64
    """Connections one client address may hold on this process (0: no cap); behind a trusted proxy,
    the forwarded address's requests and streams."""
    header_timeout: float = 10.0
    """Seconds a request's head (request line and headers) may take to arrive, from the connection's
    start or the previous answer's end."""
    body_timeout: float = 30.0
    """Seconds a request's body may take to arrive once its head is in."""
    max_body: int = 65_536
    """Bytes a request body may have (HTTP 413 beyond); every body this server reads is a small JSON."""
    trusted_proxies: str = ""
    """Comma-separated proxy addresses or networks whose X-Forwarded-For is believed ("": none)."""
    create_burst: int = 10
    """Races one client address may create at once (0: no rate limit); the bucket is kept in Redis."""
    create_interval: float = 6.0
    """Seconds per creation the bucket gives back once the burst is spent."""
    lobbies_per_address: int = 20
    """Lobbies (races not yet started) one client address may have open at once (0: no cap)."""
    lobbies_max: int = 10_000
    """Lobbies open at once over every process and client (0: no cap)."""
    register_burst: int = 5
    """Accounts one client address may register at once (0: no limit); the bucket is kept in Redis."""
    register_interval: float = 60.0
    """Seconds per registration the bucket gives back once the burst is spent."""
    daily_time_limit: int = 900
    """Seconds each account's play of the daily deal lasts, from its own start."""
    daily_min_rated_races: int = 3
    """Finished rated races (in the deal's variant) an account needs for its play to count on the daily board."""
    daily_min_account_age: int = 86_400
    """Seconds an account must have existed for its play to count on the daily board (a scout made for the
    day does not)."""
    fairplay_cpu: float = 6.0
    """Seconds of solver CPU the fair-play analysis may spend on one game (in the low-priority worker)."""
    fairplay_link_ms: int = 5_000
    """Accounts registered within this many milliseconds of each other count as linked in the fair-play
    flags (0: only a shared registration address links them)."""
    challenge_time: int = 120
    """Seconds a challenge waits for its answer before it expires (``challenge_expired``), and a rematch
    offer for every racer's yes."""
    organiser_token: str | None = field(default=None, repr=False)
    """The secret that creates and runs events (None: this server runs no events); at least
    :data:`MIN_ORGANISER_TOKEN` characters."""
    organiser_burst: int = 10
    """Organiser-token attempts one client address may get wrong at once (0: no limit); kept in Redis."""
    organiser_interval: float = 6.0
    """Seconds per wrong attempt the bucket gives back once the burst is spent."""
    seek_wave: float = 0.5
    """Seconds between two pairing waves of a seek pool (one process pairs each wave)."""
    seek_join: float = 10.0
    """Seconds the players of a race formed from seeks have to join it before a no-show is dropped."""
    seek_expire: float = 600.0
    """Seconds a seek may wait in its pool (its waiting time, kept across a partner's no-show) before it
    expires: its seeker hears ``seek_expired``, so a seek nobody can pair is not kept for ever."""
    seek_pools_per_address: int = 4
    """Seek pools one client address may wait in at once (0: no cap): each pool a wave looks at costs."""
    seek_deals: str = "pool"
    """Deals of races formed from seeks: ``pool`` (a checked deal when one is ready, else a random one) or
    ``random``."""
    log_level: str = "info"

    def summary(self) -> dict[str, Any]:
        """What the server prints at start (never the secret)."""
        d = asdict(self)
        d["token_secret"] = "set" if self.token_secret else "generated, kept in Redis"
        d["organiser_token"] = "set" if self.organiser_token else "none (no events)"
        d["redis_url"] = self.redis_url or f"embedded (data in {Path(self.data_dir).resolve()})"
        d["checked_variants"] = ", ".join(self.checked_targets()) or "none (pool races solve on demand)"
        return d

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


_HELP = {
    "host": "address to listen on",
    "port": "port to listen on (0 picks a free one)",
    "redis_url": "Redis to use (redis://, rediss:// or unix://); default: start an embedded redis-server",
    "redis_cluster": "the Redis URL is a node of a Redis Cluster (yes/no)",
    "redis_wait": "seconds to retry an unreachable Redis at start (with backoff) before exiting",
    "data_dir": "directory of the embedded Redis's append-only file",
    "token_secret": "HMAC key for player tokens; default: generated once and stored in Redis",
    "token_ttl": "seconds a player token stays valid",
    "countdown": "seconds between the start signal and starts_at",
    "progress_hz": "most progress frames per second per race",
    "racer_hz": "most progress frames per second to a race's racers (its spectators get progress_hz)",
    "commit_linger_ms": "milliseconds a busy process waits for more moves to send to Redis together (only when "
    "moves arrive faster than one per linger; 0: never wait)",
    "send_queue": "frames queued per connection before a slow reader is cut loose",
    "send_bytes": "bytes sent to a connection and not yet acknowledged by its TCP before a slow reader is cut loose",
    "rate": "frames per second a connection may send (token bucket refill)",
    "burst": "token bucket size: frames a connection may send at once",
    "max_errors": "bad frames tolerated (refilling one per second) before closing the connection",
    "hello_timeout": "seconds a new connection has to send hello",
    "retention": "seconds a finished race's results stay in Redis",
    "history_max": "races each account's history keeps (the newest)",
    "lobby_ttl": "seconds a race may wait in the lobby before it is removed",
    "presence_lease": "seconds a dead server process's players still count as connected, a lobby seat stays "
                      "taken after its last connection closed, and a challenge stays open after its challenger "
                      "stopped waiting for the answer",
    "graceful_timeout": "seconds shutdown waits for connections before closing them",
    "hint_budget": "seconds of solver time per hint in races that allow hints",
    "hint_interval": "seconds a player must wait between two hints",
    "hint_workers": "solver processes for hints (0: a thread of the server, which slows other players' moves)",
    "checked_pool_size": "checked deals (secret, proved winnable) the server keeps ready per variant for pool "
    "races, solving fresh random deals in a low-priority worker process (0: keep none)",
    "checked_variants": "comma-separated variants whose checked-deal pool is kept full (pool races of other "
    "variants are solved on demand)",
    "checked_budget": "CPU seconds of solver time per random deal tried for the checked pool (deals not won "
    "in that time are dropped)",
    "checked_wait": "seconds creating a pool race may spend solving when the checked pool is empty, before "
    "answering pool_empty (0: at once)",
    "max_connections": "connections this process holds (WebSockets, event streams, HTTP keep-alive, requests "
    "being read) before refusing with server_full (HTTP 503, WebSocket close 4007) (0: the open-file limit less "
    "the descriptors kept for Redis, /health, /metrics and workers)",
    "connections_per_address": "connections one client address may hold on this process before refusing with "
    "too_many_connections (HTTP 429, WebSocket close 4007) (0: no cap)",
    "header_timeout": "seconds a request's head may take to arrive (HTTP 408 and close beyond)",
    "body_timeout": "seconds a request's body may take to arrive once its head is in (HTTP 408 and close beyond)",
    "max_body": "bytes a request body may have (HTTP 413 beyond, refused before it is read)",
    "trusted_proxies": "comma-separated addresses or networks of reverse proxies whose X-Forwarded-For "
    "names the client (default: none, the socket peer is the client)",
    "create_burst": "races one client address may create at once, over every process (0: no rate limit)",
    "create_interval": "seconds per race creation the per-address bucket gives back once the burst is spent",
    "lobbies_per_address": "lobbies (races not started yet) one client address may have open (0: no cap)",
    "lobbies_max": "lobbies open at once over every process (0: no cap)",
    "register_burst": "accounts one client address may register at once, over every process (0: no limit)",
    "register_interval": "seconds per registration the per-address bucket gives back once the burst is spent",
    "daily_time_limit": "seconds each account's play of the daily deal lasts, from its own start",
    "daily_min_rated_races": "finished rated races in the deal's variant an account needs to count on the daily "
    "board (its play is listed after the counted ones)",
    "daily_min_account_age": "seconds an account must have existed to count on the daily board",
    "fairplay_cpu": "seconds of solver CPU the fair-play analysis spends on one game at most, after the race, in "
    "the low-priority solver worker",
    "fairplay_link_ms": "accounts registered within this many ms of each other are linked in fair-play flags "
    "(0: only a shared registration address links them)",
    "challenge_time": "seconds a challenge waits for the challenged player's answer before it expires, and a "
    "rematch offer for every racer's yes",
    "organiser_token": "the secret that creates and starts tournament events (HTTP Authorization: Bearer); "
    "default: none, and the server runs no events",
    "organiser_burst": "wrong organiser tokens one client address may send at once, over every process, "
    "before it is refused (429) whatever it sends (0: no limit)",
    "organiser_interval": "seconds per wrong organiser token the per-address bucket gives back once the burst "
    "is spent",
    "seek_wave": "seconds between two pairing waves of a seek pool",
    "seek_join": "seconds the players of a race formed from seeks have to join it (then a no-show is dropped)",
    "seek_expire": "seconds a seek may wait in its pool before it expires (the seeker is told: seek_expired)",
    "seek_pools_per_address": "seek pools one client address may wait in at once (0: no cap)",
    "seek_deals": "deals of races formed from seeks: pool (a checked deal when one is ready, else random) or random",
    "log_level": "debug, info, warning or error",
}


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
        parser.add_argument(
            "--" + f.name.replace("_", "-"),
            type=kind,
            default=value,
            help=f"{_HELP[f.name]} (env {env_name(f.name)}; default {default!r})",
        )
    ns = parser.parse_args(argv)
    config = Config(**vars(ns))
    if config.organiser_token is not None and len(config.organiser_token) < MIN_ORGANISER_TOKEN:
        raise ValueError(f"--organiser-token must be at least {MIN_ORGANISER_TOKEN} characters (it is "
                         f"{len(config.organiser_token)}): a short one is guessed; make one with "
                         "python3 -c 'import secrets; print(secrets.token_hex(24))'")
    for name in ("progress_hz", "racer_hz"):
        if not getattr(config, name) > 0:  # also refuses nan
            raise ValueError(f"--{name.replace('_', '-')} is frames a second: more than 0, not {getattr(config, name)}")
    if not 0 <= config.commit_linger_ms <= MAX_LINGER_MS:  # also refuses nan
        raise ValueError(f"--commit-linger-ms is milliseconds from 0 to {MAX_LINGER_MS:g}, not {config.commit_linger_ms}")
    if config.daily_time_limit < MIN_TIME_LIMIT:  # the daily deal's races keep every race's minimum too
        raise ValueError(f"--daily-time-limit must be at least {MIN_TIME_LIMIT} seconds, not {config.daily_time_limit}")
    if config.seek_deals not in ("pool", "random"):
        raise ValueError(f"--seek-deals is pool or random, not {config.seek_deals!r}")
    return config
