"""Idle seeks: what lone seeks nobody can pair cost a server process (docs/protocol.md "Seeks").

Starts a Redis and one ``thieves-server`` on it, opens ``--seeks`` WebSockets from this one address
(its caps lifted), each seeking alone in a pool of its own (two players, time limits 30, 31, ... s), so
no race can ever form, lets them settle, then measures for ``--seconds``. It prints, as JSON, the CPU
of the server process, of its Redis, and of the server's pairing waves
(``thieves_seek_wave_cpu_seconds_total``), each as a share of one core. A seek is polled by its process
and each pool looked at every wave for as long as it waits: this is that cost (issue 35 measured 28% of
a core for 60 such seeks before the waves skipped pools that cannot form a race and a poll read every
pool in one round trip).

``tests/test_bench_seek_idle.py`` runs it for a few seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import websockets  # noqa: E402
from procfs import cpu_seconds  # noqa: E402
from race_load import server_command, start_child, stop_child  # noqa: E402
from seek_load import metric_text, sample  # noqa: E402

from server.ops.embedded import EmbeddedRedis, free_port  # noqa: E402
from shared import protocol as p  # noqa: E402

WAVE_CPU = "thieves_seek_wave_cpu_seconds_total"


async def hold(ws: websockets.ClientConnection) -> None:
    """Read the seek's ``seeking`` updates until the connection closes."""
    try:
        async for _ in ws:
            pass
    except websockets.ConnectionClosed:
        pass


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    data = Path(tempfile.mkdtemp(prefix="seek-idle-"))
    redis_server = EmbeddedRedis(data, port=free_port(), appendonly=False)
    redis_server.start()
    proc = None
    sockets: list[websockets.ClientConnection] = []
    try:
        command = server_command(10_000.0, redis_url=redis_server.url) + [
            "--seek-wave", str(args.wave), "--seek-pools-per-address", "0", "--connections-per-address", "0",
            "--hint-workers", "0"]
        proc, base = start_child(command, marker="event=listening")
        ws_url = "ws" + base[len("http"):] + "/ws"
        for i in range(args.seeks):
            ws = await websockets.connect(ws_url)
            await ws.send(p.encode(p.Seek(name=f"s{i:04d}", time_limit=30 + i)))
            msg = p.decode_server(await asyncio.wait_for(ws.recv(), 30))
            if not isinstance(msg, p.Seeking):
                raise RuntimeError(f"seek {i} refused: {msg}")
            sockets.append(ws)
        readers = [asyncio.create_task(hold(ws)) for ws in sockets]
        await asyncio.sleep(args.settle)  # the seeks' first updates and waves out of the way
        assert redis_server.process is not None
        before = metric_text(base)
        cpu0, redis0, t0 = cpu_seconds(proc.pid), cpu_seconds(redis_server.process.pid), time.perf_counter()
        await asyncio.sleep(args.seconds)
        cpu1, redis1, t1 = cpu_seconds(proc.pid), cpu_seconds(redis_server.process.pid), time.perf_counter()
        after = metric_text(base)
        for ws in sockets:
            await ws.close()
        await asyncio.gather(*readers)
    finally:
        stop_child(proc)
        redis_server.stop()
    wall = t1 - t0
    return {
        "seeks": args.seeks, "pools": args.seeks, "seconds": round(wall, 1), "wave_s": args.wave,
        "server_core": round((cpu1 - cpu0) / wall, 4),
        "redis_core": round((redis1 - redis0) / wall, 4),
        "wave_core": round((sample(after, WAVE_CPU) - sample(before, WAVE_CPU)) / wall, 4),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeks", type=int, default=60, help="lone seeks, each in a pool of its own")
    parser.add_argument("--seconds", type=float, default=10.0, help="how long to measure")
    parser.add_argument("--settle", type=float, default=2.0, help="seconds waited before measuring")
    parser.add_argument("--wave", type=float, default=0.5, help="--seek-wave of the server")
    args = parser.parse_args(argv)
    print(json.dumps(asyncio.run(main_async(args)), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
