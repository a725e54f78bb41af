"""Benchmark of a big duplicate round: 500 entrants in heats of 8 on one server process (or more).

Starts its own redis-server (or, with ``--cluster``, a local three-master Redis Cluster: see
tests/cluster_util.py) and ``--servers`` ``thieves-server`` processes (an organiser token of their own;
the bots take them in turn, the spectator watches through the first),
registers the entrants, creates a one-round duplicate event on a deal of the public checked pool
(the bots recognise it and follow its winning line at a human pace: client_cli/line_bot.py; some
give up part way), enters them all, starts it, and plays the round while spectators (``--watchers``, one by default) follow the
event's stream (``GET /events/{id}/stream``). Prints:

- validated moves a second over the round (the server's own ``thieves_moves_accepted_total``);
- how long a move waited for its answer, as the bots saw it (sent to ack read: p50, p99; the bots' own
  loop delays on a loaded machine included): what the group commit's linger costs a player;
- standings-frame latency: from the acknowledgement of a move that brought an entrant's cards home
  to a new count, to the first stream frame whose live line shows that count (p50, p99, max);
- Redis memory per entrant (``used_memory`` after the round, less before the accounts, over the
  entrants; summed over the masters of a cluster), and the servers' CPU (utime + stime, all server
  processes together) per move and per 1,000 racers (cores a thousand racers moving at this pace keep
  busy: the CPU over the round's time, over the thousands of entrants), and the CPU per move over the
  middle half of the round (sampled once a second: after the joins).

The bots join over ``--join-spread`` seconds (entrants do not all press enter in the same millisecond;
five hundred hellos at once ran a loaded machine's Redis pool dry).

    python bench/event_round.py                      # 500 entrants, heats of 8
    python bench/event_round.py --entrants 100 --pace 0.3
    python bench/event_round.py --entrants 5000 --servers 2 --cluster --pace 1   # issue 25's scale round
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import random
import re
import secrets
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import msgspec  # noqa: E402
import websockets  # noqa: E402
import redis  # noqa: E402

from client_cli.line_bot import BotError, Skill, play_heat  # noqa: E402
from procfs import cpu_seconds  # noqa: E402
from tests.cluster_util import LocalCluster  # noqa: E402
from server.ops.embedded import EmbeddedRedis, free_port  # noqa: E402
from shared import protocol as p  # noqa: E402
from shared.pool import load_pool  # noqa: E402

VARIANT = "forty-thieves"
JOIN_ATTEMPTS = 5
"""Times a bot tries its hello when the server answers ``unavailable`` (its pool of Redis connections
ran dry under a crowd of hellos): as a person would, after a second or two."""


def http(base: str, method: str, path: str, body: Any = None, token: str | None = None) -> Any:
    req = urllib.request.Request(base + path, method=method, data=json.dumps(body).encode() if body is not None else None,
                                 headers={"content-type": "application/json",
                                          **({"authorization": f"Bearer {token}"} if token else {})})
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        raise SystemExit(f"{method} {path}: {exc.code} {exc.read().decode(errors='replace')}") from None


COUNTED = {"moves": r"thieves_moves_accepted_total", "acks": r'thieves_frames_sent_total\{type="ack"\}',
           "progress": r'thieves_frames_sent_total\{type="progress"\}',
           "batches": r'thieves_redis_seconds_count\{op="moves"\}'}
"""What the servers' /metrics count that the figures divide by the moves: the frames sent and the moves'
round trips to Redis (a batch each)."""


def counters(bases: list[str]) -> dict[str, float]:
    """The servers' :data:`COUNTED` figures, summed."""
    total = dict.fromkeys(COUNTED, 0.0)
    for base in bases:
        with urllib.request.urlopen(base + "/metrics", timeout=10) as resp:
            text = resp.read().decode()
        for name, pattern in COUNTED.items():
            match = re.search(rf"^{pattern} (\S+)$", text, re.M)
            total[name] += float(match.group(1)) if match else 0.0
    return total


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


