"""A rated race from registration to the leaderboard, over real sockets: the issue's example (giving up
at 1/104 after two moves ranks below playing on to the time limit with 1/104) decides the ratings."""

from __future__ import annotations

import json
from pathlib import Path

from redis_util import Client, LiveServer, create_short_race, eventually, register, start_race

from server.accounts import ratings
from shared import protocol as p

WIN = json.loads((Path(__file__).parent / "data" / "race_win_line.json").read_text())


async def test_a_rated_race_updates_history_profile_and_leaderboard_once(server: LiveServer) -> None:
    keys = {name: await register(server, name) for name in ("Ann", "Bob", "Cy")}
    created = await create_short_race(server, seats=3, rated=True, time_limit=2, deal_source="number",
                                      deal=WIN["deal"])
    race = created.race.id
    ann, bob, cy = players = [await Client.connect(server) for _ in range(3)]
    for client, name in zip(players, keys):
        await client.hello(race, key=keys[name])
    await start_race(server, created.creator_token, players)
    for text in WIN["moves"][:2]:  # one card home, bob first...
        assert isinstance(await bob.move(text), p.Ack)
    await bob.give_up()  # ...and out after two moves
    for text in WIN["moves"][:2]:  # ann gets there later and plays on to the time limit
        assert isinstance(await ann.move(text), p.Ack)
    assert isinstance(await cy.move("S"), p.Ack)
    res = (await ann.expect(p.Finished, timeout=20)).results
    assert [(s.account, s.status, s.home) for s in res.standings] == [
        ("ann", "racing", 1), ("bob", "gave_up", 1), ("cy", "racing", 0)]

    async def applied() -> bool:
        status, body = await server.http("GET", "/players/cy")
        return status == 200 and body["races"] == 1
    await eventually(applied, "the end to reach the accounts")
    status, board = await server.http("GET", "/leaderboard")
    assert status == 200 and [line["name"] for line in board["players"]] == ["Ann", "Bob", "Cy"]
    assert board["players"][0]["rating"] > 1000 > board["players"][2]["rating"]
    status, history = await server.http("GET", "/players/bob/races")
    entry = history["races"][0]
    assert (entry["race"], entry["code"], entry["place"], entry["players"], entry["status"], entry["rated"]) == (
        race, created.race.code, 2, 3, "gave_up", True)
    assert entry["rating_before"] == 1000
    status, profile = await server.http("GET", "/players/Ann")
    forty = profile["variants"]["forty-thieves"]
    assert (profile["races"], profile["wins"], forty["rated_races"], forty["best_ms"]) == (1, 0, 1, None)  # first, no win
    assert forty["rating"] == board["players"][0]["rating"] == ratings.shown(forty["mu"], forty["sigma"])

    before = await server.http("GET", "/players/Ann")
    outcome = await server.results.apply(race)  # once more, by hand: nothing changes
    assert outcome is not None and outcome.value == "applied"
    assert await server.http("GET", "/players/Ann") == before
    for c in players:
        await c.close()
