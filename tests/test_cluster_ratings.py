"""Accounts' results on a real local 3-master Redis Cluster (tests/cluster_util.py): a rated race played
through two servers is applied once (the race's plan, each account's part and each leaderboard in their
own slots), and the profile, history and leaderboard reads (a cluster pipeline over the accounts' slots)
answer through either server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import AsyncIterator, Iterator

import pytest
import redis
from cluster_util import LocalCluster
from redis_util import Client, LiveServer, create_race, eventually, live_server, register, start_race

from server.store.keys import RESULTS_PENDING, AccountKeys, leaderboard_key, rating_plan_key
from shared import protocol as p

WIN = json.loads((Path(__file__).parent / "data" / "race_win_line.json").read_text())


def _slots(cluster: LocalCluster, keys: list[str]) -> set[int]:
    with redis.RedisCluster.from_url(cluster.url) as client:
        return {client.keyslot(key) for key in keys}


async def test_rated_races_on_a_cluster(servers: tuple[LiveServer, LiveServer], cluster: LocalCluster) -> None:
    a, b = servers
    names = ("Ann", "Bob", "Cy", "Dee")
    keys = {name: await register(a, name) for name in names}
    # The accounts, the race's plan and the leaderboard live in different slots (the point of the test).
    assert len(_slots(cluster, [AccountKeys(n.lower()).main for n in names])) == len(names)
    races = []
    for round_ in range(3):
        created = await create_race(a, seats=4, rated=True, deal_source="number", deal=WIN["deal"])
        race = created.race.id
        races.append(race)
        players = [await Client.connect(a if i % 2 else b) for i in range(4)]
        for client, name in zip(players, names):
            await client.hello(race, key=keys[name])
        await start_race(a, created.creator_token, players)
        for seat, client in enumerate(players):  # ann 3 cards home, bob 2, cy 1, dee 0; all give up
            for text in WIN["moves"][:2 * (3 - seat)]:
                assert isinstance(await client.move(text), p.Ack)
        for client in players:
            await client.give_up()
        res = (await players[0].expect(p.Finished)).results
        assert [s.account for s in res.standings] == ["ann", "bob", "cy", "dee"], res.standings
        for client in players:
            await client.close()
    assert len(_slots(cluster, [rating_plan_key(races[0]), leaderboard_key("forty-thieves"),
                                AccountKeys("ann").main])) == 3

    async def all_applied() -> bool:
        with redis.RedisCluster.from_url(cluster.url) as client:
            return client.zcard(RESULTS_PENDING) == 0 and client.hget(
                AccountKeys("dee").main, "v:forty-thieves:rated") == b"3"
    await eventually(all_applied, "the three races to reach every account")
    for race in races:  # again, through the other server: nothing changes
        assert (await b.results.apply(race)).value == "applied"  # type: ignore[union-attr]

    status, board = await b.http("GET", "/leaderboard?variant=forty-thieves")
    assert status == 200 and [line["name"] for line in board["players"]] == ["Ann", "Bob", "Cy", "Dee"]
    assert all(line["rated_races"] == 3 for line in board["players"])
    status, profile = await a.http("GET", "/players/DEE")
    assert status == 200 and profile["races"] == 3 and profile["variants"]["forty-thieves"]["rated_races"] == 3
    pages, before = [], ""
    for _ in range(3):
        status, page = await b.http("GET", f"/players/ann/races?limit=1{before}")
        assert status == 200, page
        pages.append([e["race"] for e in page["races"]])
        before = f"&before={page['next']}" if page["next"] else ""
    assert pages == [[races[2]], [races[1]], [races[0]]] and before == ""
    status, missing = await a.http("GET", "/players/nobody")
    assert (status, missing["code"]) == (404, "player_not_found")