async def follow(base: str, event: str, seen: dict[tuple[str, int], float], done: asyncio.Event) -> None:
    """The spectator: every live line's (account, cards home) with when it first showed."""
    import httpx

    async with httpx.AsyncClient(timeout=None) as client:
        async with client.stream("GET", f"{base}/events/{event}/stream") as answer:
            name = None
            async for line in answer.aiter_lines():
                if line.startswith("event:"):
                    name = line[6:].strip()
                elif line.startswith("data:") and name == "event":
                    now = time.monotonic()
                    frame = msgspec.json.decode(line[5:].strip(), type=p.EventLive)
                    for live in frame.live:
                        seen.setdefault((live.account, live.home), now)
                    if frame.event.status == "finished":
                        done.set()
                        return
    if seen:  # the measuring spectator (the crowd's watchers keep nothing)
        print("the measuring spectator's stream ended before the event did: the server cut it loose as a slow "
              "reader (this process, driving the bots and the other watchers, read too slowly)", flush=True)


def follow_apart(base: str, event: str, out: str) -> None:
    """The measuring spectator in a process of its own, writing what it saw to ``out`` (JSON) once the
    event is over. Why apart: in this process it read its frames on the loop of the thousand bots, whose
    lag was much of the latency's tail (1,000 entrants, a core kept busy: p99 323 to 491 ms read here,
    227 and 264 ms read apart; the server sends a frame at most every 0.2 s). Its clock,
    ``time.monotonic``, is the bots' (one machine)."""
    seen: dict[tuple[str, int], float] = {}
    over = asyncio.Event()
    asyncio.run(follow(base, event, seen, over))
    Path(out).write_text(json.dumps([[account, home, at] for (account, home), at in seen.items()]))
    sys.exit(0 if over.is_set() else 3)  # 3: the stream ended before the event did


def used_memory(clients: list[redis.Redis]) -> int:
    """Bytes Redis holds, over every master."""
    return sum(int(c.info("memory")["used_memory"]) for c in clients)


