"""Browser fan-out benchmark: 1,000 SSE spectators of one race, move -> last browser event.

One ``thieves-server`` process (its own private redis-server), one race,
``--spectators`` streams of ``GET /races/{race}/events`` (what a browser's
EventSource opens), and one player who draws a card every ``--gap``
seconds. For each move: the time from sending it to the moment the last
stream has received an event whose id (the table version) includes it;
p50 and p99 over the moves, and over every stream's event; and the server
process's CPU (utime + stime from /proc) over the timed moves per event
delivered, a figure the machine's load hardly moves. Moves are
spaced wider than the progress tick, so this is the path of one event, not
the coalescing delay. Printed, not asserted: the client runs on the same
cores as the server and Redis.

The streams are plain sockets reading the event stream's ``id:`` lines:
1,000 browsers' worth of parsing would measure the client, not the server.

    python bench/sse_spectators.py                    # 1,000 streams, 40 moves 0.25 s apart
    python bench/sse_spectators.py --spectators 300 --moves 20
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from race_load import http, server_command, start_child  # noqa: E402
from procfs import cpu_seconds  # noqa: E402
from scale import delays, mover, pct  # noqa: E402

from server.ops.embedded import EmbeddedRedis, free_port  # noqa: E402
from shared import protocol as p  # noqa: E402


class Stream:
    """One browser's event stream: when did each table version reach it."""

    def __init__(self) -> None:
        self.arrivals: list[tuple[int, float]] = []

    async def run(self, base: str, race: str, joined: list[int], ready: asyncio.Event, target: int,
                  stop: asyncio.Event) -> None:
        url = urlsplit(base)
        reader, writer = await asyncio.open_connection(url.hostname, url.port)
        writer.write(f"GET /races/{race}/events HTTP/1.1\r\nHost: {url.netloc}\r\n"
                     f"Accept: text/event-stream\r\n\r\n".encode())
        await writer.drain()
        try:
            welcomed = False
            while not stop.is_set():
                try:
                    line = await asyncio.wait_for(reader.readline(), 0.5)
                except asyncio.TimeoutError:
                    continue
                if not line:
                    return
                if line.startswith(b"id: "):
                    at = time.perf_counter()
                    self.arrivals.append((int(line[4:]), at))
                    if not welcomed:
                        welcomed = True
                        joined.append(1)
                        if len(joined) >= target:
                            ready.set()
        finally:
            writer.close()


async def fan_out(redis_url: str, args: argparse.Namespace) -> dict[str, float]:
    proc, base = start_child(server_command(100_000.0, redis_url=redis_url))
    url = base.replace("http://", "ws://") + "/ws"
    try:
        created = http(base + "/races", "POST", {"seats": 1, "deal_source": "number", "deal": 2, "time_limit": 3600})
        race = created["race"]["id"]
        streams = [Stream() for _ in range(args.spectators)]
        ready, stop, joined = asyncio.Event(), asyncio.Event(), []
        tasks = []
        for i in range(0, len(streams), 100):  # connect in waves: the accept queue is finite
            tasks += [asyncio.create_task(s.run(base, race, joined, ready, args.spectators, stop))
                      for s in streams[i:i + 100]]
            await asyncio.sleep(0.2)
        await asyncio.wait_for(ready.wait(), 120)
        acks, cpu = await mover(url, race, created["creator_token"], args.moves, args.gap,
                                lambda: cpu_seconds(proc.pid))
        await asyncio.sleep(1.0)
        stop.set()
        await asyncio.wait(tasks, timeout=15)
    finally:
        proc.terminate()
        proc.wait(10)
    _, last, each, missing = delays(acks, [s.arrivals for s in streams])
    return {"spectators": float(args.spectators), "moves": float(len(acks)),
            "last_p50_ms": pct(last, 50) * 1000, "last_p99_ms": pct(last, 99) * 1000,
            "any_p50_ms": pct(each, 50) * 1000, "any_p99_ms": pct(each, 99) * 1000,
            "events_missing": float(missing),
            "server_cpu_us_per_event": cpu / max(1, len(acks) * args.spectators) * 1e6}


async def main_async(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="thieves-sse-") as data:
        redis = EmbeddedRedis(data, port=free_port(), appendonly=True).start()
        try:
            print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores", flush=True)
            print(f"SSE fan-out: 1 race, {args.spectators} event streams, {args.moves} moves {args.gap:g} s apart ...",
                  flush=True)
            fan = await fan_out(redis.url, args)
            for key, value in fan.items():
                print(f"  {key:24} {value:10.1f}")
            print(f"move -> last browser's event: p50 {fan['last_p50_ms']:.1f} ms, p99 {fan['last_p99_ms']:.1f} ms "
                  f"over {fan['moves']:.0f} moves, {fan['spectators']:.0f} SSE spectators; server CPU "
                  f"{fan['server_cpu_us_per_event']:.0f} us per event delivered")
            print(f"  load average now         {os.getloadavg()[0]:10.2f}")
        finally:
            redis.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spectators", type=int, default=1000, help="SSE streams of the race")
    parser.add_argument("--moves", type=int, default=40, help="moves timed (at most 64: each draws a card)")
    parser.add_argument("--gap", type=float, default=0.25, help="seconds between those moves")
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, args.spectators * 2 + 256)), hard))
    from server.main import loop_factory

    with asyncio.Runner(loop_factory=loop_factory()) as runner:
        runner.run(main_async(args))


if __name__ == "__main__":
    main()
