"""Fault harness: does an acknowledged move survive Redis failing, and is anything left stranded?

Jepsen-style, on real processes: each round starts its own Redis deployment
(one Redis with an append-only file, a Redis Cluster of 3 masters + 3
replicas, or a master, a replica and three Sentinels), two ``thieves-server``
processes on it, and races whose players (bench/fault_play.py) play legal
precomputed lines at a steady pace and log every acknowledged move. Then it
injects one fault into Redis while they play:

  aof-kill           one Redis (appendonly yes, appendfsync everysec) kill -9, restarted on its port and data
  cluster-kill       a cluster master kill -9; its replica takes over
  cluster-pause      a cluster master SIGSTOPped until its replica was promoted and --pause-extra more,
                     then SIGCONTed (it rejoins as a replica and drops what it took meanwhile)
  sentinel-failover  the master behind three Sentinels kill -9; the server asks the Sentinels
  named-node-down    the cluster node named first in --redis-url kill -9, restarted after --down seconds

While the fault lasts a third of the races' players give up (their race's end falls in the outage)
and the players of a few lobbies send their hellos (their joins fall in it); after it, every player
plays on a few seconds and gives up. Per fault it prints: acknowledged moves; acked moves lost (an
acked move missing from the race's stored game, read from Redis at the end); diverged races (a stored
game other than the acked moves plus some whose ack was lost); stranded seats (a player that never
got its seat token, a stored seat nobody holds, a seat that never moved though its player wanted
to); races not ended within 10 s (of Redis returning, for the races whose players gave up during the
fault; of the give-ups, for the others); and the longest stall of the races on the failed node and on
the healthy ones (the longest gap between a player's acks while the fault lasted; on a cluster a
race's node is the master of its slot before the fault). Also what the servers' logs show:
tracebacks, tasks whose exception was never retrieved, moves found in conflict.

The server under test is this checkout's unless ``--checkout DIR`` names another (its
``.venv/bin/thieves-server``): what it supports (Sentinel, replica acknowledgements, ``hello.join_id``)
is read from its ``--help`` and its protocol module, so the same harness measures before and after.

    python bench/faults.py                                   # every fault this machine can run, 3 rounds each
    python bench/faults.py --fault cluster-pause --rounds 5
    python bench/faults.py --fault named-node-down --down 20
    python bench/faults.py --checkout /path/to/older/checkout --fault aof-kill
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests"))  # the real-process helpers the fault tests use

import redis  # noqa: E402
from redis.crc import key_slot  # noqa: E402
from fault_play import Player, Stored, longest_gap, start_race, verdict  # noqa: E402
from race_load import http, line_moves, playouts, server_command  # noqa: E402
from process_util import RedisProcess, ServerProcess, thieves_server_command  # noqa: E402

from server.ops.embedded import find_redis_server  # noqa: E402
from server.store.keys import Keys  # noqa: E402
from shared import protocol as p  # noqa: E402

END_WITHIN_S = 10.0
"""A race must be over this long after Redis is back (or after its players gave up, if later)."""
HEALTHY_STALL_S = 0.5
"""The issue's goal for the longest stall of a race on a node that did not fail (a note names each beyond)."""
AOF_DOWN_S = 1.0
"""How long the killed Redis of ``aof-kill`` stays down before it is started again."""


# ------------------------------------------------------------------ the server under test
@dataclass
class Capabilities:
    """What the checkout under test knows: read from it, not assumed."""

    checkout: Path
    sentinel: bool
    replica_acks: bool
    join_id: bool

    @property
    def server(self) -> list[str]:
        if self.checkout == ROOT:
            return thieves_server_command()
        return [str(self.checkout / ".venv" / "bin" / "thieves-server")]

    def describe(self) -> str:
        return (f"{self.checkout} ({git_head(self.checkout)}): Sentinel {'yes' if self.sentinel else 'no'}, "
                f"--replica-acks {'yes' if self.replica_acks else 'no'}, "
                f"hello.join_id {'yes' if self.join_id else 'no'}")


