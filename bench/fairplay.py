"""Benchmark of the fair-play flags (docs/events.md, "Fair play"): who is flagged, and what it costs.

Starts its own redis-server and a ``thieves-server`` (an organiser token of its own, behind a trusted
proxy so that each account registers from an address the bench names), and for each of ``--deals``
secret deals (random deals the solver wins: what an event's pool deal is) runs a one-round duplicate event
whose entrants, all in one heat, are:

- honest bots of several strengths, which see only their own view: ``greedy`` (the solver's move
  ordering, never back to a seen position: ``thieves bot``), ``wander`` (the same, passing over the best
  move now and then), ``sampler`` (scores the candidate moves with the solver over sampled orders of the
  unseen cards and takes the best: a strong honest player);
- a ``scout``, which draws the whole stock at once and gives up;
- beneficiaries that know the order (from the scout), from one address with the scout: ``always`` plays
  the solver's line for the true order; ``few`` plays greedily and uses the order only at ``--uses``
  decisive moments (where the greedy move loses with the true order and another wins).

Every player but the scout paces its moves like a person (``--pace`` seconds a move, jittered). Honest
line-followers on public deals (the shipped pool's deals, whose lines anyone may read) play in events
of their own. Once the events are over it reads each event's flags (``GET /events/{id}/fairplay``) and
prints the share of each kind of entrant flagged, the flags' kinds, and the solver CPU per game analysed
(the server's own figure: the worker's CPU time), with the machine's load. Targets (issue 39): at least
90% of beneficiaries and every scout flagged, at most 2% of honest entrants.

    python bench/fairplay.py                   # 12 deals
    python bench/fairplay.py --deals 30 --pace 0.2
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
import websockets  # noqa: E402

from client_cli.commands.bot import GreedyPolicy  # noqa: E402
from server.ops.embedded import EmbeddedRedis, free_port  # noqa: E402
from shared import protocol as p  # noqa: E402
from shared.engine import Game  # noqa: E402
from shared.moves import Move  # noqa: E402
from shared.pool import load_pool  # noqa: E402
from shared.solver import Verdict, solve  # noqa: E402
from shared.solver.board import Board  # noqa: E402
from shared.variants import get_variant  # noqa: E402

VARIANT = "forty-thieves"
MOST_MOVES = 400
HONEST = ("greedy", "wander", "sampler")
CHEATS = ("always", "few")


# ------------------------------------------------------------------ the players' games (pure)
def _wins(game: Game, nodes: int) -> bool:
    return solve(game, time_limit=None, node_limit=nodes).verdict is Verdict.WON


def _unseen_at(game: Game, drawn: int, size: int) -> list[int]:
    return list(range(size - drawn)) if game.pass_number == 1 else []


def greedy(deal: int, wander: float, seed: int) -> list[str]:
    game, policy, moves = Game.new(get_variant(VARIANT), deal), GreedyPolicy(wander, random.Random(seed)), []
    while len(moves) < MOST_MOVES and not game.is_won():
        move = policy.choose(game.view())
        if move is None:
            break
        game.push(move)
        moves.append(move.text())
    return moves


def sampler(deal: int, seed: int, samples: int = 3, nodes: int = 3_000, width: int = 4) -> list[str]:
    """An honest strong player: each candidate scored over sampled orders of the cards it has not seen."""
    rng = random.Random(seed)
    game = Game.new(get_variant(VARIANT), deal)
    size, drawn, moves, seen = len(game.stock), 0, [], set()
    while len(moves) < MOST_MOVES and not game.is_won():
        seen.add(Board(game).key())
        fresh = []
        for m in Board(game).moves():
            g = game.copy(history=False)
            g.push(m)
            if m.text() == "S" or Board(g).key() not in seen:
                fresh.append(m)
            if len(fresh) == width:
                break
        if not fresh:
            break
        unseen_at = _unseen_at(game, drawn, size)
        cards = [game.stock[i] for i in unseen_at]
        scores = [0] * len(fresh)
        for _ in range(samples if len(fresh) > 1 else 0):
            rng.shuffle(cards)
            guess = game.copy(history=False)
            for place, card in zip(unseen_at, cards):
                guess.stock[place] = card
            for i, m in enumerate(fresh):
                g = guess.copy(history=False)
                g.push(m)
                scores[i] += _wins(g, nodes)
        best = max(range(len(fresh)), key=lambda i: (scores[i], -i))
        game.push(fresh[best])
        moves.append(fresh[best].text())
        drawn = max(drawn, size - len(game.stock))
    return moves


def always(deal: int) -> list[str]:
    """The solver's line for the true order: what a scout's draws let a beneficiary compute."""
    return solve(Game.new(get_variant(VARIANT), deal), time_limit=None, node_limit=300_000).move_texts()


def few(deal: int, uses: int, seed: int, nodes: int = 20_000) -> list[str]:
    """Greedy play that uses the true order at ``uses`` decisive moments only."""
    game, policy, moves = Game.new(get_variant(VARIANT), deal), GreedyPolicy(0.0, random.Random(seed)), []
    while len(moves) < MOST_MOVES and not game.is_won():
        move = policy.choose(game.view())
        if move is None:
            break
        if uses:
            after = game.copy(history=False)
            after.push(move)
            if not _wins(after, nodes):
                for other in game.legal_moves():
                    g = game.copy(history=False)
                    g.push(other)
                    if other != move and _wins(g, nodes):
                        move, uses = other, uses - 1
                        break
        game.push(move)
        moves.append(move.text())
    return moves


def won_by(deal: int, moves: list[str]) -> bool:
    game = Game.new(get_variant(VARIANT), deal)
    for text in moves:
        game.push_text(text)
    return game.is_won()


def scout(deal: int) -> list[str]:
    return ["S"] * len(Game.new(get_variant(VARIANT), deal).stock)


def line_follower(deal: int, rng: random.Random) -> list[str]:
    """An honest player following a public deal's published line, all of it or part (then it gives up)."""
    line = list(load_pool(VARIANT).lines[deal])
    return line if rng.random() < 0.5 else line[: rng.randrange(len(line) // 3, len(line))]


def secret_deals(count: int, rng: random.Random) -> list[int]:
    """Random deals the solver wins (an event's pool deals are such), none of the public pool."""
    public, out = load_pool(VARIANT).lines, []
    while len(out) < count:
        number = rng.randrange(10_000_000, 2**31)
        if number not in public and _wins(Game.new(get_variant(VARIANT), number), 50_000):
            out.append(number)
    return out


def plan(deal: int, seed: int, uses: int) -> dict[str, list[str]]:
    """Every entrant's game on ``deal``, by role."""
    return {"greedy": greedy(deal, 0.0, seed), "wander": greedy(deal, 0.2, seed), "sampler": sampler(deal, seed),
            "scout": scout(deal), "always": always(deal), "few": few(deal, uses, seed)}


def _plan(job: tuple[int, int, int]) -> dict[str, list[str]]:
    return plan(*job)


# ------------------------------------------------------------------ the server
def http(base: str, method: str, path: str, body: Any = None, token: str | None = None,
         place: str | None = None) -> Any:
    headers = {"content-type": "application/json"}
    if token:
        headers["authorization"] = f"Bearer {token}"
    if place:
        headers["x-forwarded-for"] = place
    req = urllib.request.Request(base + path, data=json.dumps(body).encode() if body is not None else None,
                                 method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return json.loads(resp.read())
    except urllib.error.HTTPError as err:
        raise SystemExit(f"{method} {path}: {err.code} {err.read().decode()}") from None


_PLACES: dict[str, int] = {}
"""Each event's number in the registration addresses: every honest entrant has its own address; an
event's scout and beneficiaries share one."""


async def play(ws_url: str, code: str, key: str, moves: list[str], won: bool, pace: float,
               rng: random.Random) -> None:
    """Join the heat, play ``moves`` at ``pace`` seconds a move (0: at once), give up unless won."""
    async with websockets.connect(ws_url, compression=None, max_queue=None) as ws:
        await ws.send(p.encode(p.Hello(protocol=p.PROTOCOL_VERSION, race=code, key=key)))
        while True:
            msg = p.decode_server(await ws.recv())
            if isinstance(msg, p.Countdown):
                await asyncio.sleep(max(0.0, (msg.starts_at - msg.server_time) / 1000) + 0.01)
                break
        for seq, text in enumerate(moves, 1):
            if pace:
                await asyncio.sleep(pace * rng.uniform(0.5, 1.5))
            await ws.send(p.encode(p.Move(seq=seq, move=text)))
            while True:
                msg = p.decode_server(await ws.recv())
                if isinstance(msg, p.Ack):
                    break
                if isinstance(msg, p.Reject):
                    raise RuntimeError(f"move {seq} {text} refused: {msg}")
        if not won:
            await ws.send(p.encode(p.GiveUp()))
        while not isinstance(p.decode_server(await ws.recv()), p.Finished):
            pass


async def event(base: str, ws_url: str, organiser: str, deal: int, games: dict[str, list[str]], tag: str,
                pace: float, rng: random.Random, pool: bool = False) -> tuple[str, dict[str, str]]:
    """One duplicate event of one round on ``deal``: its id once it is over, and its entrants' roles by name."""
    keys = {}
    for n, role in enumerate(games):
        shady = role in ("scout", *CHEATS)
        place = f"10.{n}.{_PLACES.setdefault(tag, len(_PLACES))}.1" if not shady else f"10.255.{_PLACES[tag]}.1"
        keys[role] = http(base, "POST", "/players", {"name": f"{tag}{role}"[:24]}, place=place)["key"]
    where = {"deal_source": "pool"} if pool else {"deals": [deal]}
    ev = http(base, "POST", "/events", {"name": f"Bench {tag}", "rounds": 1, "heat_size": 16, "join_seconds": 2,
                                         "time_limit": 1800, "break_seconds": 0, **where}, organiser)
    for key in keys.values():
        http(base, "POST", f"/events/{ev['id']}/entrants", None, key)
    http(base, "POST", f"/events/{ev['id']}/start", {}, organiser)
    while True:
        info = http(base, "GET", f"/events/{ev['id']}")
        if info["schedule"]:
            break
        await asyncio.sleep(0.2)
    code = info["schedule"][0]["heats"][0]["code"]
    await asyncio.gather(*(play(ws_url, code, keys[role], moves, won_by(deal, moves), 0.0 if role == "scout" else pace,
                                random.Random(rng.random())) for role, moves in games.items()))
    while http(base, "GET", f"/events/{ev['id']}")["status"] != "finished":
        await asyncio.sleep(0.5)
    return str(ev["id"]), {f"{tag}{role}": role for role in games}


async def push_checked(redis_url: str, deal: int, line: list[str]) -> None:
    """Put ``deal`` with its line in the server's private pool (where its filler would put it)."""
    from server.deals.checked import CheckedDeal
    from server.store import Store, redis_client

    redis = redis_client(redis_url)
    try:
        await Store(redis).checked_push(VARIANT, CheckedDeal(VARIANT, deal, tuple(line)).dumps(), 1000)
    finally:
        await redis.aclose()


async def wait_drawn(base: str, count: int) -> None:
    """Until ``count`` events have drawn their heat (each took its deal from the pool)."""
    while sum(1 for e in http(base, "GET", "/events")["events"] if e["schedule"]) < count:
        await asyncio.sleep(0.2)


async def flags_of(base: str, organiser: str, event_id: str) -> p.FairPlayReport:
    while True:
        report = msgspec.convert(http(base, "GET", f"/events/{event_id}/fairplay", token=organiser), p.FairPlayReport)
        if report.waiting == 0:
            return report
        await asyncio.sleep(1.0)


async def run(args: argparse.Namespace) -> None:
    rng = random.Random(args.seed)
    started = time.perf_counter()
    deals = secret_deals(args.deals, rng)
    print(f"{len(deals)} secret deals: {deals}", flush=True)
    games = [plan(d, args.seed + i, args.uses) for i, d in enumerate(deals)]
    public = list(load_pool(VARIANT).deals[: args.public])
    print(f"games planned in {time.perf_counter() - started:.0f} s; load {os.getloadavg()[0]:.1f}", flush=True)
    store = EmbeddedRedis(tempfile.mkdtemp(prefix="thieves-bench-redis-"), port=free_port(), appendonly=False).start()
    organiser = secrets.token_urlsafe(16)
    port = free_port()
    base, ws_url = f"http://127.0.0.1:{port}", f"ws://127.0.0.1:{port}/ws"
    log = open(tempfile.mktemp(prefix="thieves-bench-fairplay-", suffix=".log"), "wb")
    server = subprocess.Popen(
        [sys.executable, "-m", "server.main", "--port", str(port), "--redis-url", store.url,
         f"--organiser-token={organiser}", "--countdown", "1", "--register-burst", "0", "--checked-pool-size", "0",
         "--log-level", "warning", "--rate", "1000", "--burst", "1000", "--connections-per-address", "0",
         "--trusted-proxies", "127.0.0.1", "--fairplay-cpu", str(args.cpu),
         # The bench registers every account within seconds: only a shared address links accounts here
         # (the registered-together window's false links depend on a server's real registrations).
         "--fairplay-link-ms", "0"],
        cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                http(base, "GET", "/health")
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise SystemExit(f"the server did not start (log: {log.name})")
                await asyncio.sleep(0.1)
        played = time.perf_counter()
        # The secret deals are the server's checked deals, one event at a time takes the next: pushed in
        # order into the private pool with the solver's line (what the server's own filler stores).
        held = []
        for i, (d, g) in enumerate(zip(deals, games)):
            await push_checked(store.url, d, g["always"])
            held.append(event(base, ws_url, organiser, d, g, f"d{i}", args.pace, random.Random(rng.random()),
                              pool=True))
            held[-1] = asyncio.ensure_future(held[-1])
            await wait_drawn(base, i + 1)
        held = await asyncio.gather(*held,
            *(event(base, ws_url, organiser, d, {"follow1": line_follower(d, rng), "follow2": line_follower(d, rng)},
                    f"p{i}", args.pace, random.Random(rng.random())) for i, d in enumerate(public)))
        print(f"events played in {time.perf_counter() - played:.0f} s; load {os.getloadavg()[0]:.1f}", flush=True)
        analysed = time.perf_counter()
        reports = [(await flags_of(base, organiser, i), roles) for i, roles in held]
        print(f"flags read in {time.perf_counter() - analysed:.0f} s; load {os.getloadavg()[0]:.1f}", flush=True)
    finally:
        server.terminate()
        server.wait(10)
        store.stop()
    tally: dict[str, list[set[str]]] = {}
    for report, roles in reports:
        kinds: dict[str, set[str]] = {}
        for flag in report.flags:
            kinds.setdefault(flag.name, set()).add(flag.kind)
        for name, role in roles.items():
            tally.setdefault(role, []).append(kinds.get(name, set()))
    games_analysed = sum(r.analysed for r, _ in reports)
    cpu = sum(r.cpu_seconds for r, _ in reports)
    print("\nby role (flagged / entrants, and the kinds of flag):")
    for role, flagged in sorted(tally.items()):
        hit = sum(1 for kinds in flagged if kinds)
        kinds_seen = sorted({k for kinds in flagged for k in kinds})
        print(f"  {role:8s} {hit:3d} / {len(flagged):3d}  {', '.join(kinds_seen) or '-'}")
    share = {group: _share(tally, roles) for group, roles in
             (("beneficiaries", CHEATS), ("scouts", ("scout",)), ("honest", (*HONEST, "follow1", "follow2")))}
    print(f"\nbeneficiaries flagged {share['beneficiaries']:.0%} (target >= 90%), scouts flagged "
          f"{share['scouts']:.0%} (target 100%), honest entrants flagged {share['honest']:.1%} (target <= 2%)")
    print(f"foresight alone: beneficiaries {_share(tally, CHEATS, 'foresight'):.0%}, honest "
          f"{_share(tally, (*HONEST, 'follow1', 'follow2'), 'foresight'):.1%}")
    own = {role: [kinds - {"linked"} for kinds in rows] for role, rows in tally.items()}  # the game's own flags
    print(f"by the game alone (linked set aside): always {_share(own, ('always',)):.0%}, few "
          f"{_share(own, ('few',)):.0%}, scouts {_share(own, ('scout',)):.0%}, honest "
          f"{_share(own, (*HONEST, 'follow1', 'follow2')):.1%}")
    print(f"solver CPU per game analysed: {cpu / max(1, games_analysed):.2f} s over {games_analysed} games "
          f"(--fairplay-cpu {args.cpu} s at most); load {os.getloadavg()[0]:.1f}; {time.perf_counter() - started:.0f} s in all")


def _share(tally: dict[str, list[set[str]]], roles: tuple[str, ...], kind: str | None = None) -> float:
    rows = [kinds for role in roles for kinds in tally.get(role, [])]
    if not rows:
        return 0.0
    return sum(1 for kinds in rows if (kind in kinds if kind else kinds)) / len(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deals", type=int, default=12)
    parser.add_argument("--public", type=int, default=4, help="public deals with line-followers (default 4)")
    parser.add_argument("--uses", type=int, default=3, help="decisive moments a 'few' beneficiary uses the order at")
    parser.add_argument("--pace", type=float, default=0.1, help="seconds a move, jittered (default 0.1)")
    parser.add_argument("--cpu", type=float, default=6.0, help="--fairplay-cpu of the server (default 6)")
    parser.add_argument("--seed", type=int, default=39)
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
