"""The fault-test helpers do what issue 4's tests will lean on: real processes that die and come back.

A private AOF Redis keeps what it acknowledged across SIGKILL and SHUTDOWN
NOSAVE and returns on the same port; ``thieves-server`` runs as the real
console script, is healthy, dies by SIGKILL or SIGTERM, and comes back on
the same port with its races still there (they live in Redis).
"""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path
from typing import Iterator

import pytest
import redis

from process_util import ProcessError, RedisProcess, ServerProcess, thieves_server_command
from redis_util import until


@pytest.fixture
def aof_redis(tmp_path: Path) -> Iterator[RedisProcess]:
    with RedisProcess(tmp_path / "redis") as running:
        yield running


def _roundtrip_after(aof_redis: RedisProcess, stop: str) -> None:
    with aof_redis.client() as c:
        c.set("acked", "yes")
        c.rpush("log", "ab", "S", "aF")
        # With appendfsync everysec Redis answers a write and may postpone writing it to the AOF while a
        # background fsync is still running (up to 2 s: a loaded machine's disk), so a SIGKILL then loses
        # it (a full run with a busy core found the list gone). Wait until it is in the file, as the
        # server's own kill tests can rely on: nothing buffered, no fsync pending.
        def written() -> bool:
            info = c.info("persistence")
            return info["aof_buffer_length"] == 0 and info["aof_pending_bio_fsync"] == 0
        until(written, "the writes in the append-only file")
    old_pid = aof_redis.pid
    getattr(aof_redis, stop)()
    assert not aof_redis.running
    with aof_redis.client() as c, pytest.raises(redis.ConnectionError):
        c.ping()
    aof_redis.start()
    assert aof_redis.pid != old_pid
    with aof_redis.client() as c:
        assert c.get("acked") == b"yes"
        assert c.lrange("log", 0, -1) == [b"ab", b"S", b"aF"]
        assert c.config_get("appendonly") == {"appendonly": "yes"}
        assert c.config_get("appendfsync") == {"appendfsync": "everysec"}


def test_redis_keeps_acknowledged_writes_through_sigkill(aof_redis: RedisProcess) -> None:
    _roundtrip_after(aof_redis, "kill")


def test_redis_keeps_writes_through_shutdown_nosave(aof_redis: RedisProcess) -> None:
    _roundtrip_after(aof_redis, "shutdown_nosave")


def test_redis_restart_keeps_port_and_refuses_double_start(aof_redis: RedisProcess) -> None:
    url = aof_redis.url
    with pytest.raises(ProcessError, match="already running"):
        aof_redis.start()
    aof_redis.restart()
    assert aof_redis.url == url
    with aof_redis.client() as c:
        assert c.ping()
    aof_redis.stop()
    aof_redis.stop()  # idempotent
    with pytest.raises(ProcessError, match="not started"):
        aof_redis.kill()


def test_console_script_runs() -> None:
    done = subprocess.run([*thieves_server_command(), "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.startswith("usage: thieves-server")


def test_server_start_health_kill_restart(aof_redis: RedisProcess, tmp_path: Path) -> None:
    server = ServerProcess(aof_redis.url, args=["--countdown", "0"], log_path=tmp_path / "server.ops.log")
    with server:
        status, body = server.health()  # type: ignore[misc]
        assert status == 200 and body["redis"] is True
        status, created = server.http("POST", "/races", {"seats": 2, "time_limit": 60})
        assert status == 201, created
        race = created["race"]["id"]

        first_pid, url = server.pid, server.url
        assert server.kill() == -signal.SIGKILL
        assert server.health(timeout=0.5) is None

        server.restart()
        assert server.url == url and server.pid != first_pid
        status, body = server.http("GET", f"/races/{race}")
        assert status == 200 and body["race"]["code"] == created["race"]["code"]

        assert server.terminate() == 0
    listening = server.events("listening")
    assert len(listening) == 2
    assert all(f"url=http://127.0.0.1:{server.port} " in line for line in listening)


def test_server_health_follows_redis_without_restart(aof_redis: RedisProcess, tmp_path: Path) -> None:
    with ServerProcess(aof_redis.url, log_path=tmp_path / "server.ops.log") as server:
        aof_redis.kill()
        answer = server.health()
        assert answer is not None and answer[0] == 503 and answer[1]["redis"] is False
        aof_redis.start()
        answer = server.health()
        assert answer is not None and answer[0] == 200
        assert server.running


def test_server_that_cannot_start_says_why(tmp_path: Path) -> None:
    server = ServerProcess("redis://127.0.0.1:1/0", args=["--bogus-flag"], log_path=tmp_path / "s.log")
    with pytest.raises(ProcessError, match="(?s)exited with 2.*unrecognized arguments: --bogus-flag"):
        server.start(timeout=20)
    assert not server.running
