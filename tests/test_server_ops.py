"""Operating the server: the CLI with its embedded Redis, Redis outages, restarts, HTTP."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import socket
import subprocess
import time
import sys
import urllib.request
from pathlib import Path

import pytest
from process_util import _clean_env, thieves_server_command
from redis_util import Client, LiveServer, create_race, create_short_race, eventually, live_server, start_race, until

from server.ops.embedded import EmbeddedRedis, free_port
from server.race.clock import now_ms
from shared import protocol as p

ROOT = Path(__file__).resolve().parent.parent


def _start_with_embedded_redis(data: Path) -> tuple[subprocess.Popen[str], str]:
    """thieves-server with no Redis URL; returns once it logged ``listening``."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "server.main", "--port", "0", "--data-dir", str(data), "--countdown", "1"],
        cwd=ROOT, stderr=subprocess.PIPE, text=True, env={**os.environ, "THIEVES_PROGRESS_HZ": "5"},
    )
    assert proc.stderr is not None
    lines = []
    for line in proc.stderr:
        lines.append(line)
        if "event=listening" in line:
            break
    return proc, "".join(lines)


def test_thieves_server_runs_with_its_own_redis_and_stops_it(tmp_path: Path) -> None:
    data = tmp_path / "data"
    proc, out = _start_with_embedded_redis(data)
    try:
        assert proc.stderr is not None
        assert "thieves-server configuration:" in out
        assert re.search(r"progress_hz\s+5\.0", out), "the environment sets options"
        assert re.search(r"countdown\s+1\.0", out), "flags set options"
        assert f"data in {data}" in out and "event=embedded_redis" in out
        url = re.search(r"url=(http://\S+)", out).group(1)  # type: ignore[union-attr]
        with urllib.request.urlopen(url + "/health", timeout=5) as resp:
            assert json.loads(resp.read())["redis"] is True
        assert (data / "appendonlydir").is_dir(), "the embedded Redis keeps an append-only file"
        proc.send_signal(signal.SIGTERM)
        rest = proc.stderr.read()
        assert proc.wait(10) == 0
        assert "event=stopped reason=terminated" in rest and "Traceback" not in rest
        assert "event=embedded_redis_stopped" in rest
        assert not (data / "redis.sock").exists() or not _answers(data / "redis.sock")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _answers(path: Path) -> bool:
    from server.ops.embedded import _answers as answers

    return answers(path)


def _wait_until_silent(sock: Path, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not sock.exists() or not _answers(sock):
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGHUP])
def test_embedded_redis_never_outlives_its_server(tmp_path: Path, sig: signal.Signals) -> None:
    """A server killed outright, or whose terminal closed, leaves no Redis holding its data dir,
    and no hint worker process (or any other child) behind."""
    data = tmp_path / "data"
    proc, _ = _start_with_embedded_redis(data)
    try:
        assert _answers(data / "redis.sock")
        children = _children(proc.pid)
        assert any(b"spawn_main" in _cmdline(c) for c in children), "the hint worker runs from the start"
        proc.send_signal(sig)
        code = proc.wait(10)
        assert code == (-signal.SIGKILL if sig == signal.SIGKILL else 0)
        assert _wait_until_silent(data / "redis.sock"), "the embedded Redis is still serving"
        deadline = time.monotonic() + 10
        while any(_alive(c) for c in children) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not [c for c in children if _alive(c)], "a child outlived the server"
        again, out = _start_with_embedded_redis(data)  # the same data dir is free again
        try:
            assert "event=listening" in out
        finally:
            again.send_signal(signal.SIGTERM)
            again.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _metrics(url: str) -> str:
    with urllib.request.urlopen(url + "/metrics", timeout=5) as resp:
        return resp.read().decode()


