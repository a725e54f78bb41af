"""Seek load: many players asking for "a race now" on one server process (docs/protocol.md "Seeks").

Starts a Redis and one ``thieves-server`` on it, registers ``--seekers`` accounts with ratings drawn
around 1000 (written straight into their account hashes, as rated races would have left them), then
has them arrive at random over ``--seconds``: each opens a WebSocket, sends ``seek`` (two players, one
pool), waits for ``matched``, joins its race with the token and says ready (so nobody is a no-show),
and leaves once the race has started. It prints, as JSON:

- time from ``seek`` sent to ``matched`` read, p50 / p90 / p99 / max: for every seeker, and for those
  that arrived while a compatible partner (within the base gap) was already waiting;
- the rating-gap distribution of the races formed (each race's spread), and how far each spread was
  below the allowed gap of its longest waiter;
- the server's CPU: the process's whole CPU over the run per race formed (everything a seek costs:
  its socket, the waves, the race's creation and seating, the joins), and the CPU of the pairing waves
  alone (``thieves_seek_wave_cpu_seconds_total``) per race.

``--seconds 60 --seekers 2000`` is the issue's run; ``tests/test_bench_seek_load.py`` runs a few seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import redis.asyncio as aioredis  # noqa: E402
import websockets  # noqa: E402
from procfs import cpu_seconds  # noqa: E402
from race_load import server_command, start_child, stop_child  # noqa: E402

from server.ops.embedded import EmbeddedRedis, free_port  # noqa: E402
from shared import protocol as p  # noqa: E402
from shared import seeks as rule  # noqa: E402


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def summary(values: list[float]) -> dict[str, float]:
    return {"n": len(values), "p50": round(pct(values, 0.5), 3), "p90": round(pct(values, 0.9), 3),
            "p99": round(pct(values, 0.99), 3), "max": round(max(values), 3) if values else float("nan")}


def metric_text(base: str) -> str:
    with urllib.request.urlopen(base + "/metrics", timeout=10) as resp:
        return resp.read().decode()


def sample(text: str, name: str) -> float:
    found = re.search(rf"^{re.escape(name)} (\S+)$", text, re.M)
    return float(found.group(1)) if found else 0.0


def register_all(base: str, names: list[str]) -> list[str]:
    keys = []
    for name in names:
        req = urllib.request.Request(base + "/players", data=json.dumps({"name": name}).encode(), method="POST",
                                     headers={"content-type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as resp:
            keys.append(json.loads(resp.read())["key"])
    return keys


async def set_ratings(redis_url: str, ratings: dict[str, int], variant: str) -> None:
    """Shown rating r with sigma 2: mu = (r - 1000) / 40 + 6 (server/accounts/ratings.py's scale)."""
    r = aioredis.Redis.from_url(redis_url)
    async with r.pipeline(transaction=False) as pipe:
        for account, rating in ratings.items():
            pipe.hset(f"account:{{{account}}}", mapping={f"v:{variant}:mu": repr((rating - 1000) / 40 + 6.0),
                                                         f"v:{variant}:sigma": "2.0", f"v:{variant}:rated": 5})
        await pipe.execute()
    await r.aclose()


class Run:
    def __init__(self) -> None:
        self.waiting: dict[str, int] = {}
        """seeker -> rating, while its seek waits (as the clients know it)."""
        self.latency: list[float] = []
        self.latency_partnered: list[float] = []
        self.races: dict[str, p.Matched] = {}
        self.failures: list[str] = []


async def seeker(ws_url: str, key: str, name: str, rating: int, delay: float, run: Run, time_limit: int) -> None:
    await asyncio.sleep(delay)
    try:
        async with websockets.connect(ws_url, compression=None, max_size=2**20) as ws:
            partnered = any(abs(r - rating) <= rule.GAP_BASE for r in run.waiting.values())
            run.waiting[name] = rating
            sent = time.perf_counter()
            await ws.send(p.encode(p.Seek(key=key, time_limit=time_limit)))
            while True:
                msg = p.decode_server(await asyncio.wait_for(ws.recv(), 120))
                if isinstance(msg, p.Matched):
                    break
                if isinstance(msg, p.Error):
                    raise RuntimeError(f"{msg.code}: {msg.message}")
            took = time.perf_counter() - sent
            run.waiting.pop(name, None)
            run.latency.append(took)
            if partnered:
                run.latency_partnered.append(took)
            run.races[msg.race + f"/{msg.seat}"] = msg
            async with websockets.connect(ws_url, compression=None, max_size=2**20) as player:
                await player.send(p.encode(p.Hello(protocol=1, race=msg.race, token=msg.token)))
                await player.send(p.encode(p.Ready()))
                while not isinstance(p.decode_server(await asyncio.wait_for(player.recv(), 60)), p.Countdown):
                    pass
    except Exception as exc:  # counted and shown, the run goes on
        run.waiting.pop(name, None)
        run.failures.append(f"{name}: {type(exc).__name__}: {exc}")


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    rng = random.Random(args.seed)
    data = Path(tempfile.mkdtemp(prefix="seek-load-"))
    redis_server = EmbeddedRedis(data, port=free_port(), appendonly=False)
    redis_server.start()
    proc = None
    try:
        command = server_command(10_000.0, redis_url=redis_server.url) + [
            "--seek-wave", str(args.wave), "--seek-join", "20", "--seek-deals", args.deals,
            "--register-burst", "0", "--hint-workers", "0"]
        proc, base = start_child(command, marker="event=listening")
        ws_url = "ws" + base[len("http"):] + "/ws"
        names = [f"s{i:05d}" for i in range(args.seekers)]
        keys = await asyncio.to_thread(register_all, base, names)
        ratings = {n: max(400, int(rng.gauss(1000, args.spread))) for n in names}
        await set_ratings(redis_server.url, ratings, "forty-thieves")
        run = Run()
        delays = sorted(rng.uniform(0, args.seconds) for _ in names)
        before_text, cpu0, t0 = metric_text(base), cpu_seconds(proc.pid), time.perf_counter()
        await asyncio.gather(*(seeker(ws_url, k, n, ratings[n], d, run, args.time_limit)
                               for k, n, d in zip(keys, names, delays)))
        cpu1, t1, after_text = cpu_seconds(proc.pid), time.perf_counter(), metric_text(base)
    finally:
        stop_child(proc)
        redis_server.stop()
    formed = sample(after_text, 'thieves_seeks_total{what="races"}') - sample(before_text,
                                                                              'thieves_seeks_total{what="races"}')
    wave_cpu = (sample(after_text, "thieves_seek_wave_cpu_seconds_total")
                - sample(before_text, "thieves_seek_wave_cpu_seconds_total"))
    by_race: dict[str, p.Matched] = {m.race: m for m in run.races.values()}
    spreads = [max(m.ratings) - min(m.ratings) for m in by_race.values()]
    slack = [m.gap - (max(m.ratings) - min(m.ratings)) for m in by_race.values()]
    buckets: dict[str, int] = {}
    for s in spreads:
        label = f"{(s // 25) * 25}-{(s // 25) * 25 + 24}"
        buckets[label] = buckets.get(label, 0) + 1
    return {
        "seekers": args.seekers, "seconds": args.seconds, "wave_s": args.wave, "deals": args.deals,
        "placed": len(run.latency), "failures": len(run.failures), "failure_examples": run.failures[:3],
        "races": int(formed),
        "seek_to_race_s": summary(run.latency),
        "seek_to_race_s_partner_waiting": summary(run.latency_partnered),
        "rating_gap": {**summary([float(s) for s in spreads]), "mean": round(statistics.fmean(spreads), 1)
                       if spreads else None, "histogram": dict(sorted(buckets.items(), key=lambda kv: int(kv[0].split("-")[0]))),
                       "min_slack_to_bound": min(slack) if slack else None},
        "server_cpu_s": round(cpu1 - cpu0, 3), "wall_s": round(t1 - t0, 1),
        "server_cpu_ms_per_race": round(1000 * (cpu1 - cpu0) / formed, 3) if formed else None,
        "wave_cpu_ms_per_race": round(1000 * wave_cpu / formed, 3) if formed else None,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seekers", type=int, default=2000)
    parser.add_argument("--seconds", type=float, default=60.0, help="arrivals spread over this long")
    parser.add_argument("--wave", type=float, default=0.5, help="--seek-wave of the server")
    parser.add_argument("--deals", default="random", choices=("pool", "random"),
                        help="--seek-deals (the bench keeps no checked pool: pool would find it empty)")
    parser.add_argument("--spread", type=float, default=150.0, help="standard deviation of the ratings")
    parser.add_argument("--time-limit", type=int, default=60)
    parser.add_argument("--seed", type=int, default=24)
    args = parser.parse_args(argv)
    print(json.dumps(asyncio.run(main_async(args)), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
