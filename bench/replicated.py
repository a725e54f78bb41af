"""A Redis master with one replica for the load benchmarks: what the move path costs when each move waits
for a replica (``--replica-acks on``) and when it does not, against the same pair.

The master keeps an append-only file (``appendfsync everysec``) as the embedded Redis of ``make run``
does, so that the pair differs from the default set-up by the replica alone; the replica keeps nothing.
"""

from __future__ import annotations

import contextlib
import subprocess
import time
from pathlib import Path
from typing import Iterator

import redis

from server.ops.embedded import find_redis_server, free_port

SYNC_TIMEOUT = 30.0


@contextlib.contextmanager
def replicated_redis(data_dir: str | Path) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """Start a master and its replica in ``data_dir``, wait until the replica is in sync; yields the
    master's process (its CPU is measured) and URL. Both are stopped on exit."""
    base = Path(data_dir)
    binary = find_redis_server()
    master_port, replica_port = free_port(), free_port()
    procs: list[subprocess.Popen[bytes]] = []

    def start(name: str, port: int, *extra: str) -> subprocess.Popen[bytes]:
        where = base / name
        where.mkdir(parents=True, exist_ok=True)
        proc = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(where),
                                 "--save", "", "--logfile", str(where / "redis.log"), *extra],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        procs.append(proc)
        return proc

    try:
        master = start("master", master_port, "--appendonly", "yes", "--appendfsync", "everysec")
        start("replica", replica_port, "--appendonly", "no", "--replicaof", "127.0.0.1", str(master_port))
        deadline = time.monotonic() + SYNC_TIMEOUT
        while not _in_sync(master_port, replica_port):
            if time.monotonic() > deadline:
                raise SystemExit("the Redis master and replica did not come up in sync")
            time.sleep(0.05)
        yield master, f"redis://127.0.0.1:{master_port}/0"
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(10)


def _in_sync(master_port: int, replica_port: int) -> bool:
    try:
        with redis.Redis(port=master_port) as m, redis.Redis(port=replica_port) as r:
            return (r.info("replication").get("master_link_status") == "up"
                    and int(m.info("replication").get("connected_slaves", 0)) == 1)
    except redis.RedisError:
        return False
