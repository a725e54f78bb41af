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
    send_queue: int = 256
    rate: float = 60.0
    burst: int = 120
    max_errors: int = 20
    hello_timeout: float = 10.0
    retention: int = 7 * 86_400
    lobby_ttl: int = 3_600
    presence_lease: float = 15.0
    graceful_timeout: float = 5.0
    hint_budget: float = 0.3
    """Seconds of solver time per hint (races that allow hints)."""
    hint_interval: float = 5.0
    """Seconds a player waits between two hints."""
    hint_workers: int = 1
    """Solver processes for hints; 0 runs them in a thread of the server process."""
    pool_dir: str = ""
    """Directory of private pool files (``pool-<variant>.json``); empty: the pools shipped in shared/data."""
    log_level: str = "info"

    def summary(self) -> dict[str, Any]:
        """What the server prints at start (never the secret)."""
        d = asdict(self)
        d["token_secret"] = "set" if self.token_secret else "generated, kept in Redis"
        d["redis_url"] = self.redis_url or f"embedded (data in {Path(self.data_dir).resolve()})"
        d["pool_dir"] = self.pool_dir or "none: checked deals come from the pools shipped with the package (public)"
        return d


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
    "send_queue": "frames queued per connection before a slow reader is cut loose",
    "rate": "frames per second a connection may send (token bucket refill)",
    "burst": "token bucket size: frames a connection may send at once",
    "max_errors": "bad frames tolerated (refilling one per second) before closing the connection",
    "hello_timeout": "seconds a new connection has to send hello",
    "retention": "seconds a finished race's results stay in Redis",
    "lobby_ttl": "seconds a race may wait in the lobby before it is removed",
    "presence_lease": "seconds a dead server process's players still count as connected",
    "graceful_timeout": "seconds shutdown waits for connections before closing them",
    "hint_budget": "seconds of solver time per hint in races that allow hints",
    "hint_interval": "seconds a player must wait between two hints",
    "hint_workers": "solver processes for hints (0: a thread of the server, which slows other players' moves)",
    "pool_dir": "directory of private pool files for checked races (default: the public pools shipped "
    "with the package, which racers can match against their board)",
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
    return Config(**vars(ns))
