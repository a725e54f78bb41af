"""The account pages (/player/{name}, /leaderboard) over HTTP: the same reads as the JSON endpoints."""

from __future__ import annotations

import httpx
import pytest
import redis
from redis_util import LiveServer
from results_util import apply, put_account, put_finished_race, standing


BROWSER = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
"""What a browser's navigation asks for."""


async def test_a_players_page_shows_the_record_the_rating_and_the_races(server: LiveServer,
                                                                        sync: redis.Redis) -> None:
    put_account(sync, "Ann")
    put_account(sync, "Bob")
    put_finished_race(sync, "rated1", [standing(0, "ann", "finished", 104, 90_000, 90_000), standing(1, "bob", home=50)])
    await apply(server, "rated1")
    for i in range(21):  # more than a page: the page links to the older ones
        put_finished_race(sync, f"casual{i}", [standing(0, "ann", home=i), standing(1, None, home=2)], rated=False,
                          ended_after=400_000 + 1000 * i)
        await apply(server, f"casual{i}")
    async with httpx.AsyncClient(base_url=server.url) as http:
        page = await http.get("/player/ANN")
        assert page.status_code == 200 and "<h1>Ann</h1>" in page.text
        _, profile = await server.http("GET", "/players/ann")
        forty = profile["variants"]["forty-thieves"]
        assert f'{forty["rating"]}<abbr title="provisional' in page.text and "(provisional)" in page.text
        assert "1:30" in page.text, "the fastest win, 90 s"
        assert page.text.count('<tr data-race="') == 20
        assert 'href="/watch/casual20"' in page.text and 'rel="next"' in page.text
        older = page.text.split('<a href="?before=')[1].split('"')[0]
        rest = await http.get(f"/player/ann?before={older}")
        assert rest.status_code == 200 and "Older races" in rest.text
        assert 'href="/watch/rated1"' in rest.text and "not rated" in rest.text and "→" in rest.text
        missing = await http.get("/player/nobody")
        assert missing.status_code == 404 and 'data-code="player_not_found"' in missing.text
        bad = await http.get("/player/ann?before=zzz")
        assert bad.status_code == 400 and 'data-code="bad_field"' in bad.text


async def test_the_leaderboard_page_ranks_the_rated_players_of_a_variant(server: LiveServer,
                                                                        sync: redis.Redis) -> None:
    put_account(sync, "Ann")
    put_account(sync, "Bob")
    put_finished_race(sync, "r1", [standing(0, "ann", "finished", 104, 90_000, 90_000), standing(1, "bob", home=50)])
    await apply(server, "r1")
    async with httpx.AsyncClient(base_url=server.url, headers={"accept": BROWSER}) as http:
        page = await http.get("/leaderboard")
        assert page.status_code == 200 and "Leaderboard: Forty Thieves" in page.text
        _, board = await server.http("GET", "/leaderboard")
        names = [line["name"] for line in board["players"]]
        assert names == ["Ann", "Bob"]
        assert page.text.index('href="/player/Ann"') < page.text.index('href="/player/Bob"')
        assert '<option value="sixty-thieves">' in page.text and '<option value="forty-thieves" selected>' in page.text
        empty = await http.get("/leaderboard?variant=sixty-thieves")
        assert empty.status_code == 200 and "Nobody has played a rated race of Sixty Thieves" in empty.text
        bad = await http.get("/leaderboard?variant=nope")
        assert bad.status_code == 400 and 'data-code="bad_variant"' in bad.text
        data = await http.get("/leaderboard", headers={"accept": "application/json"})
        assert data.json()["players"][0]["name"] == "Ann", "a program still gets the JSON"
        anything = await http.get("/leaderboard", headers={"accept": "*/*"})
        assert anything.headers["content-type"] == "application/json"
