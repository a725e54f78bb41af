"""A Redis master with one replica, both real redis-server processes this test starts (and pauses).

Why a helper: replica acknowledgements (server/store/replicas.py) are only seen against real
replication: a paused replica (SIGSTOP) is what makes WAIT time out, as a replica cut off or a master
about to fail over does.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import redis

from server.ops.embedded import find_redis_server, free_port

START_TIMEOUT = 20.0
"""Seconds for both to answer and the replica to be in sync (a busy machine)."""


class RedisNode:
    """One redis-server on 127.0.0.1, no persistence, optionally a replica of ``master_port``."""

    def __init__(self, data_dir: Path, master_port: int | None = None, port: int | None = None) -> None:
        self.port = port or free_port()
        self.data_dir = data_dir
        data_dir.mkdir(parents=True, exist_ok=True)
        args = [find_redis_server(), "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(data_dir),
                "--save", "", "--appendonly", "no", "--logfile", str(data_dir / "redis.log"),
                "--repl-diskless-sync-delay", "0"]  # (Redis waits 5 s for more replicas before a full sync)
        if master_port is not None:
            args += ["--replicaof", "127.0.0.1", str(master_port)]
        self.process = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def client(self) -> redis.Redis:
        return redis.Redis.from_url(self.url, socket_timeout=5)

    def answers(self) -> bool:
        try:
            with self.client() as client:
                return bool(client.ping())
        except redis.RedisError:
            return False

    def link_up(self) -> bool:
        """A replica whose link to its master is up: it holds the master's data (the sync is over)."""
        with self.client() as client:
            return client.info("replication").get("master_link_status") == "up"

    def pause(self) -> None:
        os.kill(self.process.pid, signal.SIGSTOP)

    def resume(self) -> None:
        os.kill(self.process.pid, signal.SIGCONT)

    def kill(self) -> None:
        """SIGKILL: whatever its replica had not received is gone (no persistence here)."""
        self.resume()
        self.process.kill()
        self.process.wait()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.resume()
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def command_calls(self, command: str) -> int:
        """How many times this Redis ran ``command`` (``INFO commandstats``)."""
        with self.client() as client:
            stats = client.info("commandstats")
        return int(stats.get(f"cmdstat_{command.lower()}", {}).get("calls", 0))


class Replicated:
    """A master and its replica; ``url`` is the master's (what a server is given)."""

    def __init__(self, base: Path, replica: bool = True) -> None:
        self.master = RedisNode(base / "master")
        self.replica = RedisNode(base / "replica", self.master.port) if replica else None

    @property
    def url(self) -> str:
        return self.master.url

    def start(self) -> "Replicated":
        deadline = time.monotonic() + START_TIMEOUT
        while not self.in_sync():
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("the Redis master and replica did not come up in sync")
            time.sleep(0.02)
        return self

    def in_sync(self) -> bool:
        """Both answer, and the replica has everything the master wrote (offsets equal, link up)."""
        if not self.master.answers():
            return False
        if self.replica is None:
            return True
        if not self.replica.answers():
            return False
        with self.master.client() as m, self.replica.client() as r:
            mine, theirs = m.info("replication"), r.info("replication")
        return (theirs.get("master_link_status") == "up" and int(mine.get("connected_slaves", 0)) == 1
                and mine.get("master_repl_offset") == theirs.get("slave_repl_offset"))

    def stop(self) -> None:
        if self.replica is not None:
            self.replica.stop()
        self.master.stop()

    def __enter__(self) -> "Replicated":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
