"""Load benchmark of the race server: validated moves per second and their round trip.

Starts ``thieves-server`` (embedded Redis with its append-only file, as
``make run`` does) in a child process, creates races over HTTP, connects
players that make legal moves as fast as the server answers (one move in
flight per player) plus spectators, for a fixed time. Then it runs the very
same client loop against a bare echo WebSocket endpoint on the same stack
(Starlette + uvicorn + uvloop, the server's uvicorn settings) as the upper
bound, and prints both with their ratio.

Players know their deal (races are created with ``deal_source: number``)
so each keeps a mirror game and always sends a legal move; the server still
validates every one against Redis. Players draw only when nothing else is
legal, so that games last the run (column moves can go on for ever); a
player left with no legal move at all stops and is counted as blocked.

    python bench/race_load.py                       # 20 races x 10 players, 2 spectators each, 10 s
    python bench/race_load.py --races 5 --players 4 --duration 5
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import websockets  # noqa: E402

from shared import protocol as p  # noqa: E402
from shared.engine import Game  # noqa: E402
from shared.moves import DRAW, FOUNDATION  # noqa: E402
from shared.variants import get_variant  # noqa: E402


@dataclass
class Stats:
    rtts: list[float] = field(default_factory=list)
    acks: int = 0
    rejects: int = 0
    progress: int = 0
    blocked: int = 0
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


def echo_server_main(port: int) -> None:
    """A bare echo endpoint on the race server's own uvicorn settings."""
    import uvicorn
    from starlette.applications import Starlette
    from starlette.routing import WebSocketRoute
    from starlette.websockets import WebSocket

    from server.config import Config
    from server.log import log, setup_logging
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
    server = uvicorn.Server(uvicorn_config(app, Config(port=port)))

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


# ------------------------------------------------------------------ clients
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


async def player(url: str, race: str, name: str, deal: int, stats: Stats, stop: asyncio.Event,
                 started: asyncio.Event, rng: random.Random, pace: float) -> None:
    async with websockets.connect(url, compression=None, max_queue=None) as ws:
        await ws.send(p.encode(p.Hello(protocol=p.PROTOCOL_VERSION, race=race, name=name)))
        game = Game.new(get_variant("forty-thieves"), deal)
        seq = 0
        await started.wait()
        while True:  # the countdown
            msg = p.decode_server(await ws.recv())
            if isinstance(msg, p.Countdown):
                # + 10 ms: a timer may fire a little early, and a move before starts_at is refused
                await asyncio.sleep(max(0.0, (msg.starts_at - msg.server_time) / 1000) + 0.01)
                break
        next_at = time.perf_counter() + (rng.random() / pace if pace else 0.0)  # spread, not in lockstep
        while not stop.is_set():
            if pace:
                next_at += 1.0 / pace
                await asyncio.sleep(max(0.0, next_at - time.perf_counter()))
            text = choose(game, rng)
            if text is None:
                stats.blocked += 1
                return
            seq += 1
            t0 = time.perf_counter()
            await ws.send(p.encode(p.Move(seq=seq, move=text)))
            while True:
                msg = p.decode_server(await ws.recv())
                if isinstance(msg, (p.Ack, p.Reject)) and msg.seq == seq:
                    break
            if stats.counting:
                stats.rtts.append(time.perf_counter() - t0)
            if isinstance(msg, p.Ack):
                game.push_text(text)
                stats.acks += stats.counting
            else:
                stats.rejects += stats.counting
                if msg.reason != "rate_limited":
                    raise RuntimeError(f"legal move {text} rejected: {msg}")


async def spectator(url: str, race: str, stats: Stats, stop: asyncio.Event) -> None:
    async with websockets.connect(url, compression=None, max_queue=None) as ws:
        await ws.send(p.encode(p.Hello(protocol=p.PROTOCOL_VERSION, race=race, role="spectator")))
        while not stop.is_set():
            try:
                data = await asyncio.wait_for(ws.recv(), 0.5)
            except asyncio.TimeoutError:
                continue
            if stats.counting and isinstance(p.decode_server(data), p.Progress):
                stats.progress += 1


async def echo_client(url: str, stats: Stats, stop: asyncio.Event, frame: bytes) -> None:
    async with websockets.connect(url, compression=None, max_queue=None) as ws:
        while not stop.is_set():
            t0 = time.perf_counter()
            await ws.send(frame)
            p.decode_server(await ws.recv())
            if stats.counting:
                stats.rtts.append(time.perf_counter() - t0)
                stats.acks += 1


async def measure(stats: Stats, stop: asyncio.Event, warmup: float, duration: float) -> float:
    await asyncio.sleep(warmup)
    stats.counting = True
    t0 = time.perf_counter()
    await asyncio.sleep(duration)
    stats.counting = False
    elapsed = time.perf_counter() - t0
    stop.set()
    return elapsed


