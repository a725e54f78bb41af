"""Faults with real processes: the server SIGKILLed mid-race, Redis killed and back, Redis late at start.

``thieves-server`` runs as its console script (tests/process_util.py) and
Redis as a private redis-server with an append-only file, so a kill is a
real kill: no shutdown code runs. The promise under test: nothing a player
was told is done vanishes, nothing is applied twice or by half, and play
goes on.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import threading
import urllib.request
from pathlib import Path
from typing import Any

import redis
from process_util import RedisProcess, ServerProcess, thieves_server_command
from redis_util import PROCESS_ARGS, Client, create_race, read_until_version, start_race

from server.race import rules as races
from server.ops.embedded import free_port
from server.store import Keys, RaceMeta, decode_line
from shared import protocol as p
from shared.record import GameRecord, replay

WIN = json.loads((Path(__file__).parent / "data" / "race_win_line.json").read_text())
ARGS = PROCESS_ARGS


async def http(server: ServerProcess, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    return await asyncio.to_thread(server.http, method, path, body)


def assert_consistent(client: redis.Redis, race: str) -> None:
    """Every stored figure of every player agrees with its move log, and the history with the version.

    A half-applied move would show as a log one longer than ``n``, a
    progress line behind the player hash, or a version without its event.
    """
    k = Keys(race)
    meta = {a.decode(): b.decode() for a, b in client.hgetall(k.meta).items()}
    last = client.xrevrange(k.history, count=1)
    assert last and int(last[0][0].split(b"-")[0]) == int(meta["version"])
    for seat in range(int(meta["players"])):
        player = {a.decode(): b.decode() for a, b in client.hgetall(k.player(seat)).items()}
        log = [m.decode() for m in client.lrange(k.log(seat), 0, -1)]
        game = replay(GameRecord(meta["variant"], int(meta["deal"]), tuple(log))).game
        assert int(player["n"]) == len(log)
        assert int(player["moves"]) == game.move_count and int(player["home"]) == game.cards_home
        line = decode_line(seat, client.hget(k.progress, seat))
        assert (line.home, line.moves, line.status) == (int(player["home"]), int(player["moves"]), player["status"])


async def test_server_sigkilled_mid_race_players_resume_exactly_and_finish(redis_url: str, tmp_path: Path) -> None:
    server = ServerProcess(redis_url, args=[*ARGS, "--presence-lease", "1"], log_path=tmp_path / "server.ops.log")
    await asyncio.to_thread(server.start)
    try:
        created = await create_race(server, seats=2, deal_source="number", deal=WIN["deal"])
        race = created.race.id
        ann, bob = await Client.connect(server), await Client.connect(server)  # type: ignore[arg-type]
        w_ann, w_bob = await ann.hello(race, "ann"), await bob.hello(race, "bob")
        await start_race(server, created.creator_token, [ann, bob])
        for text in WIN["moves"][:10]:
            assert isinstance(await ann.move(text), p.Ack)
        for text in WIN["moves"][:5]:
            assert isinstance(await bob.move(text), p.Ack)
        with redis.Redis.from_url(redis_url) as client:
            await read_until_version(ann, int(client.hget(Keys(race).meta, "version")))

        await ann.send(p.Move(seq=11, move=WIN["moves"][10]))  # in flight when the server dies
        assert server.kill() == -9
        await asyncio.to_thread(server.restart)

        ann = await Client.connect(server, ann.table)  # type: ignore[arg-type]
        welcome = await ann.hello(race, token=w_ann.token, last_version=ann.table.version)
        assert welcome.seat == 0 and welcome.resumed and welcome.seq in (10, 11)
        played = WIN["moves"][: welcome.seq]
        expected = races.load_game(_meta(redis_url, race), played)
        assert welcome.view == p.View.from_player_view(expected.view()), "the board as last acknowledged"
        resent = await ann.move(WIN["moves"][10], seq=11)
        assert isinstance(resent, p.Ack) and resent.duplicate == (welcome.seq == 11)

        bob = await Client.connect(server)  # type: ignore[arg-type]
        w_bob2 = await bob.hello(race, token=w_bob.token, last_version=w_bob.version)
        assert w_bob2.seq == 5 and w_bob2.resumed
        missed_start = await bob.recv()  # bob's last version was from the lobby: the start is replayed
        assert isinstance(missed_start, p.Countdown) and missed_start.view == w_bob2.view
        assert missed_start.view is not None and missed_start.view.moves == 5

        with redis.Redis.from_url(redis_url) as client:
            assert [m.decode() for m in client.lrange(Keys(race).log(0), 0, -1)] == WIN["moves"][:11]
            # The dead process's leases run out: each player counts exactly its one live connection.
            for _ in range(60):
                online = [int(client.hget(Keys(race).player(s), "online")) for s in (0, 1)]
                if online == [1, 1]:
                    break
                await asyncio.sleep(0.1)
            assert online == [1, 1]
            assert_consistent(client, race)

        for seq, text in enumerate(WIN["moves"][11:], start=12):
            ack = await ann.move(text, seq=seq)
            assert isinstance(ack, p.Ack), ack
        assert ack.status == "finished"
        await bob.give_up()
        res = (await bob.expect(p.Finished)).results
        assert [(s.name, s.status) for s in res.standings] == [("ann", "finished"), ("bob", "gave_up")]
        assert res.records[0].moves == WIN["moves"] and res.records[1].moves == WIN["moves"][:5]
        for rec in res.records:
            assert replay(GameRecord("forty-thieves", res.deal, tuple(rec.moves))).game.position() == rec.position
        for c in (ann, bob):
            await c.close()
    finally:
        server.close()


def _get_text(url: str) -> str:
    with urllib.request.urlopen(url, timeout=5) as resp:
        return resp.read().decode()


def _meta(redis_url: str, race: str) -> Any:
    with redis.Redis.from_url(redis_url) as client:
        return RaceMeta.from_hash(client.hgetall(Keys(race).meta))


async def test_redis_killed_and_restarted_play_resumes_without_a_half_applied_move(tmp_path: Path) -> None:
    store = RedisProcess(tmp_path / "redis").start()
    server = ServerProcess(store.url, args=ARGS, log_path=tmp_path / "server.ops.log")
    try:
        await asyncio.to_thread(server.start)
        created = await create_race(server, seats=1, deal_source="number", deal=WIN["deal"])
        race = created.race.id
        ann = await Client.connect(server)  # type: ignore[arg-type]
        w = await ann.hello(race, "ann")
        await start_race(server, created.creator_token, [ann])
        for seq, text in enumerate(WIN["moves"][:5], start=1):
            assert isinstance(await ann.move(text, seq=seq), p.Ack)

        # A burst of moves in flight while Redis is SIGKILLed.
        burst = list(enumerate(WIN["moves"][5:45], start=6))
        for seq, text in burst:
            await ann.send(p.Move(seq=seq, move=text))
        answers: dict[int, p.Ack | p.Reject] = {}
        while len(answers) < 3:  # kill it once the first answers are out, the rest still queued
            msg = await ann.recv()
            if isinstance(msg, (p.Ack, p.Reject)):
                answers[msg.seq] = msg
        store.kill()
        while len(answers) < len(burst):
            msg = await ann.recv()
            if isinstance(msg, (p.Ack, p.Reject)):
                answers[msg.seq] = msg
        acked = [seq for seq, msg in answers.items() if isinstance(msg, p.Ack)]
        refused = {msg.reason for msg in answers.values() if isinstance(msg, p.Reject)}
        assert len(acked) >= 3 and refused == {"unavailable"}, (len(acked), refused)

        rej = await ann.move("S", seq=100)
        assert isinstance(rej, p.Reject) and rej.reason == "unavailable"
        status, body = await http(server, "GET", "/health")
        assert status == 503 and body["redis"] is False
        metrics = await asyncio.to_thread(_get_text, server.url + "/metrics")
        assert "thieves_redis_up 0" in metrics
        late = await Client.connect(server)  # type: ignore[arg-type]
        await late.send(p.Hello(protocol=p.PROTOCOL_VERSION, race=race, role="spectator"))
        assert (await late.error()).code == "unavailable"
        assert await late.closed() == p.CloseCode.TRY_AGAIN_LATER

        store.start()  # same port and append-only file
        for _ in range(100):
            status, _ = await http(server, "GET", "/health")
            if status == 200:
                break
            await asyncio.sleep(0.1)
        assert status == 200, "the server reconnects by itself"

        with store.client() as client:
            log = [m.decode() for m in client.lrange(Keys(race).log(0), 0, -1)]
            assert log == WIN["moves"][: len(log)], "the stored log is a prefix of what was sent, in order"
            assert len(log) >= 5 + len(acked), "every acknowledged move survived the kill"
            assert_consistent(client, race)

        # The client learns where it stands and resends the rest with the same seqs.
        ann2 = await Client.connect(server)  # type: ignore[arg-type]
        welcome = await ann2.hello(race, token=w.token)
        assert welcome.seq == len(log)
        for seq, text in enumerate(WIN["moves"][welcome.seq:], start=welcome.seq + 1):
            ack = await ann2.move(text, seq=seq)
            assert isinstance(ack, p.Ack) and not ack.duplicate, ack
        assert ack.status == "finished"
        res = (await ann2.expect(p.Finished)).results
        assert res.records[0].moves == WIN["moves"]
        with store.client() as client:
            assert_consistent(client, race)
        for c in (ann, ann2):
            await c.close()
    finally:
        server.close()
        store.stop()


def test_unreachable_redis_at_start_is_one_clear_line_and_exit_1() -> None:
    url = f"redis://127.0.0.1:{free_port()}/0"
    done = subprocess.run([*thieves_server_command(), "--port", "0", "--redis-url", url, "--redis-wait", "0.5"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("thieves-server: Redis at") and "did not answer within 0.5 s" in last
    assert "event=redis_unreachable" in done.stderr, "each retry is logged"


def test_a_server_started_before_its_redis_waits_for_it(tmp_path: Path) -> None:
    store = RedisProcess(tmp_path / "redis")
    server = ServerProcess(store.url, args=["--redis-wait", "30"], log_path=tmp_path / "server.ops.log")
    errors: list[BaseException] = []

    def run() -> None:
        try:
            server.start(timeout=40)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    try:
        for _ in range(200):  # until the server has tried and missed at least once
            if server.events("redis_unreachable"):
                break
            threading.Event().wait(0.05)
        assert server.events("redis_unreachable")
        store.start()
        thread.join(60)
        assert not errors, errors
        health = server.health()
        assert health is not None and health[0] == 200
    finally:
        thread.join(60)
        server.close()
        store.stop()

