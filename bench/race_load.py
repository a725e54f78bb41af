"""Load benchmark of the race server: validated moves per second, their round trip, and their CPU cost.

Starts ``thieves-server`` (embedded Redis with its append-only file, as
``make run`` does) in a child process, creates races over HTTP, connects
players that make legal moves as fast as the server answers (one move in
flight per player) plus spectators, for a fixed time. Then it runs the very
same client loop against a bare echo WebSocket endpoint on the same stack
(Starlette + uvicorn + uvloop, the server's uvicorn settings) as the upper
bound, and prints both with their ratio.

The client does the same work per round trip in both runs, so that the
ratio measures the server, not the client: before the clock starts each
player gets a precomputed legal line of its race's deal (races are created
with ``deal_source: number``; random playouts with the engine of
``shared/``, drawing only when nothing else is legal so that games last the
run), already encoded as move frames. In the timed loop a player sends the
next frame and waits for its acknowledgement, as the echo client sends its
frame and waits for the echo; both decode that answer in full. The server
still validates every move against Redis. A player whose line runs out
stops and is counted (``lines_exhausted``: raise ``--line-moves``).

Beside throughput and percentiles it reports the cost of a move from
outside: utime + stime (/proc) of the server process and of its embedded
redis-server over the measured window, divided by the server's own
``thieves_moves_accepted_total`` (/metrics) over the same window; and the
echo server's CPU per frame, with the ratio of the two; and the bench's
own CPU (the client) per round trip in both runs, since on a small machine
the client shares the cores with what it measures; and the server's read
and write system calls per move and per echoed frame (/proc/<pid>/io: a
count that does not drift with the machine's speed). ``--idle-spectators
N`` also opens N idle spectator connections before the load and prints the
server's resident memory (VmRSS) per connection.

    python bench/race_load.py                       # 20 races x 10 players, 2 spectators each, 10 s
    python bench/race_load.py --races 5 --players 4 --duration 5
    python bench/race_load.py --idle-spectators 1000
    python bench/race_load.py --line-moves 1500 --repeat 5   # medians and ranges: one run proves little
    python bench/race_load.py --replica --replica-acks on    # each move waits for a replica (and off)
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import msgspec  # noqa: E402
import websockets  # noqa: E402
from procfs import Window, child_named, rss_kb  # noqa: E402
from replicated import replicated_redis  # noqa: E402

from shared import protocol as p  # noqa: E402
from shared.engine import Game  # noqa: E402
from shared.moves import DRAW, FOUNDATION  # noqa: E402
from shared.variants import get_variant  # noqa: E402

MOVES_ACCEPTED = "thieves_moves_accepted_total"
CEILING_MOVES_PER_S = 10_000.0
"""What an unpaced run's lines are sized for, over all players (about 3x what a 2-core machine does today)."""


@dataclass
class Stats:
    rtts: list[float] = field(default_factory=list)
    acks: int = 0
    rejects: int = 0
    progress: int = 0
    exhausted: int = 0
    counting: bool = False

    def summary(self, seconds: float) -> dict[str, float]:
        q = statistics.quantiles(self.rtts, n=100) if len(self.rtts) >= 100 else [float("nan")] * 99
        return {
            "round_trips_per_s": len(self.rtts) / seconds,
            "accepted_per_s": self.acks / seconds,
            "rejected_per_s": self.rejects / seconds,
            "p50_ms": q[49] * 1000,
            "p99_ms": q[98] * 1000,
            "progress_frames_per_s": self.progress / seconds,
        }


# ------------------------------------------------------------------ servers
def server_command(rate: float, *, data_dir: str | None = None, redis_url: str | None = None) -> list[str]:
    """``thieves-server`` as the load benchmarks run it: its Redis embedded in ``data_dir`` or at ``redis_url``."""
    args = [sys.executable, "-m", "server.main", "--port", "0", "--countdown", "0.2",
            "--rate", str(rate), "--burst", str(int(rate)),
            "--checked-pool-size", "0",  # no solver filler competing for the CPU being measured
            # every race and connection comes from this one address: no creation rate limit, lobby or
            # connection caps
            "--create-burst", "0", "--lobbies-per-address", "0", "--lobbies-max", "0",
            "--connections-per-address", "0"]
    if data_dir:
        args += ["--data-dir", data_dir]
    if redis_url:
        args += ["--redis-url", redis_url]
    return args


