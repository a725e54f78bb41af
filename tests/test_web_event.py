"""The event page (/event/{id}): over HTTP, and in chromium following a one-round duplicate event live."""

from __future__ import annotations

import asyncio
import re
from typing import Any, AsyncIterator

import httpx
import pytest
from browser_util import context_options, launch_browser, layout_problems, open_browser, skip_reason
from redis_util import Client, LiveServer, eventually, live_server, register
from web_util import WIN, enter_event, start_event

from shared import protocol as p

ORGANISER = "organiser-secret-for-tests"
AUTH = {"authorization": f"Bearer {ORGANISER}"}
NAMES = ("ann", "bob", "cy", "dee")


@pytest.fixture
async def events_server(redis_url: str) -> AsyncIterator[LiveServer]:
    async with live_server(redis_url, organiser_token=ORGANISER) as server:
        yield server


async def _event(server: LiveServer) -> tuple[str, dict[str, str]]:
    return await enter_event(server, AUTH, {
        "name": "Friday Cup", "rounds": 1, "heat_size": 2, "join_seconds": 2, "break_seconds": 0,
        "time_limit": 120, "deals": [WIN["deal"]]}, NAMES)


async def test_the_event_page_and_its_typed_404(events_server: LiveServer) -> None:
    event, _ = await _event(events_server)
    async with httpx.AsyncClient(base_url=events_server.url) as http:
        page = await http.get(f"/event/{event}")
        assert page.status_code == 200 and "<h1>Friday Cup</h1>" in page.text
        assert f'"stream": "/events/{event}/stream"' in page.text
        front = await http.get("/")
        assert f'href="/event/{event}"' in front.text
        missing = await http.get("/event/nope")
        assert missing.status_code == 404 and 'data-code="event_not_found"' in missing.text


async def test_an_arenas_page_has_no_column_of_times(events_server: LiveServer) -> None:
    """An arena keeps no times (its standings say 0 for everyone): the page leaves the column out, as a
    duplicate event's does before its first round is scored."""
    status, event = await events_server.http("POST", "/events", {
        "name": "Blitz", "format": "arena", "duration": 60, "group_size": 2, "join_seconds": 1, "break_seconds": 0,
        "time_limit": 60, "deals": [WIN["deal"]]}, headers=AUTH)
    assert status == 201, event
    for name in ("ann", "bob"):
        key = await register(events_server, name)
        status, _ = await events_server.http("POST", f"/events/{event['id']}/entrants",
                                             headers={"authorization": f"Bearer {key}"})
        assert status == 200
    async with httpx.AsyncClient(base_url=events_server.url) as http:
        page = await http.get(f"/event/{event['id']}")
    assert page.status_code == 200 and page.text.count('<td class="time">0:00</td>') == 2
    assert '<table id="event-standings" class="racers untimed"' in page.text


async def _play(server: LiveServer, code: str, key: str, moves: int, go: asyncio.Event) -> None:
    client = await Client.connect(server)
    await client.hello(code, key=key)
    await client.expect(p.Countdown, timeout=30)
    for text in WIN["moves"][:moves]:
        assert isinstance(await client.move(text), p.Ack)
    await go.wait()  # everyone stays in the race until the page has seen the round live
    await client.give_up()
    await client.close()


@pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")
async def test_an_events_standings_seen_live_through_a_round(events_server: LiveServer) -> None:
    server = events_server
    event, keys = await _event(server)
    async for context in open_browser():
        page: Any = await context.new_page()
        held: list[Any] = []

        async def hold(route: Any) -> None:  # the stream held unanswered: the page is connecting
            held.append(route)

        await page.route("**/events/*/stream", hold)
        await page.goto(f"{server.url}/event/{event}")
        await page.wait_for_selector("#conn[data-state=connecting]")
        assert await page.text_content("#conn") == "◌ connecting…", "JavaScript is on: the page says it is connecting"
        assert await page.is_hidden("#event-standings th.time"), "no round played: no column of 0:00s"
        assert held, "the stream was asked for"
        await page.unroute("**/events/*/stream")  # and let through (the held request with it)
        await page.wait_for_selector("#conn[data-state=live]")
        assert await page.get_attribute("#event-status", "data-status") == "registration"
        status, _ = await server.http("POST", f"/events/{event}/start", headers=AUTH)
        assert status == 200
        await page.wait_for_function("() => document.querySelectorAll('#heats li').length === 2")
        heats = await page.eval_on_selector_all("#heats a", "links => links.map(a => a.getAttribute('href'))")
        status, info = await server.http("GET", f"/events/{event}")
        schedule = info["schedule"][0]["heats"]
        assert sorted(heats) == sorted(f"/watch/{h['code']}" for h in schedule)
        moves = {"ann": 12, "bob": 0, "cy": 19, "dee": 1}  # cards home: 1, 0, 2, 0
        go = asyncio.Event()
        plays = [asyncio.create_task(_play(server, h["code"], keys[a], moves[a], go))
                 for h in schedule for a in h["entrants"]]

        async def live_rows() -> dict[str, int]:
            found = await page.eval_on_selector_all(
                "#event-live tbody tr", "rows => rows.map(r => [r.dataset.account, Number(r.dataset.home)])")
            return dict(found)

        async def homes_shown() -> bool:
            _, standings = await server.http("GET", f"/events/{event}/standings")
            return await live_rows() == {"ann": 1, "bob": 0, "cy": 2, "dee": 0} and standings["round_state"] == "running"

        await eventually(homes_shown, "the round's cards home on the event page")
        go.set()
        await asyncio.gather(*plays)
        await page.wait_for_selector("#event-status[data-status=finished]")
        _, standings = await server.http("GET", f"/events/{event}/standings")
        shown = await page.eval_on_selector_all(
            "#event-standings tbody tr", "rows => rows.map(r => [r.dataset.account, r.querySelector('.points').textContent])")
        assert shown == [[line["account"], _js_number(line["matchpoints"])] for line in standings["lines"]]
        assert shown[0][0] == "cy", "two cards home beat one"
        assert await page.is_hidden("#heats-section")
        await _shows_the_event_over(page, server, event)
        again = await context.new_page()  # the same page rendered after the end
        await again.goto(f"{server.url}/event/{event}")
        await _shows_the_event_over(again, server, event)


async def _shows_the_event_over(page: Any, server: LiveServer, event: str) -> None:
    """A finished event's page: not live, its standings with their times, and every round played with
    its deal and a link to each heat's result and replays."""
    await page.wait_for_selector("#conn[data-state=over]")
    assert await page.text_content("#conn") == "event over"
    _, info = await server.http("GET", f"/events/{event}")
    rounds = await page.eval_on_selector_all(
        "#played > li", "items => items.map(li => [li.dataset.round, li.textContent.includes('deal "
        f"{WIN['deal']}'), [...li.querySelectorAll('a')].map(a => a.getAttribute('href'))])")
    assert rounds == [[str(r["round"]), True, [f"/watch/{h['code']}" for h in r["heats"]]] for r in info["schedule"]]
    assert await page.is_visible("#event-standings th.time"), "a scored round gives every entrant a time"


def _js_number(value: float) -> str:
    """How JavaScript's String() writes a matchpoint total (3.0 is "3", 1.5 is "1.5")."""
    return str(int(value)) if value == int(value) else str(value)


BIG_DEAL = 2**62 + 12_345
"""A deal above 2^53: JavaScript's JSON.parse would round it (to ...12344 here)."""


async def _swiss_round(server: LiveServer) -> tuple[str, dict[str, str], list[dict[str, Any]]]:
    """A started one-round Swiss event of three on :data:`BIG_DEAL`: one pairing of two, and a bye."""
    return await start_event(server, AUTH, {
        "name": "Swiss Cup", "format": "swiss", "rounds": 1, "join_seconds": 4, "break_seconds": 0,
        "time_limit": 120, "deals": [BIG_DEAL]}, NAMES[:3])


@pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")
async def test_a_swiss_event_on_a_big_deal_at_desktop_and_phone_widths(events_server: LiveServer) -> None:
    """A Swiss event's page at 1280 and 390 px, live and finished: never wider than the window (at 390 px
    it was 410 px live and 457 px over: the Time column cut off), the round's bye shown while it is played
    (it showed only once the round was over), its pairings called pairings, and the round's deal above
    2^53 exact once the event is over (it said "its deal: reload the page")."""
    server = events_server
    event, keys, pairings = await _swiss_round(server)
    assert len(pairings) == 1
    _, race = await server.http("GET", f"/races/{pairings[0]['race']}")
    assert race["race"]["title"] == "Swiss Cup · round 1 of 1 · pairing 1 of 1", "a Swiss race is a pairing, not a heat"
    players, waiting = [], []
    for account in pairings[0]["entrants"]:
        client = await Client.connect(server)
        if (await client.hello(pairings[0]["code"], key=keys[account])).view is None:  # not started yet
            waiting.append(client)
        players.append(client)
    for client in waiting:
        await client.expect(p.Countdown, timeout=30)
    bye = next(name for name in NAMES[:3] if name not in pairings[0]["entrants"])
    async with httpx.AsyncClient(base_url=server.url) as http:
        front = (await http.get("/")).text
    assert f"Watch pairing 1 ({pairings[0]['code']})" in front, "the front page calls a Swiss race a pairing too"
    async with launch_browser() as browser:
        pages = {}
        for width in ("desktop 1280", "phone 390"):
            context = await browser.new_context(**context_options(width))
            pages[width] = await context.new_page()
            await pages[width].goto(f"{server.url}/event/{event}")
        wrong: list[str] = []  # every problem at every width, so a failure shows them all
        for width, page in pages.items():
            await page.wait_for_function("() => document.querySelectorAll('#event-live tbody tr').length === 2")
            wrong += [f"live at {width}: {problem}" for problem in await layout_problems(page)]
            byes = await page.eval_on_selector_all("#heats li.bye", "items => items.map(li => li.textContent)")
            if byes != [f"Bye: {bye}"]:
                wrong.append(f"live at {width}: the round's bye shows as {byes}")
            links = await page.eval_on_selector_all("#heats a", "links => links.map(a => a.textContent)")
            if links != [f"Watch pairing 1 ({pairings[0]['code']})"]:
                wrong.append(f"live at {width}: the pairings show as {links}")
        for client in players:
            await client.give_up()
            await client.close()
        for width, page in pages.items():
            await page.wait_for_selector("#event-status[data-status=finished]")
            again = await page.context.new_page()  # the same page rendered after the end
            await again.goto(f"{server.url}/event/{event}")
            await again.wait_for_selector("#conn[data-state=over]")
            for how, shown in (("followed", page), ("rendered", again)):
                played = await shown.text_content("#played > li")
                if not re.search(rf"Forty Thieves deal {BIG_DEAL}(?!\d)", played) or "Pairing 1 (" not in played:
                    wrong.append(f"{how} to the end at {width}: the round played shows as {played!r}")
                wrong += [f"{how} to the end at {width}: {problem}" for problem in await layout_problems(shown)]
    assert not wrong, "\n".join(wrong)


@pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")
async def test_an_arenas_page_lists_races_not_rounds_at_desktop_and_phone_widths(events_server: LiveServer) -> None:
    """An arena has no rounds: its finished page listed its races as "Round 1..7" under "Rounds played".
    At 1280 and 390 px it lists "Race 1" under "Races played", laid out within the window."""
    server = events_server
    status, event = await server.http("POST", "/events", {
        "name": "Blitz", "format": "arena", "duration": 10, "group_size": 2, "join_seconds": 3, "break_seconds": 0,
        "time_limit": 60, "deals": [BIG_DEAL]}, headers=AUTH)
    assert status == 201, event
    keys = {}
    for name in ("ann", "bob"):
        keys[name] = await register(server, name)
        status, _ = await server.http("POST", f"/events/{event['id']}/entrants",
                                      headers={"authorization": f"Bearer {keys[name]}"})
        assert status == 200
    status, _ = await server.http("POST", f"/events/{event['id']}/start", headers=AUTH)
    assert status == 200
    first: dict[str, Any] = {}

    async def paired() -> bool:
        _, info = await server.http("GET", f"/events/{event['id']}")
        first.update(info["schedule"][0]["heats"][0] if info["schedule"] else {})
        return bool(first)

    await eventually(paired, "the first pairing")
    players, waiting = [], []
    for account in first["entrants"]:
        client = await Client.connect(server)
        if (await client.hello(first["code"], key=keys[account])).view is None:
            waiting.append(client)
        players.append(client)
    for client in waiting:
        await client.expect(p.Countdown, timeout=30)
    for client in players:
        await client.give_up()
        await client.close()

    async def over() -> bool:
        status, _ = await server.http("GET", f"/races/{first['race']}/results")
        return status == 200

    for name, key in keys.items():  # no further pairing: the arena ends at its time
        status, _ = await server.http("DELETE", f"/events/{event['id']}/entrants/{name}",
                                      headers={"authorization": f"Bearer {key}"})
        assert status == 200

    async def finished() -> bool:
        _, info = await server.http("GET", f"/events/{event['id']}")
        return info["status"] == "finished"

    await eventually(over, "the first race over")
    await eventually(finished, "the arena over")
    wrong: list[str] = []
    async with launch_browser() as browser:
        for width in ("desktop 1280", "phone 390"):
            context = await browser.new_context(**context_options(width))
            page = await context.new_page()
            await page.goto(f"{server.url}/event/{event['id']}")
            await page.wait_for_selector("#conn[data-state=over]")
            heading, item = await page.text_content("#played-title"), await page.text_content("#played > li")
            link = await page.text_content("#played > li a")
            if heading != "Races played" or not item.startswith("Race 1") or "Round" in item \
                    or link != f"({first['code']}): result and replays":
                wrong.append(f"at {width}: {heading!r}, {item!r}, {link!r}")
            wrong += [f"at {width}: {problem}" for problem in await layout_problems(page)]
            await context.close()
    assert not wrong, "\n".join(wrong)
