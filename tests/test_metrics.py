"""GET /metrics: Prometheus text whose figures follow what really happened on the socket."""

from __future__ import annotations

import asyncio
import re
import urllib.request

from redis_util import Client, LiveServer, create_race, start_race

from shared import protocol as p

SAMPLE = re.compile(r'^([a-z_]+)(\{[^}]*\})? (-?[0-9.e+]+|\+Inf)$')


async def scrape(server: LiveServer) -> tuple[str, dict[str, float]]:
    def get() -> tuple[str, str]:
        with urllib.request.urlopen(server.url + "/metrics", timeout=5) as resp:
            return resp.headers["content-type"], resp.read().decode()

    content_type, text = await asyncio.to_thread(get)
    assert content_type.startswith("text/plain") and "version=0.0.4" in content_type
    samples: dict[str, float] = {}
    for line in text.splitlines():
        if line.startswith("#"):
            assert re.match(r"^# (HELP|TYPE) [a-z_]+ .+$", line), line
            continue
        m = SAMPLE.match(line)
        assert m, f"not an exposition line: {line!r}"
        samples[m.group(1) + (m.group(2) or "")] = float(m.group(3))
    return text, samples


async def test_metrics_count_connections_moves_rejections_fan_out_and_redis_time(server: LiveServer) -> None:
    _, before = await scrape(server)
    assert before["thieves_connections"] == 0 and before["thieves_redis_up"] == 1
    created = await create_race(server, seats=2, deal_source="number", deal=2)
    ann, bob = await Client.connect(server), await Client.connect(server)
    await ann.hello(created.race.id, "ann")
    await bob.hello(created.race.id, "bob")
    watcher = await Client.connect(server)
    await watcher.hello(created.race.id, role="spectator")
    await start_race(server, created.creator_token, [ann, bob])
    for _ in range(3):
        assert isinstance(await ann.move("S"), p.Ack)
    assert isinstance(await bob.move("aa"), p.Reject)
    assert isinstance(await bob.move("zz9"), p.Reject)
    while not isinstance(await watcher.recv(), p.Progress):  # its countdown may come first
        pass

    text, m = await scrape(server)
    assert "# TYPE thieves_redis_seconds histogram" in text
    assert m["thieves_connections"] == 3
    assert m["thieves_races_here"] == 1 and m["thieves_races_active"] >= 1
    assert m["thieves_connections_opened_total"] >= 4  # the three and the starter
    assert m["thieves_moves_accepted_total"] == 3
    assert m['thieves_moves_rejected_total{reason="same_column"}'] == 1
    assert m['thieves_moves_rejected_total{reason="bad_move"}'] == 1
    assert m['thieves_frames_sent_total{type="ack"}'] == 3
    assert m['thieves_frames_sent_total{type="countdown"}'] == 4  # two players, the spectator and the starter
    assert m['thieves_frames_sent_total{type="progress"}'] >= 1
    moves = m['thieves_redis_seconds_count{op="moves"}']
    assert moves >= 1 and m['thieves_redis_seconds_bucket{op="moves",le="+Inf"}'] == moves
    assert m['thieves_redis_seconds_sum{op="moves"}'] > 0
    for c in (ann, bob, watcher):
        await c.close()