@pytest.mark.parametrize("when", ["starting", "working"])
def test_ctrl_c_stops_the_server_and_its_workers_without_a_traceback(tmp_path: Path, when: str) -> None:
    """Ctrl-C in the terminal of ``make run`` sends SIGINT to the whole process group: the solver
    workers printed a ``KeyboardInterrupt`` traceback each. Now the server alone stops its workers,
    and says so in one line. ``starting``: once the server listens (the workers may still be
    importing); ``working``: once the checked-deal filler has solved a deal in its worker."""
    proc = subprocess.Popen([*thieves_server_command(), "--port", "0", "--data-dir", str(tmp_path / "data")],
                            stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=_clean_env(None),
                            start_new_session=True)  # a process group of its own, as a terminal's shell does
    assert proc.stderr is not None
    try:
        url = ""
        for line in proc.stderr:
            if "event=listening" in line:
                url = re.search(r"url=(http://\S+)", line).group(1)  # type: ignore[union-attr]
                break
        assert url, "the server listens"
        workers = until(lambda: [c for c in _children(proc.pid) if b"spawn_main" in _cmdline(c)],
                        "the solver workers", 30)
        if when == "working":
            until(lambda: re.search(r"^thieves_checked_tried_total\{.*\} [1-9]", _metrics(url), re.M),
                  "a deal solved by the filler's worker", 120)
        os.killpg(proc.pid, signal.SIGINT)
        _, rest = proc.communicate(timeout=60)
        assert proc.returncode == 0, rest
        assert "Traceback" not in rest and "KeyboardInterrupt" not in rest, rest
        assert "event=stopped reason=interrupt" in rest, rest
        assert until(lambda: not [c for c in workers if _alive(c)], "the workers' end", 10)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_ctrl_c_while_the_server_loads_is_one_line_too() -> None:
    """Importing the server's modules takes a second or more on a busy machine: a Ctrl-C then was a
    ``KeyboardInterrupt`` traceback from the import. Here it comes while ``server.main`` imports
    ``server.app``, through the ``thieves-server`` entry point as installed."""
    code = (
        "import importlib.metadata as m, os, signal, sys\n"
        "class CtrlC:\n"
        "    def find_spec(self, name, path, target=None):\n"
        "        if name == 'server.app':\n"
        "            os.kill(os.getpid(), signal.SIGINT)\n"
        "sys.meta_path.insert(0, CtrlC())\n"
        "main = m.entry_points(group='console_scripts')['thieves-server'].load()\n"
        "sys.exit(main())\n")
    done = subprocess.run([sys.executable, "-c", code, "--port", "0"], cwd=ROOT, capture_output=True, text=True,
                          timeout=60, env=_clean_env(None))
    assert "Traceback" not in done.stderr and "KeyboardInterrupt" not in done.stderr, done.stderr
    assert done.stderr == "thieves-server: stopped (Ctrl-C while starting)\n" and done.returncode == 0


def test_ctrl_c_while_the_embedded_redis_starts_is_one_line_too(tmp_path: Path) -> None:
    """The Ctrl-C comes just as the embedded Redis has started, before the server serves: the same
    one line and exit 0 (it was a traceback), and that Redis does not outlive the server."""
    data = tmp_path / "data"
    code = (
        "import os, signal, sys\n"
        "from server import main as m\n"
        "start = m.EmbeddedRedis.start\n"
        "def interrupted(self):\n"
        "    started = start(self)\n"
        "    os.kill(os.getpid(), signal.SIGINT)\n"
        "    return started\n"
        "m.EmbeddedRedis.start = interrupted\n"
        f"sys.exit(m.main(['--port', '0', '--data-dir', {str(data)!r}]))\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60,
                          env=_clean_env(None))
    assert "Traceback" not in done.stderr and "KeyboardInterrupt" not in done.stderr, done.stderr
    assert "event=stopped reason=interrupt" in done.stderr and done.returncode == 0, done.stderr
    assert _wait_until_silent(data / "redis.sock"), "the embedded Redis is still serving"


