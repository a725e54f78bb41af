"""The results endpoints on a live server and a real Redis: GET /players/{name}, /players/{name}/races
(paged), /leaderboard; bad queries answer 400 and leave Redis as it was; the sweep applies the outbox."""

from __future__ import annotations

import pytest
import redis
from redis_util import LiveServer, eventually
from results_util import apply, START, dump, put_account, put_finished_race, standing

from server.accounts import ratings
from server.store.keys import RESULTS_PENDING

VARIANT = "forty-thieves"


async def test_the_sweep_applies_what_nobody_applied(server: LiveServer, sync: redis.Redis) -> None:
    put_account(sync, "Ann")
    put_finished_race(sync, "orphan", [standing(0, "ann", "finished", 104, 9, 9), standing(1, None)], rated=False)
    sync.zadd(RESULTS_PENDING, {"orphan": START})
    await eventually(lambda: sync.zcard(RESULTS_PENDING) == 0, "the sweep to apply the orphaned race")
    status, body = await server.http("GET", "/players/ann")
    assert status == 200 and body["races"] == 1 and body["wins"] == 1


async def test_profile(server: LiveServer, sync: redis.Redis) -> None:
    put_account(sync, "Ann", created_at=START - 5)
    put_account(sync, "Bob")
    put_finished_race(sync, "r1", [standing(0, "ann", "finished", 104, 90_000, 90_000), standing(1, "bob", home=50)])
    put_finished_race(sync, "r2", [standing(0, "ann", "finished", 104, 70_000, 70_000), standing(1, "bob", home=5)],
                      rated=False, ended_after=400_000)
    put_finished_race(sync, "r3", [standing(0, "bob", "finished", 104, 60_000, 60_000), standing(1, "ann", home=9)],
                      rated=False, ended_after=500_000, variant="sixty-thieves")
    for race in ("r1", "r2", "r3"):
        await apply(server, race)
    status, body = await server.http("GET", "/players/ANN")
    assert status == 200
    forty = body["variants"][VARIANT]
    mu, sigma = forty["mu"], forty["sigma"]
    assert body["name"] == "Ann" and body["created_at"] == START - 5 and (body["races"], body["wins"]) == (3, 2)
    assert forty == {"races": 2, "wins": 2, "best_ms": 70_000, "rating": ratings.shown(mu, sigma), "mu": mu,
                     "sigma": sigma, "provisional": True, "rated_races": 1}
    assert mu > ratings.MU and sigma < ratings.SIGMA
    assert body["variants"]["sixty-thieves"] == {"races": 1, "wins": 0, "best_ms": None, "rating": None, "mu": None,
                                                 "sigma": None, "provisional": True, "rated_races": 0}
    assert "key_hash" not in str(body)
    for missing in ("nobody", "a{b}", "x" * 80, "%7Bann%7D"):
        status, body = await server.http("GET", f"/players/{missing}")
        assert (status, body["code"]) == (404, "player_not_found"), missing


async def test_history_pages_newest_first_with_a_cursor(server: LiveServer, sync: redis.Redis) -> None:
    put_account(sync, "Ann")
    for i in range(5):
        put_finished_race(sync, f"race{i}", [standing(0, "ann", home=i), standing(1, None, home=2)], rated=False,
                          ended_after=1000 * (i + 1))
        await apply(server, f"race{i}")
    pages, before = [], ""
    for _ in range(3):
        status, body = await server.http("GET", f"/players/ann/races?limit=2{before}")
        assert status == 200, body
        pages.append([e["race"] for e in body["races"]])
        before = f"&before={body['next']}" if body["next"] else ""
    assert pages == [["race4", "race3"], ["race2", "race1"], ["race0"]] and before == ""
    status, body = await server.http("GET", "/players/Ann/races")
    assert status == 200 and len(body["races"]) == 5 and body["next"] is None
    first = body["races"][0]
    assert first == {"race": "race4", "code": "RACE4", "variant": VARIANT, "ended_at": START + 5000, "place": 1,
                     "players": 2, "status": "racing", "home": 4, "total": 104, "time_ms": None, "rated": False,
                     "rating_before": None, "rating_after": None}
    assert [e["place"] for e in body["races"]] == [1, 1, 1, 2, 2]  # 4, 3, 2 home beat 2; 1 and 0 did not
    status, body = await server.http("GET", "/players/ann/races?limit=100")
    assert status == 200 and len(body["races"]) == 5
    status, body = await server.http("GET", "/players/ann/races?limit=1&before=" + f"{START + 3000}-race2")
    assert [e["race"] for e in body["races"]] == ["race1"] and body["next"] == f"{START + 2000}-race1"


