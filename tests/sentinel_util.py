"""A real Sentinel deployment for tests: a master, its replica and three Sentinels, in a temp dir.

Issue 37 wants a server pointed at Sentinels to follow a promotion without a restart. No mock shows
that: this starts real ``redis-server`` processes (the replica with ``--replicaof``) and real
``redis-server --sentinel`` processes with their own config files (a Sentinel rewrites its file), with
a short ``down-after-milliseconds`` so that a killed master is failed over within seconds.

Usage::

    with LocalSentinels() as sentinels:
        sentinels.kill_master()
        sentinels.wait_promoted()
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Callable

import redis

from cluster_util import stop_all
from server.ops.embedded import find_redis_server, free_port

MASTER_NAME = "thieves"
"""The name the Sentinels monitor the master under (``--redis-master``)."""


class SentinelError(RuntimeError):
    """The deployment could not be started or did not converge."""


class LocalSentinels:
    """A master, one replica, three Sentinels (quorum 2); ``option`` is the ``--redis-sentinel`` value."""

    def __init__(self, down_after_ms: int = 1000, base_dir: str | Path | None = None) -> None:
        self.down_after_ms = down_after_ms
        self._own_dir = base_dir is None
        self.base_dir = Path(base_dir or tempfile.mkdtemp(prefix="thieves-sentinel-")).resolve()
        self.binary = find_redis_server()
        self.master_port = free_port()
        self.replica_port = free_port()
        self.sentinel_ports = [free_port() for _ in range(3)]
        self.processes: dict[int, subprocess.Popen[bytes]] = {}
        self._killed: set[int] = set()

    @property
    def option(self) -> str:
        return ",".join(f"127.0.0.1:{port}" for port in self.sentinel_ports)

    def _run(self, port: int, *args: str) -> None:
        node_dir = self.base_dir / str(port)
        node_dir.mkdir(parents=True, exist_ok=True)
        self.processes[port] = subprocess.Popen(
            [self.binary, *args, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(node_dir),
             "--logfile", str(node_dir / "redis.log"), "--daemonize", "no"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def start(self, timeout: float = 30.0) -> "LocalSentinels":
        try:
            data = ["--save", "", "--appendonly", "no", "--repl-diskless-sync-delay", "0"]  # (5 s by default)
            self._run(self.master_port, *data)
            self._run(self.replica_port, *data, "--replicaof", "127.0.0.1", str(self.master_port))
            for port in self.sentinel_ports:
                conf = self.base_dir / f"sentinel-{port}.conf"
                conf.write_text(f"sentinel monitor {MASTER_NAME} 127.0.0.1 {self.master_port} 2\n"
                                f"sentinel down-after-milliseconds {MASTER_NAME} {self.down_after_ms}\n"
                                f"sentinel failover-timeout {MASTER_NAME} 10000\n")
                self._run(port, str(conf), "--sentinel")
            self._wait(lambda: all(self._quorum_ok(port) for port in self.sentinel_ports)
                       and self._replica_in_sync(), "Sentinels ready, replica in sync", timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def _wait(self, check: Callable[[], bool], what: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not check():
            for port, proc in self.processes.items():
                if proc.poll() is not None and port not in self._killed:
                    raise SentinelError(f"redis-server on {port} exited with {proc.returncode}")
            if time.monotonic() > deadline:
                raise SentinelError(f"not within {timeout} s: {what}")
            time.sleep(0.05)

    def _quorum_ok(self, port: int) -> bool:
        try:
            with redis.Redis(port=port, socket_timeout=1) as client:
                # ckquorum: enough Sentinels reachable to authorise a failover; replicas: the replica known
                return (bool(client.execute_command("SENTINEL", "CKQUORUM", MASTER_NAME))
                        and len(client.execute_command("SENTINEL", "REPLICAS", MASTER_NAME)) == 1
                        and len(client.execute_command("SENTINEL", "SENTINELS", MASTER_NAME)) == 2)
        except redis.RedisError:
            return False

    def _replica_in_sync(self) -> bool:
        try:
            with redis.Redis(port=self.replica_port, socket_timeout=1, decode_responses=True) as client:
                return client.info("replication").get("master_link_status") == "up"
        except redis.RedisError:
            return False

    def master(self) -> int | None:
        """The master's port as the first Sentinel that answers names it now."""
        for port in self.sentinel_ports:
            try:
                with redis.Redis(port=port, socket_timeout=1) as client:
                    host, master = client.execute_command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER_NAME)
                    return int(master)
            except (redis.RedisError, TypeError, ValueError):
                continue
        return None

    def kill_master(self) -> None:
        """SIGKILL the master: a crash, which the Sentinels fail over to the replica."""
        self._killed = {self.master_port}
        proc = self.processes[self.master_port]
        proc.kill()
        proc.wait(10)

    def wait_promoted(self, timeout: float = 30.0) -> None:
        """Until the Sentinels name the replica as the master and it answers as one."""
        def promoted() -> bool:
            if self.master() != self.replica_port:
                return False
            try:
                with redis.Redis(port=self.replica_port, socket_timeout=1, decode_responses=True) as client:
                    return client.info("replication").get("role") == "master"
            except redis.RedisError:
                return False

        self._wait(promoted, "the replica promoted", timeout)

    def stop(self) -> None:
        procs, self.processes = list(self.processes.values()), {}
        stop_all(procs)
        if self._own_dir:
            shutil.rmtree(self.base_dir, ignore_errors=True)

    def __enter__(self) -> "LocalSentinels":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


__all__ = ["MASTER_NAME", "LocalSentinels", "SentinelError"]
