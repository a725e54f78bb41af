"""``make demo-event``: a private server, 24 bots in a 2-round duplicate event in heats of 8.

Starts ``thieves-server`` (embedded Redis in a temporary folder, an organiser token of its own),
registers 24 accounts, creates the event on two deals of the public checked pool (so that the bots,
which recognise such a deal by its face-up cards, can follow its winning line: client_cli/line_bot.py),
enters them, starts it, plays each round with bots of different pace and care (some slip and take a
move back, some give up halfway), and prints the final standings, one ranked line per entrant.

    python scripts/demo_event.py [--bots 24] [--heat 8] [--rounds 2] [--speed 1.0] [--port N]

The bots play fast (a few hundredths of a second a move: a round takes seconds); ``--speed 0.05``
slows them to about a person's pace (a second or so a move).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
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

import msgspec  # noqa: E402

from client_cli.line_bot import BotError, Skill, play_heat  # noqa: E402
from server.ops.embedded import free_port  # noqa: E402
from shared import protocol as p  # noqa: E402
from shared.pool import load_pool  # noqa: E402

VARIANT = "forty-thieves"
MIN_PACE = 0.02
"""Seconds between a bot's moves at the fastest (the pace at --speed 1 already): the server refuses more than 60
frames a second from a connection (``--rate``), so at --speed 5 some bots were cut off with ``rate_limited``."""


def http(base: str, method: str, path: str, body: Any = None, token: str | None = None) -> Any:
    req = urllib.request.Request(base + path, method=method, data=json.dumps(body).encode() if body is not None else None,
                                 headers={"content-type": "application/json",
                                          **({"authorization": f"Bearer {token}"} if token else {})})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        raise SystemExit(f"demo-event: {method} {path}: {exc.code} {exc.read().decode()}") from None


async def ahttp(base: str, method: str, path: str, body: Any = None, token: str | None = None) -> Any:
    return await asyncio.to_thread(http, base, method, path, body, token)


async def wait_for(what: str, check: Any, timeout: float) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = await check()
        if found:
            return found
        await asyncio.sleep(0.2)
    raise SystemExit(f"demo-event: timed out waiting for {what}")


async def run(args: argparse.Namespace) -> None:
    rng = random.Random(args.seed)
    port = args.port or free_port()
    base, ws_url = f"http://127.0.0.1:{port}", f"ws://127.0.0.1:{port}/ws"
    organiser = secrets.token_urlsafe(16)
    data = tempfile.mkdtemp(prefix="thieves-demo-event-")
    server = subprocess.Popen(
        [sys.executable, "-m", "server.main", "--port", str(port), "--data-dir", data, f"--organiser-token={organiser}",
         "--countdown", "2", "--register-burst", "0", "--checked-pool-size", "0", "--log-level", "warning"],
        cwd=ROOT, stdout=open(os.path.join(data, "server.log"), "wb"), stderr=subprocess.STDOUT)
    try:
        async def healthy() -> bool:
            try:
                return bool(await ahttp(base, "GET", "/health"))
            except (OSError, SystemExit):
                return False
        await wait_for("the server to start", healthy, 60)
        names = [f"bot{i:02d}" for i in range(1, args.bots + 1)]
        keys = {n: (await ahttp(base, "POST", "/players", {"name": n}))["key"] for n in names}
        deals = load_pool(VARIANT).deals[:args.rounds]
        event = await ahttp(base, "POST", "/events", {
            "name": "Demo Cup", "rounds": args.rounds, "heat_size": args.heat, "deals": deals, "join_seconds": 4,
            "break_seconds": 2, "time_limit": int(600 / args.speed)}, organiser)
        for n in names:
            await ahttp(base, "POST", f"/events/{event['id']}/entrants", token=keys[n])
        await ahttp(base, "POST", f"/events/{event['id']}/start", token=organiser)
        print(f"demo-event: {args.bots} bots in {event['name']!r} ({args.rounds} rounds, heats of {args.heat}) at {base}; "
              f"watch it at {base}/event/{event['id']}", flush=True)
        skills = {n: Skill(pace=max(MIN_PACE, rng.uniform(0.02, 0.08) / args.speed),
                           slips=rng.choice([0.0, 0.02, 0.05, 0.1]))
                  for n in names}
        for number in range(1, args.rounds + 1):
            async def drawn() -> Any:
                info = msgspec.convert(await ahttp(base, "GET", f"/events/{event['id']}"), p.EventInfo)
                return next((r for r in info.schedule if r.round == number), None)
            rnd = await wait_for(f"round {number}", drawn, 120)
            print(f"round {number}: {len(rnd.heats)} heats drawn, playing...", flush=True)
            try:
                await asyncio.gather(*(play_heat(ws_url, h.code, keys[a], skills[a], rng.choice([1.0, 1.0, 1.0, 0.5, 0.8]),
                                           random.Random(rng.random())) for h in rnd.heats for a in h.entrants))
            except BotError as exc:
                raise SystemExit(f"demo-event: a bot could not play: {exc}") from None

            async def scored() -> bool:
                info = msgspec.convert(await ahttp(base, "GET", f"/events/{event['id']}"), p.EventInfo)
                return info.round == number and info.round_state == "done"
            await wait_for(f"round {number} to be scored", scored, 600)
            print(f"round {number}: scored", flush=True)
        standings = msgspec.convert(await ahttp(base, "GET", f"/events/{event['id']}/standings"), p.EventStandings)
        print(f"\nfinal standings of {event['name']!r}")
        print(f"{'rank':>4}  {'name':<8} {'matchpoints':>11} {'cards':>5} {'time':>7}   rounds")
        for line in standings.lines:
            rounds = "  ".join(f"r{r.round}:{r.status}/{r.home}" for r in line.rounds)
            print(f"{line.rank:>4}  {line.name:<8} {line.matchpoints:>11g} {line.home:>5} {line.time_ms / 1000:>6.1f}s   {rounds}")
    finally:
        server.terminate()
        try:
            server.wait(15)
        except subprocess.TimeoutExpired:
            server.kill()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bots", type=int, default=24)
    parser.add_argument("--heat", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--speed", type=float, default=1.0,
                        help="play faster (2: twice as fast; 0.05: about a person's pace, a second or so a move)")
    parser.add_argument("--port", type=int, default=0, help="the server's port (default: a free one, printed)")
    parser.add_argument("--seed", type=int, default=None)
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