def capabilities(checkout: Path) -> Capabilities:
    server = Capabilities(checkout, False, False, False).server
    text = subprocess.run([*server, "--help"], capture_output=True, text=True, cwd=checkout, timeout=60).stdout
    python = Path(server[0]).with_name("python") if checkout != ROOT else Path(sys.executable)
    probe = subprocess.run([str(python), "-c", "from shared import protocol as p; "
                            "print('join_id' in p.Hello.__struct_fields__)"],
                           capture_output=True, text=True, cwd=checkout, timeout=60).stdout.strip()
    return Capabilities(checkout, "--redis-sentinel" in text, "--replica-acks" in text, probe == "True")


def git_head(path: Path) -> str:
    done = subprocess.run(["git", "-C", str(path), "log", "-1", "--format=%h"], capture_output=True, text=True)
    return done.stdout.strip() or "?"


class Server(ServerProcess):
    """``thieves-server`` of the checkout under test (``ServerProcess`` runs this checkout's)."""

    def __init__(self, caps: Capabilities, redis_url: str | None, args: list[str], log_path: Path) -> None:
        super().__init__(redis_url, args=args, log_path=log_path)
        self.caps = caps

    @property
    def command(self) -> list[str]:
        return [*self.caps.server, *super().command[len(thieves_server_command()):]]


def bench_flags(args: argparse.Namespace, caps: Capabilities) -> list[str]:
    """The load benchmarks' server flags (no rate or creation limits, no solver filler), less the port."""
    flags = server_command(100_000.0)[3:]
    i = flags.index("--port")
    flags = flags[:i] + flags[i + 2:]
    if args.replica_acks and caps.replica_acks:
        flags += ["--replica-acks", args.replica_acks]
    return flags + ["--redis-wait", "120"]


# ------------------------------------------------------------------ deployments and their faults
def restartable(proc: subprocess.Popen[bytes]) -> list[str]:
    """The command line a process was started with (to start a killed node again as it was; not from /proc:
    redis-server rewrites its title there)."""
    return [str(a) for a in proc.args]  # type: ignore[union-attr]


class Fault:
    """One named fault on its own deployment: ``start``, ``inject`` (quick), ``heal`` (blocks until
    Redis serves again and the fault is over), ``read`` a race as stored, ``stop``."""

    name = ""
    t_fault = 0.0
    t_over = 0.0

    def __init__(self, args: argparse.Namespace, base: Path, rng: random.Random) -> None:
        self.args, self.base, self.rng = args, base, rng
        self.failed: str = "?"

    @staticmethod
    def cannot(caps: Capabilities) -> str | None:
        """Why this machine or checkout cannot run the fault, or None."""
        return None

    def start(self) -> None: ...

    def server_args(self, caps: Capabilities) -> tuple[str | None, list[str]]:
        raise NotImplementedError

    def node(self, race: str) -> str:
        return "redis"

    def choose(self, nodes: dict[str, int]) -> None:
        """Pick what fails, knowing how many measured races each node holds."""
        self.failed = "redis"

    def inject(self) -> None:
        raise NotImplementedError

    def heal(self) -> None:
        raise NotImplementedError

    def client(self) -> Any:
        raise NotImplementedError

    def read(self, race: str) -> Stored | None:
        k = Keys(race)
        client = self.client()
        try:
            meta = {a.decode(): b.decode() for a, b in client.hgetall(k.meta).items()}
            if not meta:
                return None
            logs = [[m.decode() for m in client.lrange(k.log(seat), 0, -1)] for seat in range(int(meta["players"]))]
            return Stored(meta.get("status", "?"), logs)
        finally:
            client.close()

    def status(self, race: str) -> str | None:
        client = self.client()
        try:
            value = client.hget(Keys(race).meta, "status")
            return value.decode() if value else None
        except redis.RedisError:
            return None
        finally:
            client.close()

    def stop(self) -> None: ...


