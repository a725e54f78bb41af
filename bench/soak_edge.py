"""Soak of the public edge: honest races played through while the server is attacked, for minutes.

Starts one ``thieves-server`` (its own port, its own embedded Redis in a
temporary directory, as the other benchmarks do) and, until the time is up:

- **honest players** race continuously: tables of two players, each race
  created over HTTP, joined over WebSockets, started by both saying
  ``ready``, and played through to ``finished`` along a winning line of the
  public pool (one move in flight at a time, at ``--pace`` moves a second);
- **attacks**, each a loop bounded in count (``--max-per-kind``) and in
  time, at a few requests in flight: slow-header and slow-body sockets, many
  SSE streams from one address, oversized and deeply nested JSON bodies,
  non-ASCII bearer tokens and keys, look-alike account names, cross-site
  ``text/plain`` POSTs, organiser-token guesses, and floods of pool-race and
  daily-deal creation;
- a **health probe**, ``GET /health`` every 0.25 s.

Everything goes to 127.0.0.1 only. The server believes ``X-Forwarded-For``
from 127.0.0.1 (``--trusted-proxies``), so honest tables and attackers
count as different client addresses (honest ``10.1.T.N``, attackers
``10.66.0.K``), as they would in the wild; the limits per address apply.

It prints: honest races finished, moves sent / acknowledged / lost (sent,
never answered), honest errors (anything but the expected frames and
answers: there should be none), each attack's requests by how they were
answered (HTTP status and error code, or what became of the socket), the
health check's latency p50/p99, and the server's CPU and memory. The
figures describe whatever defences the server has: run it before and after
a change to see what the change did.

    python bench/soak_edge.py --minutes 10
    python bench/soak_edge.py --seconds 5 --json        # what tests/test_bench_soak_edge.py runs
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import json
import os
import random
import re
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Awaitable, Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import websockets  # noqa: E402
from procfs import child_named, cpu_seconds, rss_kb  # noqa: E402
from race_load import start_child  # noqa: E402

from shared import protocol as p  # noqa: E402
from shared.pool import load_pool  # noqa: E402

HOST = "127.0.0.1"
"""The only host this script talks to."""
ATTACKER = "10.66.0.{}"
"""Attackers' forwarded addresses (a handful: attacks come from few addresses)."""
HONEST = "10.1.{}.{}"
"""Honest tables' forwarded addresses (table, race): each table spreads its creations over a few."""
HEALTH_EVERY = 0.25
SLOW_HOLD = 30.0
"""The longest a slow socket is kept open by this side (a server without read deadlines never closes it)."""
SLOW_STEP = 1.0
"""Seconds between two bytes of a slow socket."""
IO_TIMEOUT = 15.0
"""The longest one ordinary request may take before it counts as ``timeout``."""
VARIANTS = ("forty-thieves", "sixty-thieves", "eighty-thieves")
LOOKALIKES = ("Ηonest", "honеst", "ｈｏｎｅｓｔ", "HONEST", "honest\u200b", "h0nest", "hоnеst", "honest\u0301")
"""Names that look like the honest account's ``honest`` (Greek Eta, Cyrillic e and o, full-width,
case, a zero-width space, a digit zero, a combining accent)."""
NON_ASCII_TOKENS = ("ключ.секрет", "honest.\u00e9t\u00e9", "\u202eterces", "key\u0000zero", "ｔｏｋｅｎ")


# ------------------------------------------------------------------ figures
@dataclass
class Honest:
    """What the honest players did and met."""

    races: int = 0
    moves_sent: int = 0
    moves_acked: int = 0
    moves_lost: int = 0
    errors: list[str] = field(default_factory=list)

    def error(self, what: str) -> None:
        self.errors.append(what)


@dataclass
class Figures:
    honest: Honest = field(default_factory=Honest)
    attacks: dict[str, collections.Counter[str]] = field(
        default_factory=lambda: collections.defaultdict(collections.Counter))
    health_ms: list[float] = field(default_factory=list)
    health_failed: int = 0

    def count(self, kind: str, outcome: str) -> None:
        self.attacks[kind][outcome] += 1


def quantile(values: list[float], q: int) -> float | None:
    """The ``q``-th percentile (None with fewer than two values)."""
    if len(values) < 2:
        return None
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


