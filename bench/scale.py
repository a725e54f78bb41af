"""Scale-out benchmark: one server process against two on one Redis, and spectator fan-out.

1. **Processes.** The same load (``--races`` races of ``--players`` players
   making legal moves as fast as they are answered, the client loop of
   ``bench/race_load.py``) first against one ``thieves-server`` process,
   then against two processes sharing one Redis, each race's players spread
   over both. Prints validated moves per second for each and the ratio.
2. **Fan-out.** One race, ``--spectators`` spectators (default 1,000) and
   one player who moves every ``--gap`` seconds. For each move: the time
   from sending it to the moment the last spectator holds a ``progress``
   frame that includes it; p50 and p99 over the moves (and over every
   spectator's frame). Moves are spaced wider than the progress tick, so
   this is the path of one event, not the coalescing delay. The first
   spectator's frame shows the server's part (the move's commit, pub/sub,
   the progress read and the first sends); from there to the last one is
   mostly this one client process reading 1,000 sockets.

One private redis-server (append-only file, ``appendfsync everysec``, as in
production) serves every run. The client runs in this one process, on the
same cores as the servers and Redis: on a 2-core machine a second server
process competes with the client for CPU, so the ratio shows what one
machine gives, not what two machines would. The load average is printed
with the figures.

    python bench/scale.py                          # 10 races x 10 players, 8 s each; 1,000 spectators
    python bench/scale.py --duration 4 --spectators 300
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import websockets  # noqa: E402
from race_load import http, race_load, report, server_command, start_child  # noqa: E402

from server.ops.embedded import EmbeddedRedis, free_port  # noqa: E402
from shared import protocol as p  # noqa: E402


async def processes(redis_url: str, count: int, args: argparse.Namespace) -> dict[str, float]:
    procs = [start_child(server_command(args.rate, redis_url=redis_url)) for _ in range(count)]
    try:
        load = argparse.Namespace(**{**vars(args), "spectators": 0, "pace": 0.0, "line_moves": 0})
        stats, elapsed = await race_load([base for _, base in procs], load)
    finally:
        for proc, _ in procs:
            proc.terminate()
            proc.wait(10)
    out = stats.summary(elapsed)
    out["lines_exhausted"] = stats.exhausted
    return out


# ------------------------------------------------------------------ fan-out
class Watcher:
    """One spectator: when did each progress version reach it."""

    def __init__(self) -> None:
        self.arrivals: list[tuple[int, float]] = []

    async def run(self, url: str, race: str, ready: asyncio.Event, joined: list[int]) -> None:
        """Read frames until cancelled.

        A plain ``recv()``, not one under ``wait_for`` to look at a stop flag: with a thousand
        spectators in this one process, a timeout task per frame (and the cancellations every
        half second) cost the client more than decoding the frames did, and was measured as latency.
        """
        async with websockets.connect(url, compression=None, max_queue=None, open_timeout=60) as ws:
            await ws.send(p.encode(p.Hello(protocol=p.PROTOCOL_VERSION, race=race, role="spectator")))
            welcomed = False
            while True:
                data = await ws.recv()
                at = time.perf_counter()
                msg = p.decode_server(data)  # type: ignore[arg-type]
                if isinstance(msg, p.Welcome) and not welcomed:
                    welcomed = True
                    joined.append(1)
                    if len(joined) >= ready_target(ready):
                        ready.set()
                elif isinstance(msg, p.Progress):
                    self.arrivals.append((msg.version, at))


def ready_target(event: asyncio.Event) -> int:
    return getattr(event, "target", 0)


async def fan_out(redis_url: str, args: argparse.Namespace) -> dict[str, float]:
    proc, base = start_child(server_command(args.rate, redis_url=redis_url))
    url = base.replace("http://", "ws://") + "/ws"
    try:
        created = http(base + "/races", "POST", {"seats": 1, "deal_source": "number", "deal": 2, "time_limit": 3600})
        race = created["race"]["id"]
        watchers = [Watcher() for _ in range(args.spectators)]
        ready, joined = asyncio.Event(), []
        ready.target = args.spectators  # type: ignore[attr-defined]
        tasks = []
        for i in range(0, len(watchers), 100):  # connect in waves: the accept queue is finite
            tasks += [asyncio.create_task(w.run(url, race, ready, joined)) for w in watchers[i:i + 100]]
            await asyncio.sleep(0.2)
        await asyncio.wait_for(ready.wait(), 120)
        acks, _ = await mover(url, race, created["creator_token"], args.moves, args.gap)
        await asyncio.sleep(1.0)
        for task in tasks:
            task.cancel()
        await asyncio.wait(tasks, timeout=15)
    finally:
        proc.terminate()
        proc.wait(10)
    first, last, each, missing = delays(acks, [w.arrivals for w in watchers])
    return {
        "spectators": float(args.spectators),
        "moves": float(len(acks)),
        "first_spectator_p50_ms": pct(first, 50) * 1000,
        "first_spectator_p99_ms": pct(first, 99) * 1000,
        "last_spectator_p50_ms": pct(last, 50) * 1000,
        "last_spectator_p99_ms": pct(last, 99) * 1000,
        "any_spectator_p50_ms": pct(each, 50) * 1000,
        "any_spectator_p99_ms": pct(each, 99) * 1000,
        "frames_missing": float(missing),
    }


async def mover(url: str, race: str, creator_token: str, moves: int, gap: float,
                clock: Callable[[], float] = lambda: 0.0) -> tuple[list[tuple[int, float]], float]:
    """The one player of a fan-out race: joins, starts it, and once it is under way draws ``moves`` times,
    ``gap`` seconds apart. Returns each acknowledged move's (version, time sent), and how far ``clock``
    (a CPU reading, say) moved over the moves."""
    acks: list[tuple[int, float]] = []
    async with websockets.connect(url, compression=None, max_queue=None) as ws:
        await ws.send(p.encode(p.Hello(protocol=p.PROTOCOL_VERSION, race=race, name="mover")))
        await ws.send(p.encode(p.Start(creator_token=creator_token)))
        while not isinstance(msg := p.decode_server(await ws.recv()), p.Countdown):  # type: ignore[arg-type]
            pass
        await asyncio.sleep(max(0.0, (msg.starts_at - msg.server_time) / 1000) + 0.3)
        before = clock()
        for seq in range(1, moves + 1):
            sent = time.perf_counter()
            await ws.send(p.encode(p.Move(seq=seq, move="S")))
            while not isinstance(ack := p.decode_server(await ws.recv()), (p.Ack, p.Reject)):  # type: ignore[arg-type]
                pass
            if isinstance(ack, p.Ack):
                acks.append((ack.version, sent))
            await asyncio.sleep(gap)
        return acks, clock() - before


def pct(values: list[float], q: int) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))]


def delays(acks: list[tuple[int, float]], arrivals: list[list[tuple[int, float]]]
           ) -> tuple[list[float], list[float], list[float], int]:
    """For each acknowledged move (version, when), every watcher's delay to the first frame at or past
    that version: the first watcher's per move, the last's per move, all of them, and how many never came."""
    first, last, each, missing = [], [], [], 0
    for version, acked in acks:
        times = []
        for seen in arrivals:
            got = next((at for v, at in seen if v >= version), None)
            if got is None:
                missing += 1
            else:
                times.append(got - acked)
        if times:
            first.append(min(times))
            last.append(max(times))
            each.extend(times)
    return first, last, each, missing


async def main_async(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="thieves-scale-") as data:
        redis = EmbeddedRedis(data, port=free_port(), appendonly=True).start()
        try:
            print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores", flush=True)
            if not args.skip_processes:
                figures = {}
                for count in (1, 2):
                    print(f"{args.races} races x {args.players} players over {count} server process(es), "
                          f"{args.duration:g} s after {args.warmup:g} s warm-up ...", flush=True)
                    figures[count] = await processes(redis.url, count, args)
                    report(f"{count} process(es)", figures[count])
                    print(f"  load average now        {os.getloadavg()[0]:10.2f}", flush=True)
                ratio = figures[2]["accepted_per_s"] / figures[1]["accepted_per_s"]
                print(f"validated moves/s: 1 process {figures[1]['accepted_per_s']:.0f}, "
                      f"2 processes {figures[2]['accepted_per_s']:.0f}, ratio {ratio:.2f}")
            if args.spectators:
                print(f"fan-out: 1 race, {args.spectators} spectators, {args.moves} moves {args.gap:g} s apart ...",
                      flush=True)
                fan = await fan_out(redis.url, args)
                report("move sent -> its progress frame at spectators", fan)
                print(f"move -> last spectator's frame: p50 {fan['last_spectator_p50_ms']:.1f} ms, "
                      f"p99 {fan['last_spectator_p99_ms']:.1f} ms over {fan['moves']:.0f} moves, "
                      f"{fan['spectators']:.0f} spectators (goal: p99 <= 100 ms)")
                print(f"  load average now        {os.getloadavg()[0]:10.2f}")
        finally:
            redis.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--races", type=int, default=10)
    parser.add_argument("--players", type=int, default=10, help="players per race")
    parser.add_argument("--duration", type=float, default=8.0, help="seconds measured per run")
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rate", type=float, default=100_000.0, help="per-connection rate limit (lifted for bots)")
    parser.add_argument("--spectators", type=int, default=1000, help="spectators of the fan-out race (0: skip)")
    parser.add_argument("--moves", type=int, default=100,
                        help="moves timed in the fan-out run (the p99 of fewer than 100 is their maximum)")
    parser.add_argument("--gap", type=float, default=0.25, help="seconds between those moves")
    parser.add_argument("--skip-processes", action="store_true", help="only the fan-out run")
    args = parser.parse_args()
    from server.main import loop_factory

    with asyncio.Runner(loop_factory=loop_factory()) as runner:
        runner.run(main_async(args))


if __name__ == "__main__":
    main()