class AofKill(Fault):
    name = "aof-kill"

    def start(self) -> None:
        self.redis = RedisProcess(self.base / "redis").start()

    def server_args(self, caps: Capabilities) -> tuple[str | None, list[str]]:
        return self.redis.url, []

    def inject(self) -> None:
        self.t_fault = time.monotonic()
        self.redis.kill()

    def heal(self) -> None:
        time.sleep(AOF_DOWN_S)
        self.redis.start()
        self.t_over = time.monotonic()

    def client(self) -> Any:
        return self.redis.client()

    def stop(self) -> None:
        self.redis.stop()


class ClusterFault(Fault):
    """3 masters + 3 replicas (tests/cluster_util.py), node timeout 1 s; races belong to their slot's master."""

    @staticmethod
    def cannot(caps: Capabilities) -> str | None:
        from cluster_util import ClusterError, find_redis_cli

        try:
            find_redis_cli(find_redis_server())
        except ClusterError as exc:
            return str(exc)
        return None

    def start(self) -> None:
        from cluster_util import LocalCluster

        self.cluster = LocalCluster(base_dir=self.base / "cluster", node_timeout_ms=1000, replicas=1).start()
        for port in self.cluster.ports:
            with redis.Redis(port=port, socket_timeout=5) as client:
                client.config_set("cluster-require-full-coverage", self.args.full_coverage)
        self.masters = {self.cluster.master_of_slot(slot) for slot in (0, 8000, 16383)}
        self._nodes: dict[str, str] = {}

    def server_args(self, caps: Capabilities) -> tuple[str | None, list[str]]:
        # a checkout that takes several start nodes is given them all, an older one the first
        url = ",".join(self.cluster.urls) if caps.sentinel else self.cluster.url
        return url, ["--redis-cluster", "yes"]

    def node(self, race: str) -> str:
        if race not in self._nodes:
            self._nodes[race] = str(self.cluster.master_of_slot(key_slot(Keys(race).meta.encode())))
        return self._nodes[race]

    def choose(self, nodes: dict[str, int]) -> None:
        """A master other than the first named (that is named-node-down's), holding measured races."""
        busy = [port for port in sorted(self.masters) if nodes.get(str(port)) and port != self.cluster.ports[0]]
        self.port = self.rng.choice(busy or sorted(self.masters - {self.cluster.ports[0]}))
        self.failed = str(self.port)

    def process(self) -> subprocess.Popen[bytes]:
        return self.cluster.processes[self.cluster.ports.index(self.port)]

    def client(self) -> Any:
        live = self.cluster.live_ports()
        return redis.RedisCluster(host="127.0.0.1", port=live[0], socket_timeout=5)

    def serving(self, ask: list[int]) -> set[int]:
        """The masters the nodes in ``ask`` say serve slots now."""
        out: set[int] = set()
        for port in ask:
            try:
                with redis.Redis(port=port, socket_timeout=1) as client:
                    out |= {int(row[2][1]) for row in client.execute_command("CLUSTER SLOTS")}
            except redis.RedisError:
                continue
        return out

    def wait_promoted(self, timeout: float = 60.0) -> None:
        """Until the other nodes no longer name the failed master as serving (its replica took over)."""
        others = [port for port in self.cluster.ports if port != self.port]
        deadline = time.monotonic() + timeout
        while self.port in self.serving(others) or not self.serving(others):
            if time.monotonic() > deadline:
                raise RuntimeError(f"the master on {self.port} was not failed over within {timeout} s")
            time.sleep(0.05)

    def wait_rejoined(self, timeout: float = 60.0) -> None:
        """Until the old master answers as a replica in sync, and every node sees the cluster ok."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                with redis.Redis(port=self.port, socket_timeout=1, decode_responses=True) as client:
                    info = client.info("replication")
                if info.get("role") == "slave" and info.get("master_link_status") == "up":
                    break
            except redis.RedisError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"the old master on {self.port} did not rejoin as a replica within {timeout} s")
            time.sleep(0.05)
        self.cluster.wait_ok(timeout)

    def stop(self) -> None:
        for proc in self.cluster.processes:  # a paused node would not hear the SIGTERM
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGCONT)
        self.cluster.stop()


class ClusterKill(ClusterFault):
    name = "cluster-kill"

    def inject(self) -> None:
        self.t_fault = time.monotonic()
        self.cluster.kill(self.port)

    def heal(self) -> None:
        self.cluster.wait_failed_over(self.port, timeout=60)
        self.t_over = time.monotonic()


class ClusterPause(ClusterFault):
    name = "cluster-pause"

    def inject(self) -> None:
        self.t_fault = time.monotonic()
        os.kill(self.process().pid, signal.SIGSTOP)

    def heal(self) -> None:
        self.wait_promoted()
        time.sleep(self.args.pause_extra)
        os.kill(self.process().pid, signal.SIGCONT)
        self.wait_rejoined()
        self.t_over = time.monotonic()


class NamedNodeDown(ClusterFault):
    name = "named-node-down"

    def choose(self, nodes: dict[str, int]) -> None:
        self.port = self.cluster.ports[0]
        self.failed = str(self.port)

    def inject(self) -> None:
        self.argv = restartable(self.process())
        self.t_fault = time.monotonic()
        self.cluster.kill(self.port)

    def heal(self) -> None:
        self.cluster.wait_failed_over(self.port, timeout=60)
        time.sleep(max(0.0, self.t_fault + self.args.down - time.monotonic()))
        self.cluster.processes[self.cluster.ports.index(self.port)] = subprocess.Popen(
            self.argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.wait_rejoined()
        self.t_over = time.monotonic()


class SentinelFailover(Fault):
    name = "sentinel-failover"

    @staticmethod
    def cannot(caps: Capabilities) -> str | None:
        return None if caps.sentinel else "the server under test has no --redis-sentinel"

    def start(self) -> None:
        from sentinel_util import LocalSentinels

        self.sentinels = LocalSentinels(base_dir=self.base / "sentinel").start()

    def server_args(self, caps: Capabilities) -> tuple[str | None, list[str]]:
        from sentinel_util import MASTER_NAME

        return None, ["--redis-sentinel", self.sentinels.option, "--redis-master", MASTER_NAME]

    def inject(self) -> None:
        self.t_fault = time.monotonic()
        self.sentinels.kill_master()

    def heal(self) -> None:
        self.sentinels.wait_promoted(timeout=60)
        self.t_over = time.monotonic()

    def client(self) -> Any:
        return redis.Redis(port=self.sentinels.master() or self.sentinels.replica_port, socket_timeout=5)

    def stop(self) -> None:
        self.sentinels.stop()


FAULTS: dict[str, type[Fault]] = {f.name: f for f in (AofKill, ClusterKill, ClusterPause, SentinelFailover,
                                                        NamedNodeDown)}


# ------------------------------------------------------------------ one round
@dataclass
class Race:
    id: str
    creator: str
    url: str
    players: list[Player]
    kind: str
    """``play`` (measured for stalls), ``quit`` (its players give up during the fault), ``late`` (joined
    during the fault, started after it)."""
    node: str = "redis"


LOG_SIGNS = {"tracebacks": "Traceback (most recent call last)", "never_retrieved": "Task exception was never retrieved",
             "move_conflicts": "event=move_conflict"}


async def one_round(fault: Fault, caps: Capabilities, args: argparse.Namespace) -> dict[str, Any]:
    await asyncio.to_thread(fault.start)
    servers: list[Server] = []
    tasks: list[asyncio.Task[None]] = []
    try:
        url, extra = fault.server_args(caps)
        flags = bench_flags(args, caps) + extra
        servers = [Server(caps, url, flags, fault.base / f"server-{i}.log") for i in range(args.servers)]
        await asyncio.gather(*(asyncio.to_thread(s.start, 120.0) for s in servers))
        races = await setup_races(fault, servers, args, caps.join_id)
        measured = {}
        for race in races:
            if race.kind == "play":
                measured[race.node] = measured.get(race.node, 0) + 1
        fault.choose(measured)
        early = [pl for race in races if race.kind != "late" for pl in race.players]
        tasks += [asyncio.create_task(pl.run()) for pl in early]
        await until_true(lambda: all(pl.token or pl.refused for pl in early), 30, "the players' welcomes")
        for race in races:
            if race.kind != "late":
                await start_race(race.url, race.creator, time.monotonic() + 30)
        await asyncio.sleep(args.before)

        fault.inject()
        late = [pl for race in races if race.kind == "late" for pl in race.players]
        quitters = [pl for race in races if race.kind == "quit" for pl in race.players]
        await asyncio.sleep(0.2)
        tasks += [asyncio.create_task(pl.run()) for pl in late]
        await asyncio.sleep(0.1)
        for pl in quitters:
            pl.stop.set()
        await asyncio.to_thread(fault.heal)

        settle = fault.t_over + END_WITHIN_S
        started = await asyncio.gather(*(start_late(race, settle) for race in races if race.kind == "late"))
        await asyncio.sleep(args.after)
        t_stop = time.monotonic()
        for pl in early + late:
            pl.stop.set()
        unended = await wait_ended(fault, races, t_stop)
        await asyncio.wait(tasks, timeout=5)
        return tally(fault, races, unended, t_stop, servers, started)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await asyncio.gather(*(asyncio.to_thread(s.close) for s in servers))
        await asyncio.to_thread(fault.stop)


async def start_late(race: Race, settle: float) -> str:
    """Start a lobby joined during the fault once each of its players has a seat or a refusal (or at
    ``settle``, if one is still trying then): each on its own, so that a lobby on the failed node does not
    hold up the others."""
    await until_true(lambda: all(pl.token or pl.refused for pl in race.players), settle - time.monotonic(), "")
    return await start_race(race.url, race.creator, max(settle, time.monotonic()) + END_WITHIN_S)


async def until_true(check: Any, timeout: float, what: str) -> bool:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            if what:
                raise RuntimeError(f"not within {timeout:g} s: {what}")
            return False
        await asyncio.sleep(0.05)
    return True


async def setup_races(fault: Fault, servers: list[Server], args: argparse.Namespace, join_ids: bool) -> list[Race]:
    """Create every race (before the fault), each on one server, its players spread over all of them."""
    rng = random.Random(args.seed)
    total = args.races + args.late
    deals = [rng.randrange(1, 1_000_000) for _ in range(total)]
    seconds = args.before + fault_seconds(fault.name, args) + END_WITHIN_S + args.after + 20
    moves = line_moves(total * args.players, args.pace, seconds)
    lines = await asyncio.to_thread(playouts, [(deal, args.seed * 1_000_003 + r * args.players + i, moves)
                                               for r, deal in enumerate(deals) for i in range(args.players)])
    quit_count = args.races // 3
    races = []
    for r, deal in enumerate(deals):
        base = servers[r % len(servers)].url
        created = await asyncio.to_thread(http, base + "/races", "POST", {
            "seats": args.players, "deal_source": "number", "deal": deal, "time_limit": 3600})
        rid = created["race"]["id"]
        kind = "quit" if r < quit_count else "play" if r < args.races else "late"
        players = [Player(rid, f"p{i}", servers[(r + i) % len(servers)].ws_url,
                          [p.decode_client(f).move for f in lines[r * args.players + i]],  # type: ignore[union-attr]
                          args.pace, join_ids=join_ids) for i in range(args.players)]
        races.append(Race(rid, created["creator_token"], base.replace("http://", "ws://") + "/ws", players, kind,
                          await asyncio.to_thread(fault.node, rid)))
    return races


def fault_seconds(name: str, args: argparse.Namespace) -> float:
    """About how long the fault lasts, to size the players' lines."""
    return {"named-node-down": args.down + 10, "cluster-pause": args.pause_extra + 10}.get(name, 10.0)


