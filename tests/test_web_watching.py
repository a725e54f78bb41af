"""What a watcher sees of races that are over (issue 38): the winner and the winning time, the players'
names as links, a legend of the marks, the replay of the proved winning line (and that it, like the
deal, stays secret while the race's event goes on), who won on the front page, an account's opponents
and events, and its times in the visitor's own time zone."""

from __future__ import annotations

import re
from dataclasses import dataclass

import httpx
import pytest
from browser_util import launch_browser, skip_reason
from redis_util import Client, LiveServer, create_race, eventually, live_server, register, seed_checked, start_race
from web_util import join_heats, new_race, start_event

from server.web.render import STATUS_LEGEND
from shared import protocol as p
from shared.pool import load_pool

ORGANISER = "organiser-secret-for-watching"
AUTH = {"authorization": f"Bearer {ORGANISER}"}


@dataclass
class Won:
    code: str
    race: str
    line: list[str]


async def _won(server: LiveServer) -> Won:
    """A checked race of two: the guest ``gus`` gives up, the account ``Zoe`` plays the proved line to the end."""
    key = await register(server, "Zoe")
    created = await create_race(server, seats=2, deal_source="pool")
    zoe, gus = await Client.connect(server), await Client.connect(server)
    await zoe.hello(created.race.id, key=key)
    await gus.hello(created.race.id, "gus")
    await start_race(server, created.creator_token, [zoe, gus])
    await gus.give_up()
    meta = await server.service.store.meta(created.race.id)
    assert meta is not None
    line = list(load_pool("forty-thieves").lines[meta.deal])
    for text in line:
        assert isinstance(await zoe.move(text), p.Ack)
    await zoe.expect(p.Finished)
    await zoe.close()
    await gus.close()
    return Won(created.race.code, created.race.id, line)


async def test_a_won_race_shows_its_winner_time_links_legend_and_proved_line(server: LiveServer) -> None:
    won = await _won(server)
    async with httpx.AsyncClient(base_url=server.url) as http:
        page = (await http.get(f"/watch/{won.code}")).text
        winner = re.search(r'<p id="winner" class="winner">(.*?)</p>', page, re.S)
        assert winner and re.fullmatch(r'Won by <a href="/player/Zoe">Zoe</a> in <strong class="time">\d+:\d\d</strong>.',
                                       winner.group(1)), winner
        assert '<a href="/player/gus"' not in page and ">gus<" in page, "a guest's name is no link: no page to show"
        legend = page.split('id="legend"')[1].split("</details>")[0]
        for sign, words in STATUS_LEGEND.values():  # every mark (a status without one is only words)
            assert f"<dt>{sign}</dt><dd>{words}</dd>" in legend if sign else f"<dd>{words}</dd>" not in legend
        assert "<dt>†</dt>" in legend
        assert 'class="line-button"' in page
        answer = await http.get(f"/races/{won.race}/replay/line")
        assert answer.status_code == 200, answer.text
        steps = answer.json()
        assert steps["moves"] == won.line and steps["name"] == "the proved winning line" and steps["seat"] == -1
        assert len(steps["views"]) == len(won.line) + 1 and steps["views"][-1]["status"] == "won"
        bad = await http.get(f"/races/{won.race}/replay/lines")
        assert bad.status_code == 400 and bad.json()["code"] == "bad_field"

        front = (await http.get("/", headers={"accept": "text/html"})).text
        row = front.split(f'<tr data-code="{won.code}">')[1].split("</tr>")[0]
        assert re.search(r'<td class="winner"><a href="/player/Zoe">Zoe</a> in \d+:\d\d</td>', row), row
        profile = (await http.get("/player/Zoe")).text
        history = profile.split(f'<tr data-race="{won.race}">')[1].split("</tr>")[0]
        assert '<td class="against">gus</td>' in history, history
        assert re.search(r'<time datetime="\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ">\d{4}-\d\d-\d\d \d\d:\d\d UTC</time>', history)


async def test_a_race_on_a_number_has_no_line_to_replay(server: LiveServer) -> None:
    race = await new_race(server, names=("ann", "bob"))
    await race.end(server)
    async with httpx.AsyncClient(base_url=server.url) as http:
        answer = await http.get(f"/races/{race.id}/replay/line")
        page = (await http.get(f"/watch/{race.created.race.code}")).text
    assert answer.status_code == 404 and answer.json()["code"] == "bad_field"
    assert "line-button" not in page and "Nobody won: nobody finished the deal." in page
    await race.close()