def _children(pid: int) -> list[int]:
    """Direct children of ``pid`` (Linux /proc)."""
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(entry.name))
    return out


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _alive(pid: int) -> bool:
    """Running, not a zombie waiting for its (dead) parent's reaper."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_help_lists_every_option_with_its_environment_variable() -> None:
    out = subprocess.run([sys.executable, "-m", "server.main", "--help"], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout
    for flag in ("--host", "--port", "--redis-url", "--data-dir", "--progress-hz", "--rate"):
        assert flag in out
    assert "THIEVES_REDIS_URL" in out


def test_a_port_out_of_range_or_taken_is_one_line_and_a_failed_exit(tmp_path: Path) -> None:
    """``--port 99999`` printed "port 99999" and listened on 34463 (uvicorn takes it modulo 65536); a port
    another program listens on gave uvicorn's 37-line traceback after a whole start, ending SystemExit: 3."""
    def run(port: int) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*thieves_server_command(), "--port", str(port), "--data-dir", str(tmp_path / "data")],
                              capture_output=True, text=True, timeout=30, env=_clean_env(None))

    out = run(99999)
    assert (out.returncode, out.stderr) == (2, "thieves-server: --port must be 0 to 65535 (0: any free port), not 99999\n")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        out = run(port)
    assert out.returncode == 1
    assert out.stderr.splitlines() == [f"thieves-server: cannot listen on 127.0.0.1:{port}: Address already in use"]
    assert not (tmp_path / "data").exists(), "nothing started before the port was found taken"


async def test_a_port_taken_after_the_look_ends_the_serve_with_the_same_line(redis_url: str) -> None:
    """Between main's look at the port and uvicorn's bind another program may take it: uvicorn then exits
    (SystemExit 3, with a traceback of an unretrieved task); serve() says CannotListen instead."""
    from dataclasses import replace

    from redis_util import TEST_CONFIG
    from server.main import CannotListen, serve

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(CannotListen, match=f"cannot listen on 127.0.0.1:{port}"):
            await serve(replace(TEST_CONFIG, port=port), redis_url)


async def test_redis_outage_gives_typed_errors_and_the_server_recovers(tmp_path: Path) -> None:
    store = EmbeddedRedis(tmp_path / "r", port=free_port(), appendonly=True).start()
    try:
        async with live_server(store.url) as server:
            created = await create_race(server, seats=1, deal_source="number", deal=2)
            ann = await Client.connect(server)
            await ann.hello(created.race.id, "ann")
            await start_race(server, created.creator_token, [ann])
            assert isinstance(await ann.move("S"), p.Ack)

            store.stop()
            rej = await ann.move("S")
            assert isinstance(rej, p.Reject) and rej.reason == "unavailable"
            status, body = await server.http("GET", "/health")
            assert status == 503 and body["redis"] is False
            status, body = await server.http("POST", "/races", {})
            assert status == 503 and body["code"] == "unavailable"
            late = await Client.connect(server)
            await late.send(p.Hello(protocol=p.PROTOCOL_VERSION, race=created.race.id, role="spectator"))
            assert (await late.error()).code == "unavailable"
            assert await late.closed() == p.CloseCode.TRY_AGAIN_LATER

            store.start()  # same port, same append-only file: the acknowledged move is still there
            for _ in range(50):
                status, _ = await server.http("GET", "/health")
                if status == 200:
                    break
                await asyncio.sleep(0.1)
            ack = await ann.move("S")
            assert isinstance(ack, p.Ack) and ack.view.moves == 2
            state = await server.service.store.player(created.race.id, 0)
            assert state is not None and state.moves == ["S", "S"]
            await ann.close()
    finally:
        store.stop()