async def wait_ended(fault: Fault, races: list[Race], t_stop: float) -> list[str]:
    """The races not over by their deadline: 10 s after Redis was back for those whose players gave up
    during the fault, 10 s after the give-ups for the others."""
    pending = {race.id: (fault.t_over if race.kind == "quit" else t_stop) + END_WITHIN_S for race in races}
    late: list[str] = []
    while pending:
        for rid, deadline in list(pending.items()):
            if await asyncio.to_thread(fault.status, rid) == "finished":
                del pending[rid]
            elif time.monotonic() > deadline:
                late.append(rid)
                del pending[rid]
        await asyncio.sleep(0.2)
    return late


def tally(fault: Fault, races: list[Race], unended: list[str], t_stop: float, servers: list[Server],
          started: list[str]) -> dict[str, Any]:
    """The round's figures, read from Redis after everything settled."""
    out: dict[str, Any] = {"acked": 0, "lost": 0, "diverged": 0, "stranded": 0, "unended": len(unended),
                           "stall_failed_s": None, "stall_healthy_s": None, "regressed": 0, "halted": 0,
                           "notes": []}
    for race in races:
        stored = fault.read(race.id)
        v = verdict(race.players, stored, wanted_to_move=race.kind != "quit")
        out["acked"] += sum(len(pl.acked) for pl in race.players)
        out["lost"] += v.lost
        out["diverged"] += v.diverged
        out["stranded"] += v.stranded
        out["regressed"] += sum(pl.regressed for pl in race.players)
        out["halted"] += sum(pl.halted is not None for pl in race.players)
        out["notes"] += [f"{race.kind} race {race.id} on {race.node}: {note}" for note in v.notes]
        out["notes"] += [f"{race.kind} race {race.id}: {pl.name} halted: {pl.halted}" for pl in race.players
                         if pl.halted]
        if race.kind == "play":
            stall, since = max(longest_gap([a.at for a in pl.acked], fault.t_fault, fault.t_over, t_stop)
                               for pl in race.players)
            key = "stall_failed_s" if race.node == fault.failed else "stall_healthy_s"
            out[key] = max(out[key] or 0.0, stall)
            if stall > HEALTHY_STALL_S and race.node != fault.failed:
                out["notes"].append(f"race {race.id} on healthy node {race.node}: stalled {stall:.2f} s from "
                                    f"{since - fault.t_fault:+.2f} s after the fault")
    out["notes"] += [f"{race.kind} race {race.id} on {race.node}: not ended" for race in races if race.id in unended]
    out["notes"] += [f"late race start: {s}" for s in started if s != "started"]
    logs = "".join(s.logs() for s in servers)
    out.update({key: logs.count(sign) for key, sign in LOG_SIGNS.items()})
    out["fault_s"] = fault.t_over - fault.t_fault
    return out