async def race_load(bases: str | list[str], args: argparse.Namespace) -> tuple[Stats, float]:
    """The load against one server, or several on one Redis: each race is created on one,
    its players and spectators dealt round-robin over all (``bench/scale.py``)."""
    bases = [bases] if isinstance(bases, str) else bases
    urls = [base.replace("http://", "ws://") + "/ws" for base in bases]
    stats, stop, started = Stats(), asyncio.Event(), asyncio.Event()
    rng = random.Random(args.seed)
    tasks, creators = [], []
    n = 0
    for r in range(args.races):
        deal = rng.randrange(1, 1_000_000)
        created = http(bases[r % len(bases)] + "/races", "POST",
                       {"seats": args.players, "deal_source": "number", "deal": deal, "time_limit": 3600})
        race = created["race"]["id"]
        creators.append(created["creator_token"])
        for i in range(args.players + args.spectators):
            url = urls[n % len(urls)]
            n += 1
            if i < args.players:
                tasks.append(asyncio.create_task(player(url, race, f"p{i}", deal, stats, stop, started,
                                                        random.Random(rng.random()), args.pace)))
            else:
                tasks.append(asyncio.create_task(spectator(url, race, stats, stop)))
    await asyncio.sleep(1.0 + 0.005 * len(tasks))  # every hello answered
    async with websockets.connect(urls[0], compression=None) as admin:  # a creator token starts it anywhere
        for token in creators:
            await admin.send(p.encode(p.Start(creator_token=token)))
    started.set()
    elapsed = await measure(stats, stop, args.warmup, args.duration)
    done, _ = await asyncio.wait(tasks, timeout=10)
    for t in done:
        if t.exception():
            raise t.exception()  # type: ignore[misc]
    return stats, elapsed


async def echo_load(base: str, args: argparse.Namespace, frame: bytes) -> tuple[Stats, float]:
    ws_url = base.replace("http://", "ws://") + "/ws"
    stats, stop = Stats(), asyncio.Event()
    tasks = [asyncio.create_task(echo_client(ws_url, stats, stop, frame)) for _ in range(args.races * args.players)]
    elapsed = await measure(stats, stop, args.warmup, args.duration)
    await asyncio.wait(tasks, timeout=10)
    return stats, elapsed


def report(name: str, s: dict[str, float]) -> None:
    print(f"{name}:")
    for k, v in s.items():
        print(f"  {k:22} {v:10.1f}")


async def main_async(args: argparse.Namespace) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="thieves-bench-") as data:
        server_args = [sys.executable, "-m", "server.main", "--port", "0", "--data-dir", data,
                       "--countdown", "0.2", "--rate", str(args.rate), "--burst", str(int(args.rate)),
                       "--checked-pool-size", "0",  # no solver filler competing for the CPU being measured
                       "--create-burst", "0", "--lobbies-per-address", "0"]  # every race from one address
        if args.redis_url:
            server_args += ["--redis-url", args.redis_url]
        pace = f"{args.pace:g} moves/s each" if args.pace else "as fast as answered"
        print(f"race server: {args.races} races x {args.players} players ({pace}) + {args.spectators} spectators "
              f"each, {args.duration:.0f} s after {args.warmup:.0f} s warm-up ...", flush=True)
        if args.server_url:
            stats, elapsed = await race_load(args.server_url, args)
        else:
            proc, base = start_child(server_args)
            try:
                stats, elapsed = await race_load(base, args)
            finally:
                proc.terminate()
                proc.wait(10)
    race = stats.summary(elapsed)
    race["blocked_players"] = stats.blocked
    report("race server (validated moves)", race)

    # An ack-sized frame (a board), decoded on return like an ack: the echo does all the client's work.
    view = p.View.from_player_view(Game.new(get_variant("forty-thieves"), 1).view())
    frame = p.encode(p.Ack(seq=123456, move="ab", version=99999, view=view, status="racing"))
    print(f"bare echo: {args.races * args.players} connections, same client loop ...", flush=True)
    proc, base = start_child([sys.executable, str(Path(__file__).resolve()), "--echo-server"])
    try:
        echo_stats, elapsed = await echo_load(base, args, frame)
    finally:
        proc.terminate()
        proc.wait(10)
    echo = echo_stats.summary(elapsed)
    report("bare echo (upper bound)", {k: echo[k] for k in ("round_trips_per_s", "p50_ms", "p99_ms")})
    ratio = race["round_trips_per_s"] / echo["round_trips_per_s"]
    print(f"ratio race/echo: {ratio:.2f}")
    ok = race["accepted_per_s"] > 3000 and race["p99_ms"] < 20
    print(f"target (>3000 validated moves/s, p99 < 20 ms): {'met' if ok else 'NOT met'}")
    return {"args": vars(args), "race": race, "echo": echo, "ratio": ratio}


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
    parser.add_argument("--rate", type=float, default=100_000.0,
                        help="the server's per-connection frame rate limit: lifted by default, since these "
                        "players are bots measuring capacity, not people (the server's default is 60/s)")
    parser.add_argument("--redis-url", help="use this Redis instead of the embedded one")
    parser.add_argument("--server-url", help="drive a running server (http://host:port) instead of starting one")
    parser.add_argument("--json", help="also write the figures to this file")
    parser.add_argument("--echo-server", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.echo_server:
        echo_server_main(0)
        return
    from server.main import loop_factory

    with asyncio.Runner(loop_factory=loop_factory()) as runner:
        result = runner.run(main_async(args))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