async def test_a_heats_line_stays_secret_until_its_event_is_over(redis_url: str) -> None:
    """A heat over while another heat of its round plays the same deal: its page links the event, and
    neither the page, the front page nor the replay endpoint gives the proved line (or the deal) away."""
    async with live_server(redis_url, organiser_token=ORGANISER) as server:
        await seed_checked(server)
        event, keys, heats = await start_event(server, AUTH, {
            "name": "Secret Cup", "rounds": 1, "heat_size": 2, "join_seconds": 1, "break_seconds": 0,
            "time_limit": 120}, ("ann", "bob", "cy", "dee"))
        players = await join_heats(server, heats, keys, {})
        first, second = players[:2], players[2:]
        for client in first:
            await client.give_up()
        over = heats[0]

        async def heat_over() -> bool:
            return await server.service.store.results(over["race"]) is not None

        await eventually(heat_over, "the first heat over")
        meta = await server.service.store.meta(over["race"])
        assert meta is not None
        line = load_pool("forty-thieves").lines[meta.deal]
        async with httpx.AsyncClient(base_url=server.url) as http:
            page = (await http.get(f"/watch/{over['code']}")).text
            assert f'<a href="/event/{event}" id="event-link">' in page, "a heat links its event"
            assert "line-button" not in page and "winning line" not in page and "until the event is over" in page
            for path in ("/", f"/watch/{over['code']}", f"/player/{over['entrants'][0]}"):
                shown = (await http.get(path, headers={"accept": "text/html"})).text
                assert meta.salt not in shown and " ".join(line[:3]) not in shown, path
            for seat in ("line", "0"):
                answer = await http.get(f"/races/{over['race']}/replay/{seat}")
                assert answer.status_code == 409 and answer.json()["code"] == "deal_secret", seat
            profile = (await http.get(f"/player/{over['entrants'][0]}")).text
            assert f'<a href="/event/{event}" class="event">Secret Cup</a>' in profile, "the history names the event"
            for client in second:
                await client.give_up()

            async def event_over() -> bool:
                _, info = await server.http("GET", f"/events/{event}")
                return info["status"] == "finished"

            await eventually(event_over, "the event over")
            answer = await http.get(f"/races/{over['race']}/replay/line")
            assert answer.status_code == 200 and answer.json()["moves"] == list(line)
            assert "line-button" in (await http.get(f"/watch/{over['code']}")).text
            front = (await http.get("/", headers={"accept": "text/html"})).text
            assert f'<li data-event="{event}"><a href="/event/{event}"><strong>Secret Cup</strong></a>' in \
                front.split('id="finished-events-title"')[1], "the front page lists the finished event"
        for client in players:
            await client.close()


async def test_an_arenas_standings_link_the_races_being_played(redis_url: str) -> None:
    async with live_server(redis_url, organiser_token=ORGANISER) as server:
        event, keys, races = await start_event(server, AUTH, {
            "name": "Blitz", "format": "arena", "duration": 120, "group_size": 2, "join_seconds": 3,
            "break_seconds": 0, "time_limit": 60}, ("fay", "gus"))
        await seed_checked(server)
        players = await join_heats(server, races, keys, {})
        async with httpx.AsyncClient(base_url=server.url) as http:
            page = (await http.get(f"/event/{event}")).text
        heads = page.split('id="event-standings"')[1].split("</thead>")[0]
        assert all(word in heads for word in (">Wins<", ">Streak<", ">On fire<", ">Racing now<")), heads
        legend = page.split('id="legend"')[1].split("</details>")[0]
        assert "<dt>🔥</dt><dd>on fire: 2 wins in a row" in legend and "<dt>▶</dt>" in legend, "a phone's words for them"
        code = races[0]["code"]
        for name in ("fay", "gus"):
            row = page.split(f'<tr data-account="{name}">')[1].split("</tr>")[0]
            assert f'<a href="/watch/{code}" aria-label="Watch {code}">' in row, row
            assert '<td class="wins">0</td>' in row and '<td class="streak">0</td>' in row and ">no<" in row
        for client in players:
            await client.close()


@pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")
async def test_times_in_the_visitors_zone_and_the_line_replayed_in_a_browser(server: LiveServer) -> None:
    won = await _won(server)
    async with launch_browser() as browser:
        context = await browser.new_context(timezone_id="Asia/Tokyo", locale="en-GB")
        page = await context.new_page()
        await page.goto(f"{server.url}/player/Zoe")
        await page.wait_for_selector(f"tr[data-race='{won.race}'] time[data-local]")
        utc, shown = await page.eval_on_selector(f"tr[data-race='{won.race}'] time", "t => [t.title, t.textContent]")
        await page.goto(f"{server.url}/watch/{won.code}")  # the race's page as its script redraws it
        await page.wait_for_selector("#conn[data-state=over]")
        winner = await page.text_content("#winner")
        link = await page.get_attribute("#winner a", "href")
        await page.click(".line-button")
        await page.wait_for_selector("#replay[data-step='0'] #board .column")
        await page.click("#replay button[data-step=last]")
        await page.wait_for_selector(f"#replay[data-step='{len(won.line)}']")
        title = await page.text_content("#replay-title")
        await context.close()
    assert re.fullmatch(r"Won by Zoe in \d+:\d\d\.", winner or "") and link == "/player/Zoe", winner
    assert title == "Replay: the proved winning line"
    assert utc.endswith(" UTC") and shown != utc
    hour = int(utc.split(" ")[1].split(":")[0])
    assert f"{(hour + 9) % 24:02d}:" in shown and ("GMT+9" in shown or "JST" in shown), (utc, shown)


async def test_a_live_tables_names_link_the_players_with_accounts(server: LiveServer) -> None:
    key = await register(server, "Kim")
    created = await create_race(server, seats=2)
    kim, lou = await Client.connect(server), await Client.connect(server)
    await kim.hello(created.race.id, key=key)
    await lou.hello(created.race.id, "lou")
    await start_race(server, created.creator_token, [kim, lou])
    async with httpx.AsyncClient(base_url=server.url) as http:
        page = (await http.get(f"/watch/{created.race.code}")).text
    table = page.split('id="racers"')[1].split("</table>")[0]
    assert '<a href="/player/Kim">Kim</a>' in table and ">lou<" in table and "/player/lou" not in table
    if skip_reason() is None:  # and as the page's script redraws the table from the stream
        async with launch_browser() as browser:
            context = await browser.new_context()
            shown = await context.new_page()
            await shown.goto(f"{server.url}/watch/{created.race.code}")
            await shown.wait_for_selector("#conn[data-state=live]")
            before = int(await shown.get_attribute("#racers", "data-version") or 0)
            assert isinstance(await kim.move("S"), p.Ack)
            await shown.wait_for_function(f"() => Number(document.querySelector('#racers').dataset.version) > {before}")
            links = await shown.eval_on_selector_all("#racers tbody th a", "links => links.map(a => a.getAttribute('href'))")
            await context.close()
        assert links == ["/player/Kim"], links
    await kim.close()
    await lou.close()
