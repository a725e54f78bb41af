"""The floor under a move's cost at a human pace: the server's I/O for a move and nothing else.

``bench/event_round.py`` measures what a move costs the server when a thousand racers move about once a
second (issue 25 asks for at most 0.2 of a core per 1,000 racers, 200 µs a move). This bench measures
what part of that no rule, table or feed causes: a server on the same stack (uvicorn with this server's
WebSocket protocol, ``server/transport/websocket.py``: frames read from the transport and written straight
to it; uvloop; redis-py's asyncio client with hiredis) that, for each binary frame a client sends, does
only what the race server does with a move's bytes:

- one group-committed script call to Redis for all the frames waiting (one round trip at a time, as the
  race server's batcher: a frame arriving while one is under way goes in the next), which appends each
  frame to its room's list and publishes one note a call on a channel this server subscribes to (the race
  server hears its own notes too);
- then an acknowledgement frame (32 bytes) to the sender, and a progress frame (60 bytes) to every
  connection of the sender's room as often as makes ``--progress-per-move`` frames a move (the race
  server sent 1.41 in ``bench/event_round.py``).

No frame is decoded, checked or encoded: what this costs is the floor of any Python server on this stack
doing a move's I/O. Clients (this process) sit in rooms of ``--room`` and each sends a frame every
``1/--rate`` seconds, at a random phase. Prints the server's CPU (utime + stime) per frame and per 1,000
clients, and the same with ``--no-redis`` when asked (the WebSocket part alone).

    python bench/io_floor.py                    # 1,000 clients in rooms of 8, one frame a second each
    python bench/io_floor.py --no-redis         # the WebSocket part alone
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

ACK = bytes(32)
PROGRESS = bytes(60)
NOTES = "floor:notes"
SCRIPT = """
for i = 1, #ARGV do redis.call('RPUSH', 'floor:room:' .. ARGV[i], i) end
redis.call('PUBLISH', KEYS[1], #ARGV)
return #ARGV
"""
"""The group commit's script: each frame's room gets a list item; one note a call."""


# ------------------------------------------------------------------ the server (a subprocess)
class Floor:
    """The server's state: rooms of connections, the frames waiting for the next round trip."""

    def __init__(self, redis: Any, progress_per_move: float) -> None:
        self.redis = redis
        self.sha = ""
        self.rooms: dict[int, list[Any]] = {}
        self.credit: dict[int, float] = {}
        self.per_move = progress_per_move
        self.pending: list[tuple[Any, int]] = []
        self.busy = False
        self.counts = {"frames": 0, "round_trips": 0, "notes": 0, "progress": 0}
        """Frames answered, script calls made, notes heard and progress frames sent (the bench reads them)."""

    def take(self, backlog: Any, room: int) -> None:
        """A frame arrived: it waits for the next round trip (or is answered at once without Redis)."""
        if self.redis is None:
            self.answer(backlog, room)
            return
        self.pending.append((backlog, room))
        if not self.busy:
            self.busy = True
            asyncio.ensure_future(self.commit())

    async def commit(self) -> None:
        try:
            while self.pending:
                batch, self.pending = self.pending, []
                self.counts["round_trips"] += 1
                await self.redis.evalsha(self.sha, 1, NOTES, *[room for _, room in batch])
                for backlog, room in batch:
                    self.answer(backlog, room)
        finally:
            self.busy = False

    def answer(self, backlog: Any, room: int) -> None:
        self.counts["frames"] += 1
        try:
            backlog.send_now(ACK)
            credit = self.credit.get(room, 0.0) + self.per_move
            members = self.rooms[room]
            if credit >= len(members):
                credit -= len(members)
                for other in members:
                    other.send_now(PROGRESS)
                self.counts["progress"] += len(members)
            self.credit[room] = credit
        except OSError:
            pass


def serve(port: int, redis_url: str | None, progress_per_move: float) -> None:
    import redis.asyncio as aioredis
    import uvicorn
    import uvloop

    from server.transport.websocket import BACKLOG, Protocol

    async def main() -> None:
        client = aioredis.Redis.from_url(redis_url) if redis_url else None
        floor = Floor(client, progress_per_move)
        if client is not None:
            floor.sha = await client.script_load(SCRIPT)
            pubsub = client.pubsub()
            await pubsub.subscribe(NOTES)

            async def hear() -> None:
                async for message in pubsub.listen():
                    if message["type"] == "message":
                        floor.counts["notes"] += 1

            asyncio.ensure_future(hear())

        async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
            if scope["type"] == "lifespan":
                while (await receive())["type"] != "lifespan.shutdown":
                    await send({"type": "lifespan.startup.complete"})
                await send({"type": "lifespan.shutdown.complete"})
                return
            if scope["type"] == "http":  # the bench's counts
                body = json.dumps(floor.counts).encode()
                await send({"type": "http.response.start", "status": 200, "headers": []})
                await send({"type": "http.response.body", "body": body})
                return
            backlog = scope["extensions"][BACKLOG]
            room = int(scope["path"].rsplit("/", 1)[1])
            members = floor.rooms.setdefault(room, [])
            backlog.read_frames(lambda data: floor.take(backlog, room) or True)
            await send({"type": "websocket.accept"})
            members.append(backlog)
            try:
                while True:
                    item = await backlog.receive()
                    if type(item) is bytes:
                        floor.take(backlog, room)
                    elif item["type"] == "websocket.disconnect":
                        break
            finally:
                members.remove(backlog)

        config = uvicorn.Config(app, host="127.0.0.1", port=port, loop="none", ws=Protocol,
                                ws_per_message_deflate=False, log_level="warning", access_log=False)
        await uvicorn.Server(config).serve()

    uvloop.run(main())


# ------------------------------------------------------------------ the clients (this process)
async def client(url: str, period: float, stop: float) -> None:
    """One client: a frame every ``period`` seconds (give or take a fifth) until ``stop``; everything it is
    sent is read (a client that stopped reading would be the server's backlog, not its CPU)."""
    import websockets

    async with websockets.connect(url, max_queue=None, compression=None) as ws:
        async def read() -> None:
            async for _ in ws:
                pass

        reader = asyncio.ensure_future(read())
        await asyncio.sleep(random.uniform(0, period))
        frame = bytes(40)
        next_at = time.monotonic()
        while next_at < stop:
            await ws.send(frame)
            next_at += period * random.uniform(0.8, 1.2)
            await asyncio.sleep(max(0.0, next_at - time.monotonic()))
        reader.cancel()


async def run(args: argparse.Namespace) -> None:
    from procfs import cpu_seconds
    from server.ops.embedded import EmbeddedRedis, free_port

    store = None
    if args.redis:
        store = EmbeddedRedis(tempfile.mkdtemp(prefix="thieves-floor-redis-"), port=free_port(), appendonly=False).start()
    port = free_port()
    server = subprocess.Popen([sys.executable, __file__, "--serve", str(port), "--redis-url", store.url if store else "",
                               "--progress-per-move", str(args.progress_per_move)], cwd=ROOT)
    try:
        import urllib.request

        def answered() -> dict[str, int]:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/counts", timeout=10) as resp:
                return json.loads(resp.read())

        deadline = time.monotonic() + 30
        while True:
            try:
                answered()
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise SystemExit("the floor server did not start")
                await asyncio.sleep(0.2)
        period = 1.0 / args.rate
        start = time.monotonic() + args.clients / args.connect_rate + 2
        stop = start + args.warmup + args.seconds
        tasks = []
        print(f"{args.clients} clients in rooms of {args.room}, a frame each every {period:.2f} s; "
              f"{'with' if args.redis else 'without'} Redis; {args.progress_per_move} progress frames a move", flush=True)
        for i in range(args.clients):
            url = f"ws://127.0.0.1:{port}/room/{i // args.room}"
            tasks.append(asyncio.ensure_future(client(url, period, stop)))
            await asyncio.sleep(1.0 / args.connect_rate)
        await asyncio.sleep(max(0.0, start + args.warmup - time.monotonic()))
        cpu0, frames0, t0 = cpu_seconds(server.pid), answered(), time.monotonic()
        await asyncio.sleep(args.seconds)
        cpu1, frames1, t1 = cpu_seconds(server.pid), answered(), time.monotonic()
        await asyncio.gather(*tasks, return_exceptions=True)
        frames = frames1["frames"] - frames0["frames"]
        if frames <= 0:
            raise SystemExit("no frame was answered in the measured window")
        cpu = cpu1 - cpu0
        rate = frames / (t1 - t0)
        per = cpu / frames
        print(f"frames answered: {frames} in {t1 - t0:.1f} s = {rate:.0f} a second ({rate / args.clients:.2f} a client "
              f"a second); server CPU {per * 1e6:.0f} us a frame, {cpu / (t1 - t0):.2f} cores in all = "
              f"{cpu / (t1 - t0) / args.clients * 1000:.3f} of a core per 1,000 clients", flush=True)
        per_frame = {k: (frames1[k] - frames0[k]) / frames for k in ("round_trips", "notes", "progress")}
        print(f"per frame: 1 ack and {per_frame['progress']:.2f} progress frames sent, {per_frame['round_trips']:.2f} "
              f"round trips to Redis, {per_frame['notes']:.2f} notes heard", flush=True)
    finally:
        server.terminate()
        server.wait(timeout=30)
        if store is not None:
            store.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=1000)
    parser.add_argument("--room", type=int, default=8, help="connections a room (a race's racers)")
    parser.add_argument("--rate", type=float, default=1.0, help="frames a client sends a second")
    parser.add_argument("--progress-per-move", type=float, default=1.41,
                        help="progress frames the server sends a move (bench/event_round.py measured 1.41)")
    parser.add_argument("--seconds", type=float, default=40.0, help="the measured window")
    parser.add_argument("--warmup", type=float, default=5.0)
    parser.add_argument("--connect-rate", type=float, default=200.0, help="connections opened a second")
    parser.add_argument("--no-redis", dest="redis", action="store_false", help="answer each frame at once")
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--redis-url", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.redis_url or None, args.progress_per_move)
        return
    asyncio.run(run(args))


if __name__ == "__main__":
    main()
