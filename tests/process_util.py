"""Real processes for fault tests: ``thieves-server`` and a private AOF Redis that can die and come back.

Issue 4's promises (no acknowledged move lost when the server is SIGKILLed,
play resumes after Redis restarts) only mean something against real
processes: an in-process server shares the test's memory and cannot be
killed mid-write. ``ServerProcess`` runs the installed console script the
way an operator does; ``RedisProcess`` runs a redis-server with an
append-only file that survives SIGKILL and restarts on the same port with
the same data, so clients reconnect to the same address.

Both are synchronous (subprocess and urllib); an async test calls them as
they are (each call blocks for milliseconds) or via ``asyncio.to_thread``.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import fields
from pathlib import Path
from typing import IO, Any, Mapping, Sequence

import redis

from server.config import Config, env_name
from server.ops.embedded import EmbeddedRedis, free_port


ROOT = Path(__file__).resolve().parent.parent


def run_bench(script: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``python bench/<script> <args>`` as its documentation has it, from the checkout; its output as text."""
    return subprocess.run([sys.executable, str(ROOT / "bench" / script), *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout)


class ProcessError(RuntimeError):
    """A process would not start, answer or stop; the message carries its log tail."""


def thieves_server_command() -> list[str]:
    """The ``thieves-server`` console script of this interpreter's environment.

    Beside ``sys.executable`` first (the venv running the tests, even when it
    is not on PATH), then PATH, then ``python -m server.main``.
    """
    script = Path(sys.executable).with_name("thieves-server")
    if os.access(script, os.X_OK):
        return [str(script)]
    on_path = shutil.which("thieves-server")
    if on_path:
        return [on_path]
    return [sys.executable, "-m", "server.main"]


def _clean_env(extra: Mapping[str, str] | None) -> dict[str, str]:
    """The test's environment without ``THIEVES_*`` server settings, then ``extra``.

    A developer's exported THIEVES_REDIS_URL or THIEVES_PORT must not
    redirect a test's server; THIEVES_REDIS_SERVER (which binary) stays.
    """
    settings = {env_name(f.name) for f in fields(Config)}
    env = {k: v for k, v in os.environ.items() if k not in settings}
    env.update(extra or {})
    return env


def http_json(url: str, method: str = "GET", body: Any = None, timeout: float = 5.0,
              headers: Mapping[str, str] | None = None) -> tuple[int, Any]:
    """``(status, decoded JSON)`` of one request; HTTP error statuses are answers, not exceptions."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method,
                                 headers={"content-type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"null")


class ServerProcess:
    """``thieves-server`` as a child process on a fixed port, against ``redis_url``.

    The port is chosen once, so ``restart()`` comes back at the same
    address and clients can reconnect to the URL they had. Output of every
    run is appended to ``log_path``: a file, not a pipe, so a chatty server
    never blocks on a full pipe that nobody reads.
    """

    def __init__(self, redis_url: str | None, *, port: int | None = None, args: Sequence[str] = (),
                 env: Mapping[str, str] | None = None, log_path: str | Path | None = None) -> None:
        self.redis_url = redis_url
        self.port = port or free_port()
        self.args = list(args)
        self.env = _clean_env(env)
        if log_path is None:
            log_path = Path(tempfile.mkdtemp(prefix="thieves-server-log-")) / "server.ops.log"
        self.log_path = Path(log_path)
        self.process: subprocess.Popen[bytes] | None = None
        self._log_file: IO[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    @property
    def command(self) -> list[str]:
        """The full argv; ``args`` come last, so they override the defaults here."""
        where = ["--redis-url", self.redis_url] if self.redis_url else []  # (None: args say, e.g. Sentinels)
        return [*thieves_server_command(), "--host", "127.0.0.1", "--port", str(self.port), *where,
                "--graceful-timeout", "1", *self.args]

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    @property
    def pid(self) -> int:
        if self.process is None:
            raise ProcessError("the server is not started")
        return self.process.pid

    def start(self, timeout: float = 30.0, healthy: bool = True) -> "ServerProcess":
        """Start and wait until ``/health`` answers (200 unless ``healthy=False``: any answer)
        and the server has logged its ``listening`` line (it may answer a few ms before)."""
        if self.running:
            raise ProcessError(f"thieves-server is already running (pid {self.pid})")
        listening_before = len(self.events("listening")) if self.log_path.exists() else 0
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log_file = open(self.log_path, "ab")
        self._log_file.write(f"--- start: {' '.join(self.command)}\n".encode())
        self._log_file.flush()
        self.process = subprocess.Popen(self.command, stdin=subprocess.DEVNULL, stdout=self._log_file,
                                        stderr=subprocess.STDOUT, env=self.env)
        deadline = time.monotonic() + timeout
        while True:
            answer = self.health(timeout=1.0)
            if (answer is not None and (answer[0] == 200 or not healthy)
                    and len(self.events("listening")) > listening_before):
                return self
            if self.process.poll() is not None:
                code = self.process.returncode
                self._close_log()
                raise ProcessError(f"thieves-server exited with {code} before answering:{self.log_tail()}")
            if time.monotonic() > deadline:
                self.kill()
                raise ProcessError(f"thieves-server gave no {'healthy ' if healthy else ''}answer on "
                                   f"{self.url}/health within {timeout} s (last: {answer}):{self.log_tail()}")
            time.sleep(0.02)

    def health(self, timeout: float = 2.0) -> tuple[int, Any] | None:
        """``(status, body)`` of ``GET /health``, or None when nothing answers."""
        try:
            return http_json(self.url + "/health", timeout=timeout)
        except (OSError, ValueError):
            return None

    def http(self, method: str, path: str, body: Any = None,
             headers: Mapping[str, str] | None = None) -> tuple[int, Any]:
        return http_json(self.url + path, method, body, headers=headers)

    def kill(self) -> int:
        """SIGKILL: no shutdown code runs, as when the machine or the OOM killer ends it."""
        return self._signal(signal.SIGKILL, 10.0)

    def terminate(self, timeout: float = 15.0) -> int:
        """SIGTERM: the graceful path (connections closed with 1012); its exit code."""
        return self._signal(signal.SIGTERM, timeout)

    def restart(self, timeout: float = 30.0, healthy: bool = True) -> "ServerProcess":
        """Start again on the same port (after ``kill`` or ``terminate``; SIGKILL first if still running)."""
        if self.running:
            self.kill()
        return self.start(timeout, healthy)

    def _signal(self, sig: signal.Signals, timeout: float) -> int:
        proc = self.process
        if proc is None:
            raise ProcessError("the server is not started")
        if proc.poll() is None:
            proc.send_signal(sig)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                self._close_log()
                raise ProcessError(f"thieves-server ignored {sig.name} for {timeout} s:{self.log_tail()}") from None
        self._close_log()
        return proc.returncode

    def _close_log(self) -> None:
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None

    def logs(self) -> str:
        """Everything every run printed so far (configuration, then logfmt lines)."""
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def events(self, name: str) -> list[str]:
        """The log lines of one structured event, e.g. ``events("listening")``."""
        return [line for line in self.logs().splitlines() if f" event={name} " in f" {line} "]

    def log_tail(self, lines: int = 15) -> str:
        return "\n" + "\n".join(self.logs().splitlines()[-lines:])

    def close(self) -> None:
        """Stop if running (SIGTERM, SIGKILL if that hangs); keeps the log."""
        if self.running:
            try:
                self.terminate(timeout=5.0)
            except ProcessError:
                pass
        self._close_log()

    def __enter__(self) -> "ServerProcess":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


class RedisProcess:
    """A private redis-server with an append-only file in ``data_dir``, on a port that stays the same.

    Each ``start`` is a fresh redis-server (``server.ops.embedded.EmbeddedRedis``,
    ``appendfsync everysec``) on the same port and directory, so it reloads
    what the previous one wrote. ``kill`` is SIGKILL; ``shutdown_nosave`` is
    the graceful SHUTDOWN NOSAVE (no RDB snapshot; the AOF is still flushed).
    """

    def __init__(self, data_dir: str | Path, port: int | None = None) -> None:
        self.data_dir = Path(data_dir)
        self.port = port or free_port()
        self._redis: EmbeddedRedis | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def running(self) -> bool:
        proc = self._redis.process if self._redis else None
        return proc is not None and proc.poll() is None

    @property
    def pid(self) -> int:
        proc = self._redis.process if self._redis else None
        if proc is None:
            raise ProcessError("redis-server is not started")
        return proc.pid

    def client(self) -> redis.Redis:
        """A new plain client (bytes replies); close it when done."""
        return redis.Redis.from_url(self.url, socket_timeout=5)

    def start(self, timeout: float = 10.0) -> "RedisProcess":
        if self.running:
            raise ProcessError(f"redis-server is already running on {self.port}")
        self._redis = EmbeddedRedis(self.data_dir, port=self.port, appendonly=True).start(timeout)
        return self

    def kill(self) -> None:
        """SIGKILL: what a crash looks like; writes Redis already answered are in the AOF (page cache)."""
        self._end(lambda proc: proc.kill())

    def shutdown_nosave(self) -> None:
        """SHUTDOWN NOSAVE: Redis flushes and fsyncs its AOF, skips the RDB snapshot, exits."""

        def shutdown(proc: subprocess.Popen[bytes]) -> None:
            with self.client() as client:
                client.shutdown(nosave=True)

        self._end(shutdown)

    def stop(self) -> None:
        """SIGTERM, as ``EmbeddedRedis`` does; safe to call when already stopped."""
        if self._redis is not None:
            self._redis.stop()
            self._redis = None

    def restart(self, timeout: float = 10.0) -> "RedisProcess":
        """Start again on the same port and data (SIGKILL first if still running)."""
        if self.running:
            self.kill()
        return self.start(timeout)

    def _end(self, how: Any) -> None:
        embedded = self._redis
        if embedded is None or embedded.process is None:
            raise ProcessError("redis-server is not started")
        proc = embedded.process
        if proc.poll() is None:
            how(proc)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        embedded.stop()  # the process is gone: this only closes its pipe and any socket directory
        self._redis = None

    def __enter__(self) -> "RedisProcess":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