# ------------------------------------------------------------------ raw HTTP (no library between us and the bytes)
@dataclass
class Answer:
    status: int
    body: bytes

    def outcome(self) -> str:
        """``"429 create_rate_limited"``: the status and, for a JSON error, its code."""
        code = ""
        if self.status >= 400:
            with contextlib.suppress(ValueError, AttributeError, TypeError):
                code = json.loads(self.body).get("code") or ""
        return f"{self.status} {code}".strip()


def request_bytes(method: str, path: str, headers: dict[str, str] | None = None, body: bytes = b"",
                  length: int | None = None) -> bytes:
    """An HTTP/1.1 request head (header values as UTF-8 bytes, as an attacker may send them) and body."""
    lines = [f"{method} {path} HTTP/1.1", f"Host: {HOST}", "Connection: close",
             f"Content-Length: {len(body) if length is None else length}"]
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def parse_status(data: bytes) -> int:
    match = re.match(rb"HTTP/1\.[01] (\d{3})", data)
    if match is None:
        raise ValueError(f"not an HTTP answer: {data[:40]!r}")
    return int(match.group(1))


async def http(port: int, method: str, path: str, headers: dict[str, str] | None = None, body: bytes = b"",
               timeout: float = IO_TIMEOUT) -> Answer:
    """One request on its own connection; the whole answer (the server closes after it)."""
    reader, writer = await asyncio.wait_for(asyncio.open_connection(HOST, port), timeout)
    try:
        writer.write(request_bytes(method, path, headers, body))
        await writer.drain()
        data = await asyncio.wait_for(reader.read(), timeout)
    finally:
        writer.close()
        with contextlib.suppress(OSError, ConnectionError):
            await writer.wait_closed()
    head, _, rest = data.partition(b"\r\n\r\n")
    if b"transfer-encoding: chunked" in head.lower():
        rest = unchunk(rest)
    return Answer(parse_status(data), rest)


def unchunk(data: bytes) -> bytes:
    out, i = b"", 0
    while True:
        end = data.find(b"\r\n", i)
        if end < 0:
            return out
        size = int(data[i:end].split(b";")[0] or b"0", 16)
        if size == 0:
            return out
        out += data[end + 2:end + 2 + size]
        i = end + 2 + size + 2


async def attempt(figures: Figures, kind: str, call: Callable[[], Awaitable[str]]) -> None:
    """Run one attack request; count how it was answered (or what became of it)."""
    try:
        outcome = await call()
    except asyncio.TimeoutError:
        outcome = "timeout"
    except (ConnectionResetError, BrokenPipeError):
        outcome = "reset by server"
    except (ConnectionError, OSError) as exc:
        outcome = f"socket error {type(exc).__name__}"
    except ValueError as exc:
        outcome = f"garbled answer ({str(exc)[:30]})"
    figures.count(kind, outcome)


def json_body(data: Any) -> bytes:
    return json.dumps(data).encode()


def forwarded(address: str, **more: str) -> dict[str, str]:
    return {"X-Forwarded-For": address, "Content-Type": "application/json", **more}