async def test_bad_queries_answer_400_or_404_and_leave_redis_unchanged(server: LiveServer, sync: redis.Redis) -> None:
    put_account(sync, "Ann")
    put_finished_race(sync, "r1", [standing(0, "ann", home=3), standing(1, None)], rated=False)
    await apply(server, "r1")
    before = dump(sync)
    for path, status, code in [
        ("/players/ann/races?limit=0", 400, "bad_field"),
        ("/players/ann/races?limit=101", 400, "bad_field"),
        ("/players/ann/races?limit=x", 400, "bad_field"),
        ("/players/ann/races?limit=-1", 400, "bad_field"),
        ("/players/ann/races?limit=%EF%BC%92", 400, "bad_field"),  # a full-width 2: ASCII digits only
        ("/players/ann/races?limit=%D9%A3", 400, "bad_field"),  # an Arabic-Indic 3
        ("/players/ann/races?limit=+2", 400, "bad_field"),
        ("/players/ann/races?limit=1_0", 400, "bad_field"),
        ("/players/a%2Fnn/races", 404, "player_not_found"),  # a name holding '/': the typed 404, not a bare one
        ("/players/a%2Fnn", 404, "player_not_found"),
        ("/players/ann/races?before=garbage", 400, "bad_field"),
        ("/players/ann/races?before=12-a%7Bb%7D", 400, "bad_field"),
        ("/players/nobody/races", 404, "player_not_found"),
        ("/players/nobody/races?limit=0", 400, "bad_field"),
        ("/leaderboard?variant=chess", 400, "bad_variant"),
        ("/leaderboard?limit=0", 400, "bad_field"),
        ("/leaderboard?limit=1000", 400, "bad_field"),
        ("/leaderboard?limit=%EF%BC%95", 400, "bad_field"),
    ]:
        got, body = await server.http("GET", path)
        assert (got, body["code"]) == (status, code), path
        assert body["message"]
    assert dump(sync) == before


async def test_leaderboard_best_first_rated_players_only(server: LiveServer, sync: redis.Redis) -> None:
    for name in ("Ann", "Bob", "Cy", "Dee", "Eve"):
        put_account(sync, name)
    # ann beats bob beats cy and eve (who tie), twice; dee only plays unrated.
    for i in range(2):
        put_finished_race(sync, f"r{i}", [standing(0, "ann", "finished", 104, 9, 9), standing(1, "bob", home=50),
                                          standing(2, "eve", home=10, home_at=5), standing(3, "cy", home=10, home_at=5)],
                          ended_after=1000 * (i + 1))
        await apply(server, f"r{i}")
    put_finished_race(sync, "u", [standing(0, "dee", "finished", 104, 9, 9), standing(1, "ann", home=5)],
                      rated=False, ended_after=5000)
    await apply(server, "u")
    status, body = await server.http("GET", "/leaderboard?variant=Forty%20Thieves")
    assert status == 200 and body["variant"] == VARIANT
    lines = body["players"]
    assert [(line["rank"], line["name"]) for line in lines] == [(1, "Ann"), (2, "Bob"), (3, "Cy"), (3, "Eve")]
    assert lines[2]["rating"] == lines[3]["rating"]
    assert [line["rating"] for line in lines] == sorted((line["rating"] for line in lines), reverse=True)
    assert all(line["provisional"] and line["rated_races"] == 2 for line in lines)
    for line in lines:
        assert line["rating"] == ratings.shown(line["mu"], line["sigma"])
    status, default = await server.http("GET", "/leaderboard?limit=2")
    assert status == 200 and [line["name"] for line in default["players"]] == ["Ann", "Bob"]
    status, other = await server.http("GET", "/leaderboard?variant=sixty-thieves")
    assert status == 200 and other == {"variant": "sixty-thieves", "players": []}