def start_child(args: list[str], marker: str = "event=listening") -> tuple[subprocess.Popen[str], str]:
    """Start a server process and read its ws:// address from its log."""
    proc = subprocess.Popen(args, cwd=ROOT, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    assert proc.stderr is not None
    for line in proc.stderr:
        if marker in line:
            url = re.search(r"url=(http://\S+)", line)
            assert url is not None
            # keep draining the log so the child never blocks on a full pipe
            threading.Thread(target=proc.stderr.read, daemon=True).start()
            return proc, url.group(1)
    raise SystemExit(f"server failed to start (exit {proc.wait()})")


def stop_child(proc: subprocess.Popen[str] | None) -> None:
    """Stop a process :func:`start_child` started: SIGTERM (a graceful shutdown), SIGKILL after 10 s."""
    if proc is None:
        return
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()


def echo_server_main(port: int) -> None:
    """A bare echo endpoint on the race server's own uvicorn settings."""
    import uvicorn
    from starlette.applications import Starlette
    from starlette.routing import WebSocketRoute
    from starlette.websockets import WebSocket

    from server.config import Config
    from server.ops.log import log, setup_logging
    from server.main import loop_factory, uvicorn_config

    async def echo(ws: WebSocket) -> None:
        await ws.accept()
        try:
            while True:
                msg = await ws.receive()
                if msg["type"] == "websocket.disconnect":
                    return
                await ws.send_bytes(msg["bytes"])
        except Exception:
            return

    setup_logging("info")
    app = Starlette(routes=[WebSocketRoute("/ws", echo)])
    server = uvicorn.Server(uvicorn_config(app, Config(port=port, connections_per_address=0)))  # one client address

    async def run() -> None:
        task = asyncio.create_task(server.serve())
        while not server.started:
            await asyncio.sleep(0.01)
        host, real_port = server.servers[0].sockets[0].getsockname()[:2]
        log("listening", url=f"http://{host}:{real_port}")
        await task

    with asyncio.Runner(loop_factory=loop_factory()) as runner:
        runner.run(run())


def http(url: str, method: str = "GET", body: object = None) -> dict:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method, headers={"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.loads(resp.read())


# ------------------------------------------------------------------ lines (before the clock)
def choose(game: Game, rng: random.Random) -> str | None:
    """A legal move: half the time one to a foundation if any, else any but a draw; draw only when forced
    (the stock goes by once, so drawing freely would end most games within the run)."""
    legal = game.legal_moves()
    if not legal:
        return None
    others = [m for m in legal if m != DRAW]
    if not others:
        return DRAW.text()
    home = [m for m in others if m.dst == FOUNDATION]
    return (rng.choice(home) if home and rng.random() < 0.5 else rng.choice(others)).text()


def playout(deal: int, seed: int, moves: int) -> list[bytes]:
    """A random legal line of ``moves`` moves on a Forty Thieves deal, as encoded move frames (seq 1, 2, ...).

    Shorter only if every try (a few seeds) blocks or wins first: then the longest.
    """
    best: list[str] = []
    for attempt in range(5):
        rng, game, line = random.Random(seed * 8 + attempt), Game.new(get_variant("forty-thieves"), deal), []
        while len(line) < moves and (text := choose(game, rng)) is not None:
            game.push_text(text)
            line.append(text)
        if len(line) > len(best):
            best = line
        if len(best) == moves:
            break
    return [p.encode(p.Move(seq=i, move=text)) for i, text in enumerate(best, 1)]


def _playout(job: tuple[int, int, int]) -> list[bytes]:
    return playout(*job)


def playouts(jobs: list[tuple[int, int, int]]) -> list[list[bytes]]:
    """:func:`playout` of each (deal, seed, moves), on every core: a 200-player run needs some 10^5 moves."""
    if sum(moves for _, _, moves in jobs) < 20_000:
        return [playout(*job) for job in jobs]
    with ProcessPoolExecutor(os.cpu_count() or 1) as pool:
        return list(pool.map(_playout, jobs, chunksize=max(1, len(jobs) // (4 * (os.cpu_count() or 1)))))


def line_moves(players: int, pace: float, seconds: float) -> int:
    """Moves a player's line needs for ``seconds`` of moving: at ``pace`` moves/s, or at its share of
    :data:`CEILING_MOVES_PER_S` when unpaced, with a quarter to spare."""
    rate = pace or CEILING_MOVES_PER_S / max(1, players)
    return math.ceil(rate * seconds * 1.25) + 10


# ------------------------------------------------------------------ clients
class _Kind(msgspec.Struct):
    type: str


_kind = msgspec.msgpack.Decoder(_Kind)


async def answer(ws: websockets.ClientConnection) -> p.Ack | p.Reject:
    """The next ack or reject, decoded in full; other frames (progress) only have their type read."""
    while True:
        data = await ws.recv()
        if _kind.decode(data).type in ("ack", "reject"):
            msg = p.decode_server(data)  # type: ignore[arg-type]
            assert isinstance(msg, (p.Ack, p.Reject))
            return msg


async def player(url: str, race: str, name: str, frames: list[bytes], stats: Stats, stop: asyncio.Event,
                 started: asyncio.Event, rng: random.Random, pace: float) -> None:
    """One seat playing ``frames`` (a precomputed legal line) one move in flight at a time, from the start on.

    The server closing the socket once the measurement is over (1012 at its shutdown) ends the seat quietly.
    """
    try:
        await _play_line(url, race, name, frames, stats, stop, started, rng, pace)
    except websockets.ConnectionClosed:
        if not stop.is_set():
            raise


async def _play_line(url: str, race: str, name: str, frames: list[bytes], stats: Stats, stop: asyncio.Event,
                     started: asyncio.Event, rng: random.Random, pace: float) -> None:
    async with websockets.connect(url, compression=None, max_queue=None) as ws:
        await ws.send(p.encode(p.Hello(protocol=p.PROTOCOL_VERSION, race=race, name=name)))
        await started.wait()
        while True:  # the countdown
            msg = p.decode_server(await ws.recv())
            if isinstance(msg, p.Countdown):
                # + 10 ms: a timer may fire a little early, and a move before starts_at is refused
                await asyncio.sleep(max(0.0, (msg.starts_at - msg.server_time) / 1000) + 0.01)
                break
        next_at = time.perf_counter() + (rng.random() / pace if pace else 0.0)  # spread, not in lockstep
        i = 0
        while i < len(frames) and not stop.is_set():
            if pace:
                next_at += 1.0 / pace
                await asyncio.sleep(max(0.0, next_at - time.perf_counter()))
            t0 = time.perf_counter()
            await ws.send(frames[i])
            msg = await answer(ws)
            if stats.counting:
                stats.rtts.append(time.perf_counter() - t0)
            if isinstance(msg, p.Ack):
                i += 1
                stats.acks += stats.counting
            else:  # the same frame goes again: a refused seq is not used up
                stats.rejects += stats.counting
                if msg.reason != "rate_limited":
                    raise RuntimeError(f"legal move {i + 1} of {name} in {race} rejected: {msg}")
        if i == len(frames):
            stats.exhausted += 1


async def spectator(url: str, race: str, stats: Stats, stop: asyncio.Event) -> None:
    """A spectator reading every frame as it comes, until the stop.

    Why not a read with a timeout that checks the stop: ``wait_for`` makes a task and a timer for every
    frame, client work on the cores the server shares that the server did not cause.
    """
    async with websockets.connect(url, compression=None, max_queue=None) as ws:
        await ws.send(p.encode(p.Hello(protocol=p.PROTOCOL_VERSION, race=race, role="spectator")))
        reading, stopped = asyncio.ensure_future(_watch(ws, stats)), asyncio.ensure_future(stop.wait())
        await asyncio.wait([reading, stopped], return_when=asyncio.FIRST_COMPLETED)
        if reading.done() and not stop.is_set():
            reading.result()  # the stream ended before the stop: say why
        for task in (reading, stopped):
            task.cancel()
        await asyncio.gather(reading, stopped, return_exceptions=True)


async def _watch(ws: websockets.ClientConnection, stats: Stats) -> None:
    async for data in ws:
        if stats.counting and isinstance(p.decode_server(data), p.Progress):  # type: ignore[arg-type]
            stats.progress += 1


async def echo_client(url: str, stats: Stats, stop: asyncio.Event, frame: bytes) -> None:
    """The player's loop against the echo: send ready bytes, wait for the answer, decode it as an ack."""
    async with websockets.connect(url, compression=None, max_queue=None) as ws:
        while not stop.is_set():
            t0 = time.perf_counter()
            await ws.send(frame)
            await answer(ws)
            if stats.counting:
                stats.rtts.append(time.perf_counter() - t0)
                stats.acks += 1


async def measure(stats: Stats, stop: asyncio.Event, warmup: float, duration: float,
                  window: Window | None = None) -> float:
    """Count for ``duration`` seconds after ``warmup``; the CPU ``window`` (if any) spans the same time."""
    await asyncio.sleep(warmup)
    if window:
        window.start()
    stats.counting = True
    t0 = time.perf_counter()
    await asyncio.sleep(duration)
    stats.counting = False
    elapsed = time.perf_counter() - t0
    if window:
        window.stop()
    stop.set()
    return elapsed


async def race_load(bases: str | list[str], args: argparse.Namespace,
                    window: Window | None = None) -> tuple[Stats, float]:
    """The load against one server, or several on one Redis: each race is created on one,
    its players and spectators dealt round-robin over all (``bench/scale.py``)."""
    bases = [bases] if isinstance(bases, str) else bases
    urls = [base.replace("http://", "ws://") + "/ws" for base in bases]
    stats, stop, started = Stats(), asyncio.Event(), asyncio.Event()
    rng = random.Random(args.seed)
    deals = [rng.randrange(1, 1_000_000) for _ in range(args.races)]
    moves = args.line_moves or line_moves(args.races * args.players, args.pace, args.warmup + args.duration)
    t0 = time.perf_counter()
    lines = playouts([(deal, args.seed * 1_000_003 + r * args.players + i, moves)
                      for r, deal in enumerate(deals) for i in range(args.players)])
    short = sum(len(line) < moves for line in lines)
    print(f"  {len(lines)} lines of {moves} moves precomputed in {time.perf_counter() - t0:.1f} s"
          + (f" ({short} shorter: blocked or won)" if short else ""), flush=True)
    tasks, creators = [], []
    n = 0
    for r, deal in enumerate(deals):
        created = http(bases[r % len(bases)] + "/races", "POST",
                       {"seats": args.players, "deal_source": "number", "deal": deal, "time_limit": 3600})
        race = created["race"]["id"]
        creators.append(created["creator_token"])
        for i in range(args.players + args.spectators):
            url = urls[n % len(urls)]
            n += 1
            if i < args.players:
                tasks.append(asyncio.create_task(player(url, race, f"p{i}", lines[r * args.players + i], stats,
                                                        stop, started, random.Random(rng.random()), args.pace)))
            else:
                tasks.append(asyncio.create_task(spectator(url, race, stats, stop)))
    await asyncio.sleep(1.0 + 0.005 * len(tasks))  # every hello answered
    async with websockets.connect(urls[0], compression=None) as admin:  # a creator token starts it anywhere
        for token in creators:
            await admin.send(p.encode(p.Start(creator_token=token)))
    started.set()
    elapsed = await measure(stats, stop, args.warmup, args.duration, window)
    done, _ = await asyncio.wait(tasks, timeout=10)
    for t in done:
        if t.exception():
            raise t.exception()  # type: ignore[misc]
    return stats, elapsed


async def echo_load(base: str, args: argparse.Namespace, frame: bytes,
                    window: Window | None = None) -> tuple[Stats, float]:
    ws_url = base.replace("http://", "ws://") + "/ws"
    stats, stop = Stats(), asyncio.Event()
    tasks = [asyncio.create_task(echo_client(ws_url, stats, stop, frame)) for _ in range(args.races * args.players)]
    elapsed = await measure(stats, stop, args.warmup, args.duration, window)
    await asyncio.wait(tasks, timeout=10)
    return stats, elapsed


async def idle_spectators(base: str, pid: int, count: int) -> dict[str, float]:
    """Server RSS per idle spectator connection: ``count`` of them on a lobby race (no frames after the
    welcome), VmRSS after they are all welcomed less VmRSS before, over ``count``. A first few connect
    before the reading, so that what the first connection costs once (code paths, pools) is not counted."""
    url = base.replace("http://", "ws://") + "/ws"
    race = http(base + "/races", "POST", {"seats": 2, "deal_source": "number", "deal": 1,
                                          "time_limit": 3600})["race"]["id"]

    async def connect() -> websockets.ClientConnection:
        ws = await websockets.connect(url, compression=None, open_timeout=60)
        await ws.send(p.encode(p.Hello(protocol=p.PROTOCOL_VERSION, race=race, role="spectator")))
        while not isinstance(p.decode_server(await ws.recv()), p.Welcome):  # type: ignore[arg-type]
            pass
        return ws

    async def wave(size: int) -> list[websockets.ClientConnection]:
        out: list[websockets.ClientConnection] = []
        for i in range(0, size, 100):  # in waves: the accept queue is finite
            out += await asyncio.gather(*(connect() for _ in range(min(100, size - i))))
        return out

    conns = await wave(20)
    await asyncio.sleep(0.5)
    before = rss_kb(pid)
    conns += await wave(count)
    await asyncio.sleep(0.5)
    after = rss_kb(pid)
    await asyncio.gather(*(ws.close() for ws in conns))
    return {"idle_spectators": count, "server_rss_before_kb": before, "server_rss_after_kb": after,
            "rss_kb_per_spectator": (after - before) / count}


def report(name: str, s: dict[str, float | None]) -> None:
    """The figures one a line: counts whole, small values with two decimals, unknown ones as n/a."""
    print(f"{name}:")
    for k, v in s.items():
        digits = 0 if v is None or float(v).is_integer() else 1 if abs(v) >= 10 else 2
        print(f"  {k:23} {'n/a':>10}" if v is None else f"  {k:23} {v:10.{digits}f}")


def per(amount: float | None, work: float | None) -> float | None:
    """``amount`` per unit of work, if both are known."""
    return None if amount is None or not work else amount / work


def cpu_per(cpu: float | None, work: float | None) -> float | None:
    """Microseconds of CPU per unit of work, if both are known."""
    share = per(cpu, work)
    return None if share is None else share * 1e6


async def main_async(args: argparse.Namespace) -> dict[str, object]:
    pace = f"{args.pace:g} moves/s each" if args.pace else "as fast as answered"
    print(f"race server: {args.races} races x {args.players} players ({pace}) + {args.spectators} spectators "
          f"each, {args.duration:g} s after {args.warmup:g} s warm-up; "
          f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores ...", flush=True)
    idle: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="thieves-bench-") as data:
        if args.server_url:  # a server elsewhere: its counter, not its CPU
            window = Window({"server": None, "redis": None, "client": os.getpid()}, args.server_url, MOVES_ACCEPTED)
            stats, elapsed = await race_load(args.server_url, args, window)
        else:
            with contextlib.ExitStack() as stack:
                redis_url, master = args.redis_url, None
                if args.replica:
                    master, redis_url = stack.enter_context(replicated_redis(Path(data) / "pair"))
                command = server_command(args.rate, data_dir=data, redis_url=redis_url)
                proc, base = start_child(command + ["--replica-acks", args.replica_acks])
                try:
                    # the embedded redis-server is the server's child, --replica's master is this one's;
                    # a --redis-url one is not watched
                    redis_pid = master.pid if master is not None else child_named(proc.pid, "redis-server")
                    window = Window({"server": proc.pid, "redis": redis_pid, "client": os.getpid()}, base,
                                    MOVES_ACCEPTED)
                    if args.idle_spectators:
                        idle = await idle_spectators(base, proc.pid, args.idle_spectators)
                    stats, elapsed = await race_load(base, args, window)
                finally:
                    proc.terminate()
                    proc.wait(10)
    race: dict[str, float | None] = {**stats.summary(elapsed), "lines_exhausted": stats.exhausted}
    moves = window.count
    race["moves_in_window"] = moves
    race["server_cpu_cores"] = None if window.cpu["server"] is None else window.cpu["server"] / elapsed
    race["server_cpu_us_per_move"] = cpu_per(window.cpu["server"], moves)
    race["redis_cpu_cores"] = None if window.cpu["redis"] is None else window.cpu["redis"] / elapsed
    race["redis_cpu_us_per_move"] = cpu_per(window.cpu["redis"], moves)
    race["server_syscalls_per_move"] = per(window.calls["server"], moves)
    race["client_cpu_us_per_move"] = cpu_per(window.cpu["client"], moves)
    report("race server (validated moves)", race)
    if stats.exhausted:
        print(f"  WARNING: {stats.exhausted} players ran out of their line before the end: raise --line-moves")

    # An ack-sized frame (a board), decoded on return like an ack: the echo does all the client's work.
    view = p.View.from_player_view(Game.new(get_variant("forty-thieves"), 1).view())
    frame = p.encode(p.Ack(seq=123456, move="ab", version=99999, view=view, status="racing"))
    print(f"bare echo: {args.races * args.players} connections, same client loop ...", flush=True)
    proc, base = start_child([sys.executable, str(Path(__file__).resolve()), "--echo-server"])
    try:
        echo_window = Window({"server": proc.pid, "client": os.getpid()})
        echo_stats, elapsed = await echo_load(base, args, frame, echo_window)
    finally:
        proc.terminate()
        proc.wait(10)
    echo: dict[str, float | None] = {k: v for k, v in echo_stats.summary(elapsed).items()
                                     if k in ("round_trips_per_s", "p50_ms", "p99_ms")}
    echo["server_cpu_cores"] = echo_window.cpu["server"] / elapsed  # type: ignore[operator]
    echo["server_cpu_us_per_frame"] = cpu_per(echo_window.cpu["server"], echo_stats.acks)
    echo["client_cpu_us_per_frame"] = cpu_per(echo_window.cpu["client"], echo_stats.acks)
    echo["server_syscalls_per_frame"] = per(echo_window.calls["server"], echo_stats.acks)
    report("bare echo (upper bound)", echo)
    ratio = race["round_trips_per_s"] / echo["round_trips_per_s"]  # type: ignore[operator]
    print(f"ratio race/echo round trips: {ratio:.2f}")
    per_move, per_frame = race["server_cpu_us_per_move"], echo["server_cpu_us_per_frame"]
    cpu_ratio = per_move / per_frame if per_move and per_frame else None
    if cpu_ratio is not None:
        print(f"ratio server CPU per move / echo CPU per frame: {cpu_ratio:.2f} (goal <= 2)")
    if idle:
        report("idle spectator connections", idle)  # type: ignore[arg-type]
        print(f"server RSS per idle spectator: {idle['rss_kb_per_spectator']:.1f} KB (goal <= 20 KB)")
    ok = race["accepted_per_s"] > 3000 and race["p99_ms"] < 20  # type: ignore[operator]
    print(f"target (>3000 validated moves/s, p99 < 20 ms): {'met' if ok else 'NOT met'}")
    return {"args": vars(args), "race": race, "echo": echo, "ratio": ratio, "cpu_ratio": cpu_ratio,
            "idle_spectators": idle}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--races", type=int, default=20)
    parser.add_argument("--players", type=int, default=10, help="players per race")
    parser.add_argument("--spectators", type=int, default=2, help="spectators per race")
    parser.add_argument("--duration", type=float, default=10.0, help="seconds measured")
    parser.add_argument("--warmup", type=float, default=2.0, help="seconds run before measuring")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--pace", type=float, default=0.0,
                        help="moves per second per player (0: as fast as the server answers); a paced run "
                        "measures round trips below saturation, where a closed loop's latency is not just queueing")
    parser.add_argument("--line-moves", type=int, default=0,
                        help="moves precomputed per player (0: enough for the run at --pace, or unpaced at "
                        f"{CEILING_MOVES_PER_S:,.0f} moves/s over all players)")
    parser.add_argument("--idle-spectators", type=int, default=0,
                        help="also open this many idle spectator connections before the load and print the "
                        "server's RSS per connection (0: skip)")
    parser.add_argument("--rate", type=float, default=100_000.0,
                        help="the server's per-connection frame rate limit: lifted by default, since these "
                        "players are bots measuring capacity, not people (the server's default is 60/s)")
    parser.add_argument("--redis-url", help="use this Redis instead of the embedded one (its CPU is not measured)")
    parser.add_argument("--replica", action="store_true",
                        help="start a Redis master (append-only file, as the embedded one) with one replica and "
                        "use it (the master's CPU is measured): with --replica-acks, the cost of waiting for "
                        "the replica")
    parser.add_argument("--replica-acks", choices=("auto", "on", "off"), default="auto",
                        help="the server's --replica-acks (auto: on exactly when Redis has a replica)")
    parser.add_argument("--server-url", help="drive a running server (http://host:port) instead of starting one "
                        "(its CPU is not measured)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="run race and echo this many times, one after the other, and print medians, "
                        "ranges and how many runs met each goal")
    parser.add_argument("--json", help="also write the figures to this file (a list of runs with --repeat)")
    parser.add_argument("--echo-server", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.echo_server:
        echo_server_main(0)
        return
    from server.main import loop_factory

    runs = []
    for i in range(args.repeat):
        if args.repeat > 1:
            print(f"--- run {i + 1} of {args.repeat}", flush=True)
        with asyncio.Runner(loop_factory=loop_factory()) as runner:
            runs.append(runner.run(main_async(args)))
    if args.repeat > 1:
        summarize(runs)
    if args.json:
        Path(args.json).write_text(json.dumps(runs[0] if args.repeat == 1 else runs, indent=2))


def summarize(runs: list[dict[str, object]]) -> None:
    """Medians and ranges over repeated runs, and how many met each goal of the move path.

    Why: on a small shared machine the three processes of the race run (client, server, Redis on two
    cores) swing from run to run far more than the two of the echo run; one run proves little.
    """
    def figures(key: str) -> list[float]:
        return [float(r[key]) for r in runs if r.get(key) is not None]  # type: ignore[arg-type]

    def of(run: str, key: str) -> list[float]:
        parts: list[dict[str, Any]] = [r.get(run) or {} for r in runs]  # type: ignore[misc]
        return [float(part[key]) for part in parts if part.get(key) is not None]

    def line(name: str, values: list[float], goal: str = "", met: int | None = None) -> None:
        if not values:
            return
        told = f"  ({goal}: met in {met} of {len(values)})" if goal else ""
        print(f"  {name:34} median {statistics.median(values):8.2f}   range {min(values):.2f} .. {max(values):.2f}{told}")

    cpu, ratio = figures("cpu_ratio"), figures("ratio")
    print(f"over {len(runs)} runs, each a race run then an echo run:")
    line("server CPU per move (us)", of("race", "server_cpu_us_per_move"))
    line("redis CPU per move (us)", of("race", "redis_cpu_us_per_move"))
    line("client CPU per move (us)", of("race", "client_cpu_us_per_move"))
    line("echo server CPU per frame (us)", of("echo", "server_cpu_us_per_frame"))
    line("server syscalls per move", of("race", "server_syscalls_per_move"))
    line("echo server syscalls per frame", of("echo", "server_syscalls_per_frame"))
    line("client CPU per echo (us)", of("echo", "client_cpu_us_per_frame"))
    line("server CPU / echo CPU", cpu, "goal <= 2", sum(v <= 2 for v in cpu))
    line("race/echo round trips", ratio, "goal >= 0.5", sum(v >= 0.5 for v in ratio))


if __name__ == "__main__":
    main()