async def test_http_endpoints(server: LiveServer) -> None:
    status, body = await server.http("GET", "/health")
    assert status == 200 and body["status"] == "ok" and body["protocol"] == p.PROTOCOL_VERSION
    status, body = await server.http("POST", "/races", {"variant": "no-such-game"})
    assert (status, body["code"]) == (400, "bad_variant")
    status, body = await server.http("POST", "/races", {"seats": 0})
    assert (status, body["code"]) == (400, "bad_field")
    status, body = await server.http("POST", "/races", {"deal_source": "number"})
    assert (status, body["code"]) == (400, "bad_deal")
    status, body = await server.http("POST", "/races", {"deal": 5})
    assert (status, body["code"]) == (400, "bad_deal")
    status, body = await server.http("GET", "/races/nothere")
    assert (status, body["code"]) == (404, "race_not_found")

    lobby = await create_race(server, variant="Sixty Thieves", seats=3, time_limit=60, undo=False)
    assert lobby.race.variant == "sixty-thieves" and not lobby.race.undo and lobby.race.time_limit == 60
    status, body = await server.http("GET", "/races")
    assert [r["id"] for r in body["races"]] == [lobby.race.id]
    assert "deal" not in body["races"][0] and "salt" not in body["races"][0], "the deal stays secret"
    status, body = await server.http("GET", f"/races/{lobby.race.code}")
    assert status == 200 and body["race"]["id"] == lobby.race.id and body["progress"] == []
    status, body = await server.http("GET", f"/races/{lobby.race.id}/results")
    assert (status, body["code"]) == (409, "race_not_over")


async def test_create_and_ping_over_the_socket(server: LiveServer) -> None:
    c = await Client.connect(server)
    await c.send(p.Create(seats=4, start_mode="all-ready", deal_source="number", deal=99))
    created = await c.expect(p.Created)
    assert created.race.seats == 4 and created.race.start_mode == "all-ready"
    await c.send(p.Create(variant="nope"))
    assert (await c.error()).code == "bad_variant"
    await c.send(p.Ping(nonce=7))
    pong = await c.expect(p.Pong)
    assert pong.nonce == 7 and pong.server_time > 0
    welcome = await c.hello(created.race.code, "solo")
    assert welcome.race.id == created.race.id and welcome.race.players == 1
    await c.close()


async def test_an_abandoned_race_ends_when_its_time_is_read(redis_url: str) -> None:
    """Nobody connected when the time ran out: the first read closes it and shows results."""
    async with live_server(redis_url) as server:
        created = await create_short_race(server, seats=1, time_limit=1)
        ann = await Client.connect(server)
        await ann.hello(created.race.id, "ann")
        countdown, = await start_race(server, created.creator_token, [ann])
        await ann.close()
    await eventually(lambda: now_ms() >= countdown.ends_at, "the race's time to run out, nobody connected")
    async with live_server(redis_url) as server:
        status, body = await server.http("GET", f"/races/{created.race.id}/results")
        assert status == 200 and body["standings"][0]["name"] == "ann"
        status, body = await server.http("GET", "/races")
        assert body["races"] == []


@pytest.mark.parametrize("hz", [5.0])
async def test_progress_is_coalesced(redis_url: str, hz: float) -> None:
    """Many moves in a burst reach a spectator as a few progress frames, the last one complete."""
    async with live_server(redis_url, progress_hz=hz) as server:
        created = await create_race(server, seats=1, deal_source="number", deal=2)
        ann = await Client.connect(server)
        await ann.hello(created.race.id, "ann")
        watcher = await Client.connect(server)
        await watcher.hello(created.race.id, role="spectator")
        await start_race(server, created.creator_token, [ann, watcher])
        for _ in range(30):
            assert isinstance(await ann.move("S"), p.Ack)
        frames = []
        while not frames or frames[-1].players[0].moves < 30:
            msg = await watcher.recv()
            if isinstance(msg, p.Progress):
                frames.append(msg)
        assert len(frames) < 30
        assert frames[-1].version >= 30 and frames[-1].race_status == "running"
        await ann.close()
        await watcher.close()
