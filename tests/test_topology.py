"""The server follows Redis's topology (issue 37): a Sentinel promotion, a cluster master's failover, a
cluster start node that is down. Real processes throughout: redis-server (Sentinels, a cluster with
replicas) and ``thieves-server`` as its console script, faults by SIGKILL; every wait has a deadline.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

import msgspec
import pytest
import redis
from cluster_util import LocalCluster
from process_util import RedisProcess, ServerProcess, thieves_server_command
from redis_util import PROCESS_ARGS, Client, create_race, eventually, start_race
from sentinel_util import MASTER_NAME, LocalSentinels

from server.ops.embedded import free_port
from server.store import UNAVAILABLE, redis_client
from server.store.keys import KEYS_REPLACED
from server.store.pubsub import Subscriber
from shared import protocol as p

WIN = json.loads((Path(__file__).parent / "data" / "race_win_line.json").read_text())
CLUSTER_ARGS = [*PROCESS_ARGS, "--redis-cluster", "yes"]


async def _race_played(server: ServerProcess) -> bool:
    """A new race created, joined (``hello``), started and its first move acknowledged; False where any
    step is refused (Redis not back yet, as the server sees it)."""
    status, body = await asyncio.to_thread(server.http, "POST", "/races",
                                           {"seats": 1, "deal_source": "number", "deal": WIN["deal"]})
    if status != 201:
        return False
    created = msgspec.convert(body, p.Created)
    ann = await Client.connect(server)  # type: ignore[arg-type]
    try:
        await ann.send(p.Hello(protocol=p.PROTOCOL_VERSION, race=created.race.id, role="player", name="ann"))
        answer = await ann.recv(timeout=10)
        if not isinstance(answer, p.Welcome):
            assert isinstance(answer, p.Error) and answer.code == "unavailable", answer
            return False
        await start_race(server, created.creator_token, [ann])
        ack = await ann.move(WIN["moves"][0], seq=1)
        assert isinstance(ack, p.Ack), ack
        return True
    finally:
        await ann.close()


def _holds_pubsub(port: int) -> bool:
    with redis.Redis(port=port, socket_timeout=2) as client:
        return bool(client.execute_command("CLIENT", "LIST", "TYPE", "pubsub"))


def _healthy(server: ServerProcess) -> bool:
    answer = server.health()
    return answer is not None and answer[0] == 200


async def _serves(server: ServerProcess, then: int = 3) -> None:
    """A race is played end to end within the deadline, and then ``then`` more in a row."""
    await eventually(lambda: _race_played(server), "a new race created, joined and played")
    for _ in range(then):
        assert await _race_played(server), server.log_tail()


# -- Sentinel: one Redis with a replica


async def test_a_server_behind_sentinel_follows_a_promotion_without_a_restart(tmp_path: Path) -> None:
    with LocalSentinels() as sentinels:
        dead = f"127.0.0.1:{free_port()}"  # a Sentinel named first that does not answer: the others do
        server = ServerProcess(None, args=[*PROCESS_ARGS, "--redis-sentinel", f"{dead},{sentinels.option}",
                                           "--redis-master", MASTER_NAME], log_path=tmp_path / "server.log")
        try:
            await asyncio.to_thread(server.start)
            pid = server.pid
            await _serves(server, then=0)
            # A race on before the failover, a spectator on it: its notes must reach the spectator after.
            created = await create_race(server, seats=1, deal_source="number", deal=WIN["deal"])
            ann = await Client.connect(server)  # type: ignore[arg-type]
            welcome = await ann.hello(created.race.id, "ann")
            await start_race(server, created.creator_token, [ann])
            # A move: the move batcher's own connection is open to the master that is killed.
            assert isinstance(await ann.move(WIN["moves"][0], seq=1), p.Ack)

            sentinels.kill_master()
            await asyncio.to_thread(sentinels.wait_promoted)

            await eventually(lambda: _healthy(server), "/health back to 200 by itself")
            await _serves(server)
            again = await Client.connect(server)  # type: ignore[arg-type]
            back = await again.hello(created.race.id, token=welcome.token)
            assert back.seq == 1, "the move acknowledged before the failover is kept"
            ack = await again.move(WIN["moves"][1], seq=2)
            assert isinstance(ack, p.Ack), ack
            assert server.pid == pid and server.running, "the same process, not restarted"
            await eventually(lambda: _holds_pubsub(sentinels.replica_port), "the subscription on the new master")
            await again.close()
        finally:
            server.close()


def test_sentinel_and_a_url_together_are_one_clear_line() -> None:
    done = subprocess.run([*thieves_server_command(), "--port", "0", "--redis-url", "redis://127.0.0.1:1/0",
                           "--redis-sentinel", "127.0.0.1:26379", "--redis-master", "m"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "--redis-url and --redis-sentinel both name the Redis" in done.stderr.strip().splitlines()[-1]


# -- Redis Cluster with replicas


def _keyslot(cluster: LocalCluster, key: str) -> int:
    with redis.Redis(port=cluster.ports[0], socket_timeout=2) as client:
        return int(client.execute_command("CLUSTER", "KEYSLOT", key))


def _subscribed_on(cluster: LocalCluster) -> list[int]:
    """The nodes that hold a pub/sub connection (the server's subscription: the test holds none)."""
    return [port for port in cluster.live_ports() if _holds_pubsub(port)]


async def test_on_a_cluster_the_named_node_killed_new_hellos_succeed_after_the_failover(tmp_path: Path) -> None:
    with LocalCluster(replicas=1, node_timeout_ms=1000) as cluster:
        # The node named at start serves the account channel's slot: where redis-py put a process's pub/sub
        # connection. Killed with it: whichever node holds the subscription now.
        named = cluster.master_of_slot(_keyslot(cluster, KEYS_REPLACED))
        server = ServerProcess(f"redis://127.0.0.1:{named}", args=CLUSTER_ARGS, log_path=tmp_path / "server.log")
        try:
            await asyncio.to_thread(server.start)
            await _serves(server, then=0)
            subscribed = _subscribed_on(cluster)
            assert len(subscribed) == 1, subscribed
            # The named node, then the subscription's if another (one failover at a time: a cluster of three
            # fails over only while a majority of its masters is alive).
            for port in dict.fromkeys([named, subscribed[0]]):
                cluster.kill(port)
                await asyncio.to_thread(cluster.wait_failed_over, port)
                await _serves(server)
                await eventually(lambda: _healthy(server), "/health back to 200 by itself")
            assert server.events("pubsub_reconnected"), "the subscription moved to a live node"
            assert _subscribed_on(cluster) not in ([], subscribed)
        finally:
            server.close()


async def test_a_server_starts_on_a_cluster_while_its_first_named_node_is_down(tmp_path: Path) -> None:
    with LocalCluster(replicas=1, node_timeout_ms=1000) as cluster:
        dead = cluster.master_of_slot(_keyslot(cluster, KEYS_REPLACED))
        alive = next(port for port in cluster.ports if port != dead)
        cluster.kill(dead)
        await asyncio.to_thread(cluster.wait_failed_over, dead)
        server = ServerProcess(f"redis://127.0.0.1:{dead},redis://127.0.0.1:{alive}", args=CLUSTER_ARGS,
                               log_path=tmp_path / "server.log")
        try:
            await asyncio.to_thread(server.start)
            await _serves(server)
        finally:
            server.close()


@pytest.mark.parametrize("nodes", [1, 2])
def test_a_cluster_none_of_whose_named_nodes_answers_is_waited_for_then_one_line(nodes: int) -> None:
    urls = ",".join(f"redis://127.0.0.1:{free_port()}" for _ in range(nodes))
    done = subprocess.run([*thieves_server_command(), "--port", "0", "--redis-url", urls, "--redis-cluster", "yes",
                           "--redis-wait", "0.5"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert "did not answer within 0.5 s" in done.stderr.strip().splitlines()[-1]
    assert "event=redis_unreachable" in done.stderr, "each retry is logged"


@pytest.mark.parametrize("value", ["127.0.0.1", "127.0.0.1:x", ":26379"])
def test_a_malformed_sentinel_is_one_clear_line(value: str) -> None:
    from server.config import parse_args

    with pytest.raises(ValueError, match="--redis-sentinel is host:port"):
        parse_args(["--redis-sentinel", value, "--redis-master", "m"], environ={})


# -- one process's subscription while its Redis comes back


async def test_concurrent_subscribes_while_the_subscription_reconnects_raise_nothing_but_unavailable(
        tmp_path: Path) -> None:
    """Hellos of many races at once, each subscribing, while Redis has just come back and the subscription's
    connection is reconnecting: each is answered or ``unavailable``, never another error (which a hello
    answered ``internal``: redis-py's pub/sub connection read by two tasks at once)."""
    store = RedisProcess(tmp_path / "redis").start()
    redis_ = redis_client(store.url)
    subscriber = Subscriber(redis_, lambda race, note: None, instance="test")
    await subscriber.listen_to_accounts()
    reading = asyncio.create_task(subscriber.run())
    others: list[BaseException] = []
    try:
        for attempt in range(12):
            store.kill()
            await asyncio.sleep(0.3 + 0.05 * attempt)  # (varies where the reader is when Redis returns)
            store.start()
            answers = await asyncio.gather(*(subscriber.subscribe(f"r{attempt}x{i}", 0) for i in range(30)),
                                           return_exceptions=True)
            others += [a for a in answers if isinstance(a, BaseException) and not isinstance(a, UNAVAILABLE)]
        assert others == []
    finally:
        reading.cancel()
        await subscriber.close()
        await redis_.aclose()
        store.stop()
