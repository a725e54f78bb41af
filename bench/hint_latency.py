"""What hints cost the other racers: move round trips while some players ask for hints.

A race of ``--players`` players moves at ``--pace`` moves per second each
(well below saturation: this measures latency, not throughput), while
``--hinters`` players of another race (hints allowed, no wait between
hints) ask for one hint after another on deals the solver cannot settle
within the budget, so each hint spends its whole ``--budget`` searching.
Three runs against a fresh ``thieves-server`` each:

- ``no hints``: the hinters stay idle (the baseline);
- ``thread``: ``--hint-workers 0``, the solver in a thread of the server
  process (the pure-Python search holds the GIL the event loop needs, the
  compiled one lets go of it while it searches);
- ``process``: ``--hint-workers 1``, the solver in a worker process.

Prints the move round trip p50 / p99 / max and hints answered per second
for each. On a 2-core machine the worker process competes with the server
and Redis for the cores, so the process figures include that.

    python bench/hint_latency.py                       # 5 players at 20 moves/s, 2 hinters, 0.3 s budget
    python bench/hint_latency.py --duration 5 --hinters 4
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import websockets  # noqa: E402
from race_load import Stats, http, line_moves, player, playouts, start_child  # noqa: E402

from server.ops.embedded import EmbeddedRedis, free_port  # noqa: E402
from shared import protocol as p  # noqa: E402

HARD_DEALS = (1, 3, 4, 5, 7)
"""Forty Thieves deals on which a 0.3 s hint finds no line: every hint uses its whole budget."""


async def hinter(url: str, race: str, name: str, stop: asyncio.Event, answered: list[float]) -> None:
    async with websockets.connect(url, compression=None, max_queue=None) as ws:
        await ws.send(p.encode(p.Hello(protocol=p.PROTOCOL_VERSION, race=race, name=name)))
        while True:
            msg = p.decode_server(await ws.recv())
            if isinstance(msg, p.Countdown):
                await asyncio.sleep(max(0.0, (msg.starts_at - msg.server_time) / 1000) + 0.01)
                break
        while not stop.is_set():
            t0 = time.perf_counter()
            await ws.send(p.encode(p.HintRequest()))
            while True:
                msg = p.decode_server(await ws.recv())
                if isinstance(msg, p.HintAnswer):
                    answered.append(time.perf_counter() - t0)
                    break
                if isinstance(msg, p.Error):
                    raise RuntimeError(f"hint refused: {msg}")


async def run(redis_url: str, workers: int, hinters: int, args: argparse.Namespace) -> dict[str, float]:
    proc, base = start_child([sys.executable, "-m", "server.main", "--port", "0", "--redis-url", redis_url,
                              "--countdown", "0.5", "--rate", "100000", "--burst", "100000",
                              "--hint-workers", str(workers), "--hint-budget", str(args.budget),
                              "--hint-interval", "0", "--checked-pool-size", "0"])
    url = base.replace("http://", "ws://") + "/ws"
    try:
        stats, stop, started = Stats(), asyncio.Event(), asyncio.Event()
        deal = 4242
        racers = http(base + "/races", "POST", {"seats": args.players, "deal_source": "number", "deal": deal,
                                               "time_limit": 3600})
        moves = line_moves(args.players, args.pace, args.warmup + args.duration)
        lines = playouts([(deal, i, moves) for i in range(args.players)])
        tasks = [asyncio.create_task(player(url, racers["race"]["id"], f"p{i}", line, stats, stop, started,
                                            random.Random(i), args.pace)) for i, line in enumerate(lines)]
        helped = http(base + "/races", "POST", {"seats": max(1, hinters), "deal_source": "number",
                                               "deal": HARD_DEALS[0], "time_limit": 3600, "hints": True})
        answered: list[float] = []
        tasks += [asyncio.create_task(hinter(url, helped["race"]["id"], f"h{i}", stop, answered))
                  for i in range(hinters)]
        await asyncio.sleep(1.0)
        async with websockets.connect(url, compression=None) as admin:
            await admin.send(p.encode(p.Start(creator_token=racers["creator_token"])))
            if hinters:
                await admin.send(p.encode(p.Start(creator_token=helped["creator_token"])))
        started.set()
        await asyncio.sleep(args.warmup)
        stats.counting, first = True, len(answered)
        t0 = time.perf_counter()
        await asyncio.sleep(args.duration)
        stats.counting = False
        elapsed = time.perf_counter() - t0
        hints = len(answered) - first
        stop.set()
        done, _ = await asyncio.wait(tasks, timeout=10)
        for t in done:
            if t.exception():
                raise t.exception()  # type: ignore[misc]
        q = statistics.quantiles(stats.rtts, n=100)
        return {"p50_ms": q[49] * 1000, "p99_ms": q[98] * 1000, "max_ms": max(stats.rtts) * 1000,
                "moves_per_s": len(stats.rtts) / elapsed, "hints_per_s": hints / elapsed}
    finally:
        proc.terminate()
        proc.wait(10)


async def main_async(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="thieves-hints-") as data:
        redis = EmbeddedRedis(data, port=free_port(), appendonly=True).start()
        try:
            print(f"{args.players} players at {args.pace:g} moves/s each; {args.hinters} hinters, "
                  f"{args.budget:g} s budget; {args.duration:g} s measured; "
                  f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores", flush=True)
            print(f"{'run':<10} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8} {'moves/s':>8} {'hints/s':>8}")
            for name, workers, hinters in (("no hints", 0, 0), ("thread", 0, args.hinters),
                                           ("process", 1, args.hinters)):
                r = await run(redis.url, workers, hinters, args)
                print(f"{name:<10} {r['p50_ms']:8.2f} {r['p99_ms']:8.2f} {r['max_ms']:8.2f} "
                      f"{r['moves_per_s']:8.0f} {r['hints_per_s']:8.2f}", flush=True)
        finally:
            redis.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=5, help="racers moving in the measured race")
    parser.add_argument("--pace", type=float, default=20.0, help="moves per second per racer")
    parser.add_argument("--hinters", type=int, default=2, help="players asking for hints back to back")
    parser.add_argument("--budget", type=float, default=0.3, help="the server's --hint-budget")
    parser.add_argument("--duration", type=float, default=8.0, help="seconds measured per run")
    parser.add_argument("--warmup", type=float, default=1.5)
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
