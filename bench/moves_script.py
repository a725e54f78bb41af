"""What ``moves.lua`` costs Redis a move, alone: no server, no client on the same cores.

Starts its own redis-server (append-only file on, as ``make run`` has it), makes one race through the
Store (create, join, start: the real scripts), then commits rounds of moves through ``Store.commit_move``
and its batcher, so that each round is one ``moves.lua`` call of ``--seats x --per-seat`` moves with the
very fields the server sends. It prints Redis's own time a move (INFO commandstats: the script's
``usec`` over the moves), and with ``--callgrind`` runs redis-server under valgrind and prints the
instructions a move: the difference between a run of ``--rounds`` and one of a third as many, so that
start-up and the race's setup fall out. Instruction counts do not drift with the machine's speed or
load (wall-clock figures on this 2-core machine swing by a third), which makes them the figure to
compare two versions of a script by.

    python bench/moves_script.py                      # microseconds in Redis a move
    python bench/moves_script.py --callgrind          # and instructions a move (needs valgrind, ~1 min)
"""

from __future__ import annotations

import argparse
import asyncio
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import redis.asyncio as aioredis  # noqa: E402

from server.ops.embedded import find_redis_server  # noqa: E402
from server.store import Keys, MoveCommit, RaceMeta, Store  # noqa: E402

RACE = "benchmovesscript"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_redis(data_dir: str, port: int, callgrind_out: str | None) -> subprocess.Popen[bytes]:
    """redis-server on ``port`` with its append-only file in ``data_dir`` (under callgrind if asked)."""
    args = [find_redis_server(), "--port", str(port), "--bind", "127.0.0.1", "--dir", data_dir, "--save", "",
            "--appendonly", "yes", "--appendfsync", "everysec"]
    if callgrind_out:
        args = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={callgrind_out}"] + args
    return subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


async def _until_up(url: str, proc: subprocess.Popen[bytes]) -> aioredis.Redis:
    client = aioredis.Redis.from_url(url)
    deadline = time.monotonic() + 120  # valgrind starts slowly
    while True:
        try:
            await client.ping()
            return client
        except (OSError, aioredis.ConnectionError):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"redis-server did not start (exit {proc.poll()})")
            await asyncio.sleep(0.1)


async def started_race(store: Store, race: str, seats: int, now: int) -> None:
    """A race of ``seats`` players started at ``now``, made through the Store's own scripts (create, join, start)."""
    meta = RaceMeta(id=race, code=race[:6].upper(), variant="forty-thieves", deal_source="number", deal=1,
                    salt="s", commitment="c", seats=seats, players=0, time_limit=3600, undo=True,
                    start_mode="creator", status="lobby", created_at=now, starts_at=0, ends_at=0, ended_at=0,
                    version=0, done=0)
    assert await store.create_race(meta)
    for seat in range(seats):
        await store.join(race, f"p{seat}", 0, f"conn{seat}", now + 3_600_000, now)
        await store.welcomed(race, seat, 0)  # answered (a start gives back the seats whose join was not)
    await store.start(race, now, 0)


async def commit_round(store: Store, race: str, n: list[int], per_seat: int, now: int) -> None:
    """``per_seat`` draws for each seat, committed together: one ``moves.lua`` call. ``n`` holds each seat's
    moves so far (counted on); a refused move raises."""
    moving = []
    for _ in range(per_seat):
        for seat in range(len(n)):
            moving.append(store.commit_move(race, MoveCommit(seat=seat, now=now + 1, seq=n[seat] + 1,
                                                             expected_n=n[seat], move="S", home=0,
                                                             moves=n[seat] + 1, status="racing")))
            n[seat] += 1
    await asyncio.gather(*moving)


async def play(url: str, proc: subprocess.Popen[bytes], rounds: int, seats: int, per_seat: int) -> float:
    """The race made and ``rounds`` batches committed; Redis's microseconds a move in ``moves.lua``."""
    client = await _until_up(url, proc)
    store = Store(client)
    now = int(time.time() * 1000)
    await started_race(store, RACE, seats, now)
    n = [0] * seats
    await client.config_resetstat()
    for _ in range(rounds):
        await commit_round(store, RACE, n, per_seat, now)
    stats = await client.info("commandstats")
    usec = stats["cmdstat_evalsha"]["usec"]
    assert int(await client.llen(Keys(RACE).log(0))) == rounds * per_seat
    await client.shutdown(nosave=True)
    await client.aclose()
    return usec / (rounds * per_seat * seats)


def run(rounds: int, args: argparse.Namespace) -> tuple[float, int | None]:
    """One redis-server, one race, ``rounds`` batches: microseconds a move, and instructions in all (callgrind)."""
    with tempfile.TemporaryDirectory(prefix="thieves-moves-") as data:
        out = str(Path(data) / "callgrind.out") if args.callgrind else None
        port = _free_port()
        proc = start_redis(data, port, out)
        try:
            usec = asyncio.run(play(f"redis://127.0.0.1:{port}/0", proc, rounds, args.seats, args.per_seat))
            proc.wait(120)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        if out is None:
            return usec, None
        found = re.search(r"^summary: (\d+)", Path(out).read_text(errors="replace"), re.M)
        assert found, "no callgrind summary"
        return usec, int(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=300, help="moves.lua calls measured")
    parser.add_argument("--seats", type=int, default=10)
    parser.add_argument("--per-seat", type=int, default=4, help="moves of each seat in one call")
    parser.add_argument("--callgrind", action="store_true", help="also count instructions (valgrind)")
    args = parser.parse_args()
    if args.callgrind and not shutil.which("valgrind"):
        raise SystemExit("--callgrind needs valgrind (apt-get install valgrind)")
    moves = args.rounds * args.seats * args.per_seat
    print(f"moves.lua: {args.rounds} calls of {args.seats * args.per_seat} moves, append-only file on ...", flush=True)
    usec, total = run(args.rounds, args)
    if total is None:
        print(f"  redis_us_per_move           {usec:8.2f}   (INFO commandstats, the script's own time)")
    else:  # under valgrind the time means nothing
        few = max(1, args.rounds // 3)
        _, base = run(few, args)
        assert base is not None
        per_move = (total - base) / (moves - few * args.seats * args.per_seat)
        print(f"  redis_instructions_per_move {per_move:8.0f}   (callgrind: {args.rounds} calls less {few})")


if __name__ == "__main__":
    main()