# ------------------------------------------------------------------ report
COLUMNS = [("acked", "acked"), ("lost", "lost"), ("diverged", "diverged"), ("stranded", "stranded"),
           ("unended", "unended"), ("stall_failed_s", "stall failed"), ("stall_healthy_s", "stall healthy"),
           ("fault_s", "fault s"), ("tracebacks", "tracebacks"), ("never_retrieved", "never retr."),
           ("move_conflicts", "conflicts")]
MAXED = {"stall_failed_s", "stall_healthy_s", "fault_s"}


def summed(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts added over the rounds, stalls and fault lengths their worst."""
    out: dict[str, Any] = {}
    for key, _ in COLUMNS:
        values = [r[key] for r in rounds if r.get(key) is not None]
        out[key] = (max(values) if key in MAXED else sum(values)) if values else None
    return out


def cell(key: str, value: Any) -> str:
    if value is None:
        return "n/a"
    return f"{value:.2f}" if key in MAXED else str(value)


def table(results: dict[str, list[dict[str, Any]]]) -> None:
    widths = [max(len(title), 7) for _, title in COLUMNS]
    print(f"{'fault':18} {'rounds':>6} " + " ".join(f"{title:>{w}}" for (_, title), w in zip(COLUMNS, widths)))
    for name, rounds in results.items():
        total = summed(rounds)
        print(f"{name:18} {len(rounds):>6} " + " ".join(f"{cell(key, total[key]):>{w}}"
                                                         for (key, _), w in zip(COLUMNS, widths)))


async def main_async(args: argparse.Namespace, caps: Capabilities, names: list[str]) -> dict[str, Any]:
    results: dict[str, list[dict[str, Any]]] = {}
    for name in names:
        results[name] = []
        for n in range(1, args.rounds + 1):
            with tempfile.TemporaryDirectory(prefix=f"thieves-{name}-") as base:
                fault = FAULTS[name](args, Path(base), random.Random(args.seed * 100 + n))
                figures = await one_round(fault, caps, args)
                if args.logs:
                    keep = args.logs / f"{name}-{n}"
                    keep.mkdir(parents=True, exist_ok=True)
                    for log in Path(base).glob("server-*.log"):
                        log.rename(keep / log.name)
            results[name].append(figures)
            print(f"{name} round {n}/{args.rounds}: " + ", ".join(f"{title} {cell(key, figures[key])}"
                                                                  for key, title in COLUMNS)
                  + f" (failed node {fault.failed}); load {os.getloadavg()[0]:.2f}", flush=True)
            for note in figures["notes"][:args.notes]:
                print(f"  {note}")
            if len(figures["notes"]) > args.notes:
                print(f"  ... and {len(figures['notes']) - args.notes} more")
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fault", action="append", choices=sorted(FAULTS),
                        help="a fault to run (again for several; default: every one the machine and server can run)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of each fault, each on a fresh deployment")
    parser.add_argument("--races", type=int, default=9, help="races playing through the fault (a third give up in it)")
    parser.add_argument("--late", type=int, default=3, help="lobbies whose players join during the fault")
    parser.add_argument("--players", type=int, default=2, help="players per race")
    parser.add_argument("--servers", type=int, default=2, help="server processes sharing the Redis")
    parser.add_argument("--pace", type=float, default=10.0, help="moves per second per player")
    parser.add_argument("--before", type=float, default=2.0, help="seconds of play before the fault")
    parser.add_argument("--after", type=float, default=4.0, help="seconds of play after Redis is back")
    parser.add_argument("--down", type=float, default=60.0, help="seconds the named node stays down (named-node-down)")
    parser.add_argument("--pause-extra", type=float, default=4.0,
                        help="seconds a paused master stays paused after its replica was promoted (cluster-pause)")
    parser.add_argument("--full-coverage", choices=("yes", "no"), default="yes",
                        help="the cluster nodes' cluster-require-full-coverage (Redis's default yes: every node "
                        "refuses every command while a failed master's slots are not served yet)")
    parser.add_argument("--logs", type=Path, help="keep each round's server logs in this directory")
    parser.add_argument("--replica-acks", default="",
                        help="pass --replica-acks this to servers that know it (default: the server's default)")
    parser.add_argument("--checkout", type=Path, default=ROOT,
                        help="the checkout whose server is tested (its .venv/bin/thieves-server; default: this one)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--notes", type=int, default=8, help="notes printed per round (what was lost, stranded, ...)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON on the last line")
    args = parser.parse_args()
    caps = capabilities(args.checkout.resolve())
    print("command: " + " ".join([Path(sys.executable).name, *sys.argv]))
    print(f"server under test: {caps.describe()}")
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores; "
          f"redis-server {find_redis_server()}", flush=True)
    names = args.fault or list(FAULTS)
    runnable = []
    for name in names:
        reason = FAULTS[name].cannot(caps)
        if reason:
            print(f"{name}: skipped: {reason}")
        else:
            runnable.append(name)
    from server.main import loop_factory

    with asyncio.Runner(loop_factory=loop_factory()) as runner:
        results = runner.run(main_async(args, caps, runnable))
    print(f"load average after {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    table(results)
    if args.json:
        print(json.dumps({name: {"rounds": rounds, "total": summed(rounds)} for name, rounds in results.items()}))


if __name__ == "__main__":
    main()