# ------------------------------------------------------------------ the honest players
class Soak:
    """One soak run against one server: its address, the clock, the figures."""

    def __init__(self, port: int, args: argparse.Namespace, organiser: str) -> None:
        self.port = port
        self.ws_url = f"ws://{HOST}:{port}/ws"
        self.args = args
        self.organiser = organiser
        self.figures = Figures()
        self.stop = asyncio.Event()
        self.deadline = 0.0
        pool = load_pool("forty-thieves")
        # The shortest winning lines: races that finish in seconds at the pace.
        self.lines = sorted(pool.lines.items(), key=lambda item: len(item[1]))[:8]
        self.attack_race = ""
        self.attack_keys: list[str] = []
        self.started: collections.Counter[str] = collections.Counter()
        """Attempts begun per attack kind (the bound is on these, so concurrent loops never pass it)."""

    def running(self, kind: str | None = None) -> bool:
        """Time is left (and, for an attack, its count is not used up)."""
        if self.stop.is_set() or time.monotonic() >= self.deadline:
            return False
        return kind is None or self.started[kind] < self.args.max_per_kind

    async def pause(self, seconds: float) -> None:
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self.stop.wait(), seconds)

    # -------------------------------------------------------------- honest
    async def table(self, t: int) -> None:
        """Two players racing one race after another, until the time is up."""
        n = 0
        while self.running():
            n += 1
            deal, line = self.lines[(t + n) % len(self.lines)]
            address = HONEST.format(t, n % 4)
            try:
                await self.race(t, n, deal, list(line), address)
            except Exception as exc:  # noqa: BLE001 - every failure of an honest race is a figure
                if self.running():
                    self.figures.honest.error(f"table {t} race {n}: {type(exc).__name__}: {exc}"[:200])
                    await self.pause(1.0)

    async def race(self, t: int, n: int, deal: int, line: list[str], address: str) -> None:
        answer = await http(self.port, "POST", "/races", forwarded(address), json_body(
            {"seats": 2, "deal_source": "number", "deal": deal, "time_limit": 600, "start_mode": "all-ready"}))
        if answer.status != 201:
            raise RuntimeError(f"creating a race: {answer.outcome()}")
        code = json.loads(answer.body)["race"]["code"]
        results = await asyncio.gather(*(self.player(code, f"t{t}r{n}p{i}", line, address) for i in range(2)))
        if all(results):
            self.figures.honest.races += 1

    async def player(self, code: str, name: str, line: list[str], address: str) -> bool:
        """Join, ready, play the whole line at the pace, see ``finished``; True when the race was finished."""
        honest = self.figures.honest
        sent = acked = 0
        try:
            async with websockets.connect(self.ws_url, compression=None, open_timeout=IO_TIMEOUT,
                                          additional_headers={"X-Forwarded-For": address}) as ws:
                await ws.send(p.encode(p.Hello(protocol=p.PROTOCOL_VERSION, race=code, name=name)))
                await self.until(ws, p.Welcome)
                await ws.send(p.encode(p.Ready(ready=True)))
                countdown = await self.until(ws, p.Countdown)
                await asyncio.sleep(max(0.0, (countdown.starts_at - countdown.server_time) / 1000) + 0.02)
                step = 1.0 / self.args.pace
                for seq, text in enumerate(line, 1):
                    if not self.running():
                        return False
                    t0 = time.monotonic()
                    await ws.send(p.encode(p.Move(seq=seq, move=text)))
                    sent += 1
                    honest.moves_sent += 1
                    answer = await self.until(ws, (p.Ack, p.Reject))
                    if isinstance(answer, p.Reject):
                        raise RuntimeError(f"move {seq} {text} rejected: {answer.reason}")
                    acked += 1
                    honest.moves_acked += 1
                    await asyncio.sleep(max(0.0, step - (time.monotonic() - t0)))
                await self.until(ws, p.Finished, timeout=60.0)
                return True
        finally:
            honest.moves_lost += sent - acked  # sent and never answered (or refused: an error too)

    async def until(self, ws: websockets.ClientConnection, kind: Any, timeout: float = IO_TIMEOUT) -> Any:
        """The next frame of ``kind``, reading past progress (and countdown, ack) frames; an error is a failure."""
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                raise asyncio.TimeoutError(f"no {kind} in {timeout:g} s")
            msg = p.decode_server(await asyncio.wait_for(ws.recv(), left))  # type: ignore[arg-type]
            if isinstance(msg, kind):
                return msg
            if isinstance(msg, p.Error):
                raise RuntimeError(f"error frame {msg.code}: {msg.message}")

    # -------------------------------------------------------------- health
    async def health(self) -> None:
        while self.running():
            t0 = time.perf_counter()
            try:
                answer = await http(self.port, "GET", "/health", timeout=10.0)
                if answer.status == 200:
                    self.figures.health_ms.append((time.perf_counter() - t0) * 1000)
                else:
                    self.figures.health_failed += 1
            except (OSError, asyncio.TimeoutError, ValueError):
                self.figures.health_failed += 1
            await self.pause(HEALTH_EVERY)

    # -------------------------------------------------------------- attacks
    async def repeat(self, kind: str, make: Callable[[int], Callable[[], Awaitable[str]]], concurrency: int = 2,
                     gap: float = 0.05) -> None:
        """``concurrency`` loops of attempts ``make(i)``, ``gap`` seconds apart, while the kind may run."""

        async def loop(worker: int) -> None:
            i = worker
            while self.running(kind):
                self.started[kind] += 1
                await attempt(self.figures, kind, make(i))
                i += concurrency
                await self.pause(gap)

        await asyncio.gather(*(loop(w) for w in range(concurrency)))

    async def slow(self, head: bytes, drip: bytes) -> str:
        """Send ``head``, then one byte of ``drip`` every SLOW_STEP s; how the socket ended."""
        reader, writer = await asyncio.wait_for(asyncio.open_connection(HOST, self.port), IO_TIMEOUT)
        started = time.monotonic()
        try:
            writer.write(head)
            await writer.drain()
            i = 0
            while self.running() and time.monotonic() - started < SLOW_HOLD:
                with contextlib.suppress(asyncio.TimeoutError):
                    data = await asyncio.wait_for(reader.read(1024), SLOW_STEP)
                    if not data:
                        return "closed by server"
                    return f"answered {parse_status(data)} after {time.monotonic() - started:.0f} s"
                writer.write(drip[i % len(drip):i % len(drip) + 1])
                await writer.drain()
                i += 1
            return "held open by us to the end" if not self.running() else f"still open after {SLOW_HOLD:g} s"
        finally:
            writer.close()
            with contextlib.suppress(OSError, ConnectionError):
                await writer.wait_closed()

    async def slow_header(self) -> None:
        head = f"GET /health HTTP/1.1\r\nHost: {HOST}\r\n".encode()
        await self.repeat("slow_header", lambda i: lambda: self.slow(head, b"X-Slow: aaaa\r\n"),
                          concurrency=self.args.slow_sockets, gap=0.5)

    async def slow_body(self) -> None:
        head = request_bytes("POST", "/races", forwarded(ATTACKER.format(1)), length=10_000)
        await self.repeat("slow_body", lambda i: lambda: self.slow(head, b'{"seats": 2' + b" " * 64),
                          concurrency=self.args.slow_sockets, gap=0.5)

    async def sse_streams(self) -> None:
        """Many event streams of one race from one address, each held while it lasts (at most SLOW_HOLD)."""

        async def one() -> str:
            reader, writer = await asyncio.wait_for(asyncio.open_connection(HOST, self.port), IO_TIMEOUT)
            try:
                writer.write(request_bytes("GET", f"/races/{self.attack_race}/events",
                                           {"X-Forwarded-For": ATTACKER.format(2), "Accept": "text/event-stream"}))
                await writer.drain()
                first = await asyncio.wait_for(reader.read(1024), IO_TIMEOUT)
                if not first:
                    return "closed by server"
                status = parse_status(first)
                if status != 200:
                    return Answer(status, first.partition(b"\r\n\r\n")[2]).outcome()
                started = time.monotonic()
                while self.running() and time.monotonic() - started < SLOW_HOLD:
                    with contextlib.suppress(asyncio.TimeoutError):
                        if not await asyncio.wait_for(reader.read(4096), 1.0):
                            return "200, then closed by server"
                return "200, held"
            finally:
                writer.close()
                with contextlib.suppress(OSError, ConnectionError):
                    await writer.wait_closed()

        await self.repeat("sse_streams", lambda i: one, concurrency=self.args.sse_streams, gap=0.2)

    async def oversized(self) -> None:
        big = json_body({"seats": 2, "pad": "a" * (self.args.oversize_kb * 1024)})
        paths = ("/races", "/players", "/events")

        def make(i: int) -> Callable[[], Awaitable[str]]:
            async def call() -> str:
                return (await http(self.port, "POST", paths[i % 3], forwarded(ATTACKER.format(3)), big)).outcome()
            return call

        await self.repeat("oversized_body", make, concurrency=1, gap=0.5)

    async def nested(self) -> None:
        # Under --max-body (64 KiB), so that the depth is what refuses them (a larger one is refused unread,
        # body_too_large: the oversized attack's part): 20,000 deep as brackets, 10,000 as objects.
        bodies = (b"[" * 20_000 + b"]" * 20_000, b'{"a":' * 10_000 + b"1" + b"}" * 10_000)
        paths = ("/races", "/players")  # (POST /events reads no body without the organiser token)

        def make(i: int) -> Callable[[], Awaitable[str]]:
            async def call() -> str:
                headers = forwarded(ATTACKER.format(3))
                return (await http(self.port, "POST", paths[i % 2], headers, bodies[(i // 2) % 2])).outcome()
            return call

        await self.repeat("nested_body", make, concurrency=1, gap=0.2)

    async def non_ascii(self) -> None:
        """Bearer tokens and hello keys outside ASCII, on every endpoint that reads one."""
        paths = ("/events", "/players/honest/key", "/daily/forty-thieves", "/events/x/entrants")

        def make(i: int) -> Callable[[], Awaitable[str]]:
            token = NON_ASCII_TOKENS[i % len(NON_ASCII_TOKENS)]

            async def call() -> str:
                if i % 5 == 4:  # a WebSocket hello with such a key
                    return await self.hello_with_key(token)
                headers = forwarded(ATTACKER.format(4), Authorization=f"Bearer {token}")
                return (await http(self.port, "POST", paths[i % len(paths)], headers, b"{}")).outcome()
            return call

        await self.repeat("non_ascii_token", make, concurrency=1, gap=0.1)

    async def hello_with_key(self, key: str) -> str:
        async with websockets.connect(self.ws_url, compression=None, open_timeout=IO_TIMEOUT,
                                      additional_headers={"X-Forwarded-For": ATTACKER.format(4)}) as ws:
            await ws.send(p.encode(p.Hello(protocol=p.PROTOCOL_VERSION, race=self.attack_race, key=key)))
            try:
                msg = p.decode_server(await asyncio.wait_for(ws.recv(), IO_TIMEOUT))  # type: ignore[arg-type]
            except websockets.ConnectionClosed as exc:
                return f"ws closed {exc.rcvd.code if exc.rcvd else '?'}"
            return f"ws {msg.code}" if isinstance(msg, p.Error) else f"ws {type(msg).__name__.lower()}"

    async def lookalikes(self) -> None:
        def make(i: int) -> Callable[[], Awaitable[str]]:
            async def call() -> str:
                body = json_body({"name": LOOKALIKES[i % len(LOOKALIKES)]})
                return (await http(self.port, "POST", "/players", forwarded(ATTACKER.format(5)), body)).outcome()
            return call

        await self.repeat("lookalike_name", make, concurrency=1, gap=0.2)

    async def cross_site(self) -> None:
        """What a page on another site can send without asking: text/plain POSTs with its Origin."""
        targets: tuple[tuple[str, dict[str, Any]], ...] = (
            ("/races", {"seats": 2}), ("/players", {"name": "xsite"}), ("/daily/forty-thieves", {}))

        def make(i: int) -> Callable[[], Awaitable[str]]:
            path, data = targets[i % len(targets)]

            async def call() -> str:
                headers = {"X-Forwarded-For": ATTACKER.format(6), "Content-Type": "text/plain",
                           "Origin": "http://evil.example"}
                return (await http(self.port, "POST", path, headers, json_body(data))).outcome()
            return call

        await self.repeat("cross_site_text_plain", make, concurrency=1, gap=0.2)

    async def organiser_guess(self) -> None:
        def make(i: int) -> Callable[[], Awaitable[str]]:
            async def call() -> str:
                guess = secrets.token_hex(random.choice((4, 8, 16, 32)))
                path = "/events" if i % 2 == 0 else "/events/x/start"
                headers = forwarded(ATTACKER.format(7), Authorization=f"Bearer {guess}")
                return (await http(self.port, "POST", path, headers, json_body({"name": "guess"}))).outcome()
            return call

        await self.repeat("organiser_guess", make, concurrency=2, gap=0.02)

    async def pool_flood(self) -> None:
        def make(i: int) -> Callable[[], Awaitable[str]]:
            async def call() -> str:
                body = json_body({"deal_source": "pool", "variant": VARIANTS[i % len(VARIANTS)]})
                return (await http(self.port, "POST", "/races", forwarded(ATTACKER.format(8)), body,
                                   timeout=60.0)).outcome()
            return call

        await self.repeat("pool_flood", make, concurrency=self.args.flood, gap=0.05)

    async def daily_flood(self) -> None:
        def make(i: int) -> Callable[[], Awaitable[str]]:
            async def call() -> str:
                if not self.attack_keys:
                    return "no attacker account"
                key = self.attack_keys[i % len(self.attack_keys)]
                headers = forwarded(ATTACKER.format(8), Authorization=f"Bearer {key}")
                return (await http(self.port, "POST", f"/daily/{VARIANTS[i % len(VARIANTS)]}", headers, b"",
                                   timeout=60.0)).outcome()
            return call

        await self.repeat("daily_flood", make, concurrency=self.args.flood, gap=0.05)

    # -------------------------------------------------------------- the run
    async def prepare(self) -> None:
        """The honest account the look-alikes imitate, a lobby race to stream, attacker accounts."""
        answer = await http(self.port, "POST", "/players", forwarded(HONEST.format(99, 1)), json_body({"name": "honest"}))
        if answer.status != 201:
            self.figures.honest.error(f"registering the honest account: {answer.outcome()}")
        answer = await http(self.port, "POST", "/races", forwarded(ATTACKER.format(2)), json_body({"seats": 2}))
        self.attack_race = json.loads(answer.body)["race"]["id"] if answer.status == 201 else "none"
        for i in range(4):
            answer = await http(self.port, "POST", "/players", forwarded(ATTACKER.format(9)),
                                json_body({"name": f"flooder{i}"}))
            if answer.status == 201:
                self.attack_keys.append(json.loads(answer.body)["key"])

    async def run(self, seconds: float) -> None:
        await self.prepare()
        self.deadline = time.monotonic() + seconds
        attacks = [self.slow_header(), self.slow_body(), self.sse_streams(), self.oversized(), self.nested(),
                   self.non_ascii(), self.lookalikes(), self.cross_site(), self.organiser_guess(),
                   self.pool_flood(), self.daily_flood()]
        tasks = [asyncio.ensure_future(c) for c in
                 [*(self.table(t) for t in range(self.args.tables)), self.health(), *attacks]]
        await self.pause(seconds)
        self.stop.set()
        # Every loop ends at its next step (slow sockets within a second); a straggler is cancelled.
        _, pending = await asyncio.wait(tasks, timeout=IO_TIMEOUT + 5)
        for task in pending:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


# ------------------------------------------------------------------ report
def workers_cpu(pid: int, skip: int | None) -> dict[int, float]:
    """CPU seconds so far of each live child of ``pid`` but ``skip`` (the solver and hint workers)."""
    out = {}
    for children in Path(f"/proc/{pid}/task").glob("*/children"):
        for child in map(int, children.read_text().split()):
            if child != skip:
                with contextlib.suppress(FileNotFoundError, ProcessLookupError):
                    out[child] = cpu_seconds(child)
    return out


def summary(figures: Figures, seconds: float, server_cpu: float | None, redis_cpu: float | None,
            rss: int | None, worker_cpu: float | None = None) -> dict[str, Any]:
    h = figures.honest
    return {
        "seconds": round(seconds, 1),
        "honest": {"races_finished": h.races, "moves_sent": h.moves_sent, "moves_acked": h.moves_acked,
                   "moves_lost": h.moves_lost, "errors": len(h.errors), "first_errors": h.errors[:5]},
        "attacks": {kind: dict(outcomes.most_common()) for kind, outcomes in sorted(figures.attacks.items())},
        "health": {"checks": len(figures.health_ms), "failed": figures.health_failed,
                   "p50_ms": quantile(figures.health_ms, 50), "p99_ms": quantile(figures.health_ms, 99)},
        "server": {"cpu_seconds": server_cpu, "workers_cpu_seconds": worker_cpu, "redis_cpu_seconds": redis_cpu,
                   "rss_kb": rss},
    }


def show(s: dict[str, Any]) -> None:
    h, health, server = s["honest"], s["health"], s["server"]
    print(f"soak of {s['seconds']:g} s")
    print(f"honest: {h['races_finished']} races finished; moves sent {h['moves_sent']}, acked {h['moves_acked']}, "
          f"lost {h['moves_lost']}; errors {h['errors']}")
    for line in h["first_errors"]:
        print(f"  error: {line}")
    print("attacks (requests by how they were answered):")
    for kind, outcomes in s["attacks"].items():
        total = sum(outcomes.values())
        print(f"  {kind:22} {total:6}  " + ", ".join(f"{o}: {n}" for o, n in outcomes.items()))

    def ms(v: float | None) -> str:
        return "n/a" if v is None else f"{v:.1f} ms"

    print(f"health: {health['checks']} checks ({health['failed']} failed), p50 {ms(health['p50_ms'])}, "
          f"p99 {ms(health['p99_ms'])}")
    cpu = server["cpu_seconds"]
    share = f" ({cpu / s['seconds']:.0%} of a core)" if cpu is not None and s["seconds"] else ""
    workers = server["workers_cpu_seconds"]
    print(f"server: CPU {cpu if cpu is None else round(cpu, 1)} s{share}, its solver/hint workers "
          f"{workers if workers is None else round(workers, 1)} s, its Redis "
          f"{server['redis_cpu_seconds'] if server['redis_cpu_seconds'] is None else round(server['redis_cpu_seconds'], 1)}"
          f" s, RSS at the end {server['rss_kb']} KiB")


def server_command(data_dir: str, checked_wait: float | None) -> list[str]:
    """``thieves-server`` on a free port with its own embedded Redis; the organiser token comes by environment."""
    args = [sys.executable, "-m", "server.main", "--port", "0", "--host", HOST, "--data-dir", data_dir,
            "--countdown", "0.2", "--trusted-proxies", HOST]
    return args + (["--checked-wait", str(checked_wait)] if checked_wait is not None else [])


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    seconds = args.seconds if args.seconds is not None else args.minutes * 60
    organiser = secrets.token_hex(16)
    with tempfile.TemporaryDirectory(prefix="thieves-soak-") as data:
        os.environ["THIEVES_ORGANISER_TOKEN"] = organiser
        proc, base = start_child(server_command(data, args.checked_wait))
        try:
            port = int(base.rsplit(":", 1)[1])
            redis_pid = child_named(proc.pid, "redis-server")
            cpu0 = cpu_seconds(proc.pid)
            redis0 = cpu_seconds(redis_pid) if redis_pid else None
            workers0 = workers_cpu(proc.pid, redis_pid)
            soak = Soak(port, args, organiser)
            t0 = time.monotonic()
            await soak.run(seconds)
            elapsed = time.monotonic() - t0
            cpu = cpu_seconds(proc.pid) - cpu0
            redis_cpu = cpu_seconds(redis_pid) - redis0 if redis_pid and redis0 is not None else None
            rss = rss_kb(proc.pid)
            workers = sum(cpu - workers0.get(child, 0.0) for child, cpu in workers_cpu(proc.pid, redis_pid).items())
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    return summary(soak.figures, elapsed, cpu, redis_cpu, rss, workers)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="how long the soak lasts (default 10)")
    parser.add_argument("--seconds", type=float, default=None, help="how long, in seconds (overrides --minutes)")
    parser.add_argument("--tables", type=int, default=3, help="honest tables of two players racing (default 3)")
    parser.add_argument("--pace", type=float, default=25.0, help="an honest player's moves a second (default 25)")
    parser.add_argument("--max-per-kind", type=int, default=20_000, help="most requests of one attack kind")
    parser.add_argument("--slow-sockets", type=int, default=10, help="slow-header and slow-body sockets each")
    parser.add_argument("--sse-streams", type=int, default=50, help="SSE streams held from one address")
    parser.add_argument("--flood", type=int, default=4, help="pool and daily creation requests in flight each")
    parser.add_argument("--oversize-kb", type=int, default=2048, help="size of an oversized body (KiB)")
    parser.add_argument("--checked-wait", type=float, default=None,
                        help="the server's --checked-wait (default: the server's own, 8 s)")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON line as well")
    args = parser.parse_args(argv)
    if args.seconds is None and args.minutes <= 0 or args.seconds is not None and args.seconds <= 0:
        parser.error("the soak needs a positive duration")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    seconds = args.seconds if args.seconds is not None else args.minutes * 60
    print(f"soak of the public edge: {seconds:g} s, {args.tables} honest tables, attacks from "
          f"{ATTACKER.format('*')}; load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores ...", flush=True)
    figures = asyncio.run(main_async(args))
    show(figures)
    if args.json:
        print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