async def run(args: argparse.Namespace) -> None:
    rng = random.Random(args.seed)
    cluster = store = None
    if args.cluster:
        cluster = LocalCluster(base_dir=tempfile.mkdtemp(prefix="thieves-bench-cluster-")).start()
        url = cluster.url
        masters = [redis.Redis.from_url(u) for u in cluster.urls]
    else:
        store = EmbeddedRedis(tempfile.mkdtemp(prefix="thieves-bench-redis-"), port=free_port(),
                              appendonly=False).start()
        url = store.url
        masters = [redis.Redis.from_url(url)]
    organiser = secrets.token_urlsafe(16)
    log = open(tempfile.mktemp(prefix="thieves-bench-event-", suffix=".log"), "wb")
    ports = [free_port() for _ in range(args.servers)]
    bases = [f"http://127.0.0.1:{port}" for port in ports]
    ws_urls = [f"ws://127.0.0.1:{port}/ws" for port in ports]
    base = bases[0]
    profile = ["-m", "cProfile", "-o", args.profile] if args.profile else []
    servers = [subprocess.Popen(
        [sys.executable, *(profile if i == 0 else []), "-m", "server.main", "--port", str(port), "--redis-url", url, f"--organiser-token={organiser}",
         "--countdown", "2", "--register-burst", "0", "--checked-pool-size", "0", "--log-level", "warning",
         "--rate", "1000", "--burst", "1000", "--connections-per-address", "0",
         *(["--redis-cluster", "yes"] if args.cluster else [])], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
        for i, port in enumerate(ports)]
    try:
        deadline = time.monotonic() + 60
        for b in bases:
            while True:
                try:
                    http(b, "GET", "/health")
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise SystemExit(f"the server did not start (log: {log.name})")
                    await asyncio.sleep(0.1)
        memory_before = used_memory(masters)
        names = [f"e{i:04d}" for i in range(args.entrants)]
        print(f"registering {len(names)} accounts...", flush=True)
        keys = dict(zip(names, await asyncio.gather(*(asyncio.to_thread(register, bases[i % len(bases)], n)
                                                      for i, n in enumerate(names)))))
        deal = load_pool(VARIANT).deals[0]
        event = http(base, "POST", "/events", {"name": "Bench", "rounds": 1, "heat_size": args.heat, "deals": [deal],
                                               "join_seconds": args.join_seconds, "time_limit": args.time_limit},
                     organiser)
        await asyncio.gather(*(asyncio.to_thread(http, bases[i % len(bases)], "POST", f"/events/{event['id']}/entrants",
                                                 None, keys[n]) for i, n in enumerate(names)))
        seen_file = Path(tempfile.mkdtemp(prefix="thieves-bench-seen-")) / "seen.json"
        spectator = multiprocessing.get_context("spawn").Process(
            target=follow_apart, args=(base, event["id"], str(seen_file)), daemon=True)
        spectator.start()
        crowd = [asyncio.create_task(follow(bases[i % len(bases)], event["id"], {}, asyncio.Event()))
                 for i in range(args.watchers - 1)]
        http(base, "POST", f"/events/{event['id']}/start", {}, organiser)
        while True:
            info = msgspec.convert(http(base, "GET", f"/events/{event['id']}"), p.EventInfo)
            if info.schedule:
                break
            await asyncio.sleep(0.2)
        heats = info.schedule[0].heats
        print(f"round drawn: {len(heats)} heats; {len(names)} bots joining and playing...", flush=True)
        acks: dict[str, list[tuple[int, float]]] = {n: [] for n in names}

        def on_ack_of(account: str) -> Any:
            def on_ack(ack: p.Ack) -> None:
                acks[account].append((ack_home(ack), time.monotonic()))
            return on_ack

        answered: list[float] = []
        """Seconds from each move's sending to its answer, as the bots saw them."""
        retries, dropped = [0], [0]

        async def bot(i: int, code: str, account: str) -> None:
            await asyncio.sleep(rng.random() * args.join_spread)
            for attempt in range(JOIN_ATTEMPTS):
                try:
                    await play_heat(ws_urls[i % len(ws_urls)], code, keys[account], Skill(pace=args.pace, slips=0.02),
                                    rng.choice([1.0, 0.3, 0.5, 0.8]), random.Random(rng.random()), on_ack_of(account),
                                    answered.append)
                    return
                except BotError as exc:
                    if "race_over" in str(exc):  # the time limit ended the heat before the line: a slow racer
                        return
                    if "refused: unavailable" in str(exc):  # a move the server could not store: this bot stops
                        dropped[0] += 1
                        return
                    if not str(exc).startswith("unavailable") or attempt == JOIN_ATTEMPTS - 1 or acks[account]:
                        raise
                    retries[0] += 1
                    await asyncio.sleep(1.0 + rng.random())  # the server said: try again shortly
                except (OSError, websockets.ConnectionClosed):  # the connection dropped (a keepalive ping
                    dropped[0] += 1                             # unanswered on an overloaded machine): it stops
                    return

        def cpu_now() -> float:
            return sum(cpu_seconds(server.pid) for server in servers)

        counted0, cpu0, t0 = counters(bases), cpu_now(), time.monotonic()
        load0 = os.getloadavg()[0]
        samples: list[tuple[float, float, float]] = []
        """(time, the servers' CPU, moves validated) once a second: the middle of the round, apart."""

        async def sample() -> None:
            while True:
                counted_now = await asyncio.to_thread(counters, bases)
                samples.append((time.monotonic(), cpu_now(), counted_now["moves"]))
                await asyncio.sleep(1.0)

        sampler = asyncio.ensure_future(sample())
        await asyncio.gather(*(bot(i, h.code, a) for i, (h, a) in enumerate((h, a) for h in heats for a in h.entrants)))
        sampler.cancel()
        elapsed = time.monotonic() - t0
        counted = {name: value - counted0[name] for name, value in counters(bases).items()}
        moves, cpu = counted["moves"], cpu_now() - cpu0
        await asyncio.to_thread(spectator.join, args.time_limit + 60)
        if spectator.exitcode == 0:
            ended = "the event finished"
        else:  # still print what the round measured
            ended = f"the event did NOT finish within {args.time_limit + 60} s of the round's end (see {log.name})"
            spectator.terminate()
        seen = ({(account, home): at for account, home, at in json.loads(seen_file.read_text())}
                if seen_file.exists() else {})
        for watcher in crowd:
            watcher.cancel()
        latencies = []
        for account, steps in acks.items():
            previous = None
            for home, at in steps:
                if home != previous and (account, home) in seen and seen[(account, home)] >= at:
                    latencies.append((seen[(account, home)] - at) * 1000)
                previous = home
        memory = used_memory(masters) - memory_before
        print(f"\nentrants {len(names)}, heats {len(heats)} of at most {args.heat}, pace {args.pace} s a move; "
              f"{args.servers} server process(es) on {'a Redis Cluster' if args.cluster else 'one Redis'}; "
              f"{args.watchers} watcher(s) of the event's stream; "
              f"load average {load0:.2f} -> {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
        print(f"moves validated: {moves:.0f} in {elapsed:.1f} s = {moves / elapsed:.0f} moves/s "
              f"({moves / elapsed / len(names):.2f} a racer a second); "
              f"server CPU {cpu / max(1.0, moves) * 1e6:.0f} us a move, {cpu / elapsed:.2f} cores in all = "
              f"{cpu / elapsed / (len(names) / 1000):.3f} of a core per 1,000 racers"
              + (f"; {retries[0]} hellos answered unavailable and tried again" if retries[0] else "")
              + (f"; {dropped[0]} bots stopped (a move answered unavailable, or the connection dropped)"
                 if dropped[0] else ""))
        middle = [x for x in samples if t0 + elapsed / 4 <= x[0] <= t0 + elapsed * 3 / 4]
        if len(middle) >= 2 and middle[-1][2] > middle[0][2]:
            (ta, cpua, movesa), (tb, cpub, movesb) = middle[0], middle[-1]
            per_move = (cpub - cpua) / (movesb - movesa)
            print(f"the middle half of the round ({ta - t0:.0f}-{tb - t0:.0f} s, after the joins): "
                  f"{(movesb - movesa) / (tb - ta):.0f} moves/s, server CPU {per_move * 1e6:.0f} us a move = "
                  f"{per_move * 1000:.3f} of a core per 1,000 racers moving once a second")
        print(f"per move: {counted['acks'] / max(1.0, moves):.2f} acks and {counted['progress'] / max(1.0, moves):.2f} "
              f"progress frames sent, {counted['batches'] / max(1.0, moves):.2f} round trips to Redis for moves")
        waits = [seconds * 1000 for seconds in answered]
        print(f"move answered (a bot's move sent -> its ack read, the bots' own delays included): "
              f"p50 {percentile(waits, 0.5):.1f} ms, p99 {percentile(waits, 0.99):.1f} ms")
        print(f"standings-frame latency (move acknowledged -> stream frame showing its cards home): "
              f"n={len(latencies)} p50 {percentile(latencies, 0.5):.0f} ms, p99 {percentile(latencies, 0.99):.0f} ms, "
              f"max {max(latencies, default=float('nan')):.0f} ms")
        print(ended)
        print(f"Redis memory: {memory / 1024:.0f} KiB for the event and its races = {memory / len(names) / 1024:.1f} KiB "
              "an entrant (accounts, entries, heats, every move)")
    finally:
        for server in servers:
            server.terminate()
        for server in servers:
            try:
                server.wait(15)
            except subprocess.TimeoutExpired:
                server.kill()
        if store is not None:
            store.stop()
        if cluster is not None:
            cluster.stop()


def register(base: str, name: str) -> str:
    return str(http(base, "POST", "/players", {"name": name})["key"])


def ack_home(ack: p.Ack) -> int:
    """Cards home on an acknowledged board: the foundations' tops (rank of each top card)."""
    return sum(_rank(card) for card in ack.view.foundations if card)


def _rank(card: str) -> int:
    return "A23456789TJQK".index(card[0]) + 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entrants", type=int, default=500)
    parser.add_argument("--heat", type=int, default=8)
    parser.add_argument("--pace", type=float, default=0.5, help="seconds a bot thinks per move, on average")
    parser.add_argument("--time-limit", type=int, default=180)
    parser.add_argument("--join-seconds", type=int, default=20, help="time the bots have to join their heats")
    parser.add_argument("--join-spread", type=float, default=5.0, help="seconds over which the bots join")
    parser.add_argument("--servers", type=int, default=1, help="server processes (the bots take them in turn)")
    parser.add_argument("--cluster", action="store_true", help="a local Redis Cluster instead of one redis-server")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--watchers", type=int, default=1, help="spectators following the event's stream (the "
                        "first measures the standings-frame latency; they take the servers in turn)")
    parser.add_argument("--profile", metavar="FILE", help="run the first server under cProfile and write its "
                        "statistics to FILE when it stops (its CPU figures then include the profiler's cost)")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
