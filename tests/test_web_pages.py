"""The spectator pages and the replay boards over plain HTTP (the browser tests drive the same pages live)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import httpx
import msgspec
from redis_util import LiveServer, eventually, register
from web_util import WIN, daily_play, new_race, sse

from server.web.render import STATUS_LEGEND
from shared import protocol as p
from shared.engine import Game
from shared.standings import STATUS_WORDS, status_words
from shared.variants import get_variant


async def test_the_front_page_lists_running_and_waiting_races(server: LiveServer) -> None:
    running = await new_race(server)
    waiting = await new_race(server, names=("dee",), start=False)
    async with httpx.AsyncClient(base_url=server.url) as http:
        page = await http.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    live, _, lobby = page.text.partition('id="lobby-title"')
    assert f'href="/watch/{running.created.race.code}"' in live
    assert f'href="/watch/{waiting.created.race.code}"' in lobby
    await running.close()
    await waiting.close()


async def test_a_race_page_shows_the_table_and_no_secret_before_the_end(server: LiveServer) -> None:
    race = await new_race(server)
    await race.move(0, 2)
    async with httpx.AsyncClient(base_url=server.url) as http:
        page = await http.get(f"/watch/{race.created.race.code}")
        assert page.status_code == 200
        for name in ("ann", "bob", "cy"):
            assert f">{name}" in page.text
        state = json.loads(page.text.split('id="state">')[1].split("</script>")[0])
        assert state["results"] is None and state["deal_text"] is None
        meta = await server.service.store.meta(race.id)
        assert meta.salt not in page.text and "deal 2" not in page.text
        assert state["version"] == (await server.service.store.meta(race.id)).version
        # The page's scripts show each status by the server's own sign and words (server/web/render.py),
        # carried by the page: every status word of the protocol, and a final racing's.
        legend = json.loads(page.text.split('id="status-words">')[1].split("</script>")[0])
        assert legend == STATUS_LEGEND and legend.keys() == {*STATUS_WORDS, "final_racing"}
        assert legend["gave_up"] == ["✗", status_words("gave_up")] and legend["final_racing"][1] == "out of time"
        by_id = await http.get(f"/watch/{race.id}")  # the id works as well as the join code
        assert by_id.status_code == 200
        replay = await http.get(f"/races/{race.id}/replay/0")
        assert replay.status_code == 409 and replay.json()["code"] == "race_not_over"
    await race.close()


async def test_an_unknown_race_is_a_404_page_with_its_code(server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=server.url) as http:
        page = await http.get("/watch/NOPE99")
        assert page.status_code == 404 and 'data-code="race_not_found"' in page.text
        answer = await http.get("/races/NOPE99/replay/0")
        assert answer.status_code == 404 and answer.json()["code"] == "race_not_found"


async def test_a_name_or_id_holding_a_slash_gets_the_documented_404(server: LiveServer) -> None:
    """``%2F`` is decoded before routing, so no route took such a path and Starlette answered a bare
    "Not Found" (issue 22): each page and endpoint prefix now answers its typed 404."""
    async with httpx.AsyncClient(base_url=server.url) as http:
        for path, code in [("/watch/a%2Fb", "race_not_found"), ("/player/a%2Fb", "player_not_found"),
                           ("/event/a%2Fb", "event_not_found")]:
            page = await http.get(path)
            assert page.status_code == 404 and f'data-code="{code}"' in page.text, path
        for path, code in [("/races/a%2Fb", "race_not_found"), ("/races/a%2Fb/results", "race_not_found"),
                           ("/events/a%2Fb", "event_not_found")]:
            answer = await http.get(path)
            assert answer.status_code == 404 and answer.json()["code"] == code, path


async def test_every_unknown_api_path_answers_the_typed_json_404(server: LiveServer) -> None:
    """A path no endpoint takes under an API prefix is ``{code, message}`` JSON (``/challenges/...`` and
    ``/daily/...`` answered a bare text "Not Found")."""
    async with httpx.AsyncClient(base_url=server.url) as http:
        for path, code in [("/challenges/nosuch/nothing", "challenge_not_found"),
                           ("/challenges/a%2Fb", "challenge_not_found"), ("/challenges/x/accept/more", "challenge_not_found"),
                           ("/daily/forty-thieves/more", "bad_variant"), ("/races/x/nothing", "race_not_found"),
                           ("/players/bob/nothing", "player_not_found"), ("/events/x/y/z", "event_not_found")]:
            answer = await http.get(path)
            assert answer.status_code == 404 and answer.headers["content-type"].startswith("application/json"), path
            body = answer.json()
            assert body["code"] == code and body["message"], path


async def test_a_finished_race_page_reveals_the_deal_and_replays_every_step(server: LiveServer) -> None:
    race = await new_race(server)
    await race.move(0, 12)
    await race.move(1, 3)
    await race.end(server)
    async with httpx.AsyncClient(base_url=server.url) as http:
        page = await http.get(f"/watch/{race.created.race.code}")
        assert "deal 2" in page.text and 'id="final"' in page.text and 'id="final" hidden' not in page.text
        answer = await http.get(f"/races/{race.id}/replay/0", headers={"accept-encoding": "gzip"})
        assert answer.status_code == 200
        steps = answer.json()
        assert steps["name"] == "ann" and steps["moves"] == WIN["moves"][:12]
        assert len(steps["views"]) == 13 and steps["error"] is None
        game = Game.new(get_variant("forty-thieves"), WIN["deal"])
        for text in WIN["moves"][:12]:
            game.push_text(text)
        assert steps["views"][-1] == msgspec.to_builtins(p.View.from_player_view(game.view()))
        raw = await http.get(f"/races/{race.id}/replay/0", headers={"accept-encoding": "identity"})
        assert raw.json() == steps
        missing = await http.get(f"/races/{race.id}/replay/7")
        assert missing.status_code == 404 and missing.json()["code"] == "player_not_found"
        for seat in ("x", "%EF%BC%90", "+0"):  # a seat is ASCII digits only
            bad = await http.get(f"/races/{race.id}/replay/{seat}")
            assert bad.status_code == 400 and bad.json()["code"] == "bad_field", seat
    await race.close()


def test_the_static_files_and_templates_ship_with_the_package() -> None:
    root = Path(__file__).parent.parent
    data = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["server"]
    web = root / "server"
    shipped = {f for pattern in data for f in web.glob(pattern)}
    for name in ("watch.js", "table.js", "board.js", "replay.js", "final.js", "cards.js", "web.css"):
        assert web / "web" / "static" / name in shipped, name
    assert web / "web" / "templates" / "watch.html" in shipped


async def test_static_files_are_served(server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=server.url) as http:
        js = await http.get("/static/watch.js")
        assert js.status_code == 200 and "javascript" in js.headers["content-type"]
        assert (await http.get("/static/nope.js")).status_code == 404


async def test_a_daily_deals_play_keeps_its_deal_and_games_hidden_until_the_day_is_over(server: LiveServer) -> None:
    body, client = await daily_play(server, "ann")
    assert isinstance(await client.move("S"), p.Ack)
    await client.give_up()
    await client.expect(p.Finished)
    meta = await server.service.store.meta(body["race"])
    async with httpx.AsyncClient(base_url=server.url) as http:
        page = await http.get(f"/watch/{body['code']}")
        assert page.status_code == 200 and "The deal and every game stay secret until 20" in page.text
        assert meta.salt not in page.text
        state = json.loads(page.text.split('id="state">')[1].split("</script>")[0])
        assert state["deal_text"] is None and state["results"]["records"] == []
        replay = await http.get(f"/races/{body['race']}/replay/0")
        assert replay.status_code == 409 and replay.json()["code"] == "deal_secret"
        assert replay.json()["message"] == state["secret_text"]
    async with sse(server, body["race"]) as stream:
        finished = await stream.until("finished")
        assert finished.data["deal_text"] is None and finished.data["results"]["records"] == []
        assert finished.data["secret_text"] == state["secret_text"]
        assert finished.data["results"]["reveal_at"] == meta.reveal_at
        assert meta.salt not in finished.raw
    await client.close()


async def test_the_front_page_lists_an_events_current_heats_to_watch(redis_url: str) -> None:
    from redis_util import live_server

    organiser = "organiser-secret-for-tests"
    async with live_server(redis_url, organiser_token=organiser) as server:
        auth = {"authorization": f"Bearer {organiser}"}
        status, event = await server.http("POST", "/events", {"name": "Cup", "join_seconds": 30, "break_seconds": 0,
                                                              "time_limit": 120, "heat_size": 2}, headers=auth)
        assert status == 201, event
        async with httpx.AsyncClient(base_url=server.url) as http:
            page = await http.get("/")
            assert f'data-event="{event["id"]}"' in page.text and "taking entries" in page.text
            for name in ("ann", "bob", "cy", "dee"):
                key = await register(server, name)
                status, _ = await server.http("POST", f"/events/{event['id']}/entrants",
                                              headers={"authorization": f"Bearer {key}"})
                assert status == 200
            status, _ = await server.http("POST", f"/events/{event['id']}/start", headers=auth)
            assert status == 200

            async def heats_listed() -> bool:
                text = (await http.get("/")).text
                return text.count("Watch heat ") == 2

            await eventually(heats_listed, "the first round's two heats on the front page")
            text = (await http.get("/")).text
            code = text.split('<a href="/watch/')[1].split('"')[0]
            assert (await http.get(f"/watch/{code}")).status_code == 200
            assert "round 1 of" in text


async def test_the_front_page_lists_finished_races_and_todays_deal(server: LiveServer) -> None:
    from server.events.daily import today
    from server.race.clock import now_ms

    race = await new_race(server)
    await race.end(server)
    key = await register(server, "ann")
    status, play = await server.http("POST", "/daily/forty-thieves", headers={"authorization": f"Bearer {key}"})
    assert status == 200
    async with httpx.AsyncClient(base_url=server.url) as http:
        page = (await http.get("/")).text
    _, _, recent = page.partition('id="recent-title"')
    assert f'href="/watch/{race.created.race.code}"' in recent.partition("</section>")[0]
    _, _, daily = page.partition('id="daily-forty-thieves"')
    assert today(now_ms()) in daily and 'href="/player/ann"' in daily and "thieves daily play" in daily
    await race.close()
