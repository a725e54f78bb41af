"""The spectator page in a real browser (Debian's chromium through playwright), against a live server.

A race of scripted players watched live, a stream dropped and resumed
with ``Last-Event-ID``, and a replay stepped with the mouse and the
keyboard. Every wait is for a condition with a deadline; nothing is timed.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from browser_util import browser_context, expected_rows, rows, skip_reason  # noqa: F401 (a fixture)
from redis_util import LiveServer, eventually
from web_util import WIN, new_race, race_version, server_lines

from server.web.sse import SseSpectator

pytestmark = pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")


async def _shows_server_table(page: Any, server: LiveServer, race: str) -> bool:
    return await rows(page) == expected_rows(await server_lines(server, race))


async def test_a_race_of_players_seen_live_to_the_end(server: LiveServer, browser_context: Any) -> None:
    race = await new_race(server)
    page = await browser_context.new_page()
    await page.goto(f"{server.url}/watch/{race.created.race.code}")
    await page.wait_for_selector("#conn[data-state=live]")
    assert await page.get_attribute("#race-status", "data-status") == "running"
    for round_ in range(4):
        await race.move(0, 5)
        await race.move(1, 3 + round_)
        await race.move(2, 1)
        await eventually(lambda: _shows_server_table(page, server, race.id), f"the page's table after round {round_}")
    labels = await page.eval_on_selector_all("#racers progress", "bars => bars.map(b => b.getAttribute('aria-label'))")
    assert all(re.fullmatch(r"\w+: \d+ of 104 cards home", label) for label in labels), labels
    assert re.fullmatch(r"\d+:\d\d left", await page.text_content("#clock") or "")

    await race.give_up(2)
    await page.wait_for_function("() => document.getElementById('announce').textContent.includes('cy gave up')")
    status = await page.text_content("#racers tr[data-seat='2'] .status")
    assert status == "✗ gave up", "a status is in words, not only a colour: the server's sign and words"
    await race.end(server)
    await page.wait_for_selector("#final:not([hidden])")
    assert await page.get_attribute("#conn", "data-state") == "over"
    assert "Forty Thieves deal 2" in (await page.text_content("#deal") or "")
    assert len(await page.query_selector_all("#standings tbody tr")) == 3
    await page.wait_for_function("() => document.getElementById('announce').textContent.includes('The race is over')")
    await race.close()


async def test_a_dropped_stream_resumes_with_last_event_id_and_catches_up(server: LiveServer,
                                                                         browser_context: Any) -> None:
    race = await new_race(server)
    await race.move(0, 2)
    page = await browser_context.new_page()
    blocked = False
    requests: list[dict[str, str]] = []
    refused = 0
    let_in = asyncio.Event()

    async def gate(route: Any) -> None:
        nonlocal refused
        requests.append(await route.request.all_headers())
        await let_in.wait()  # the first stream is held until the page has said it is connecting
        if blocked:
            refused += 1
            await route.abort("connectionrefused")
        else:
            await route.continue_()

    await page.route(re.compile(r".*/races/[^/]+/events.*"), gate)
    await page.goto(f"{server.url}/watch/{race.created.race.code}")
    await page.wait_for_selector("#conn[data-state=connecting]")
    assert await page.text_content("#conn") == "◌ connecting…", "JavaScript is on: not 'JavaScript is off'"
    let_in.set()
    await page.wait_for_selector("#conn[data-state=live]")
    await eventually(lambda: _shows_server_table(page, server, race.id), "the first table")
    rendered = await page.get_attribute("#racers", "data-resumed-from")
    await race.move(0, 1)  # the page's table moves on from the version it was rendered at
    moved = await server.service.store.meta(race.id)
    assert moved is not None

    async def at_move() -> bool:  # (its rows alone may not show a move that brought no card home)
        return int(await page.get_attribute("#racers", "data-version") or 0) >= moved.version

    await eventually(at_move, "the page's table at the version of the move")
    assert await _shows_server_table(page, server, race.id)
    held = await page.get_attribute("#racers", "data-version")

    blocked = True
    hub = server.service.hubs[race.id]
    for listener in [c for c in hub.conns if isinstance(c, SseSpectator)]:
        listener.close_after_queue(0)  # type: ignore[arg-type]  # the server drops the stream
    await page.wait_for_selector("#conn[data-state=reconnecting]")
    await race.move(1, 19)  # made while the page is away
    await race.move(2, 2)
    await eventually(lambda: refused >= 1, "the browser to try to reconnect")
    assert not await _shows_server_table(page, server, race.id), "the page cannot know the moves yet"

    blocked = False
    await eventually(lambda: _shows_server_table(page, server, race.id), "the page to catch up after the drop")
    assert len(requests) >= 3, "the first stream, a refused attempt, the resumed stream"
    # The welcome of a replay echoes the version it resumed from: the Last-Event-ID the browser
    # sent (the header is added below what playwright's routing sees), not the page's first version.
    assert await page.get_attribute("#racers", "data-resumed") == "true", "a replay, not a new snapshot"
    assert await page.get_attribute("#racers", "data-resumed-from") == held != rendered
    assert await page.get_attribute("#racers", "data-version") == str(await race_version(server, race.id))
    await race.move(0, 1)  # and it is live again
    await eventually(lambda: _shows_server_table(page, server, race.id), "the page after the resume")
    await race.close()


async def _cards_in_column(page: Any, column: int) -> int:
    return len(await page.query_selector_all(f"#board .column:nth-child({column}) li.card:not(.empty)"))


async def test_stepping_through_a_replay_with_buttons_and_keys(server: LiveServer, browser_context: Any) -> None:
    race = await new_race(server, names=("ann", "bob"))
    await race.move(0, 12)
    await race.move(1, 1)
    await race.end(server)
    page = await browser_context.new_page()
    await page.goto(f"{server.url}/watch/{race.created.race.code}")
    await page.get_by_role("button", name=re.compile(r"Replay ann's game")).click()
    status = page.locator("#replay-status")
    await page.wait_for_function("() => document.getElementById('replay-status').textContent.startsWith('Step 0 of 12')")
    assert "the deal as dealt" in (await status.text_content() or "")
    before = await _cards_in_column(page, 1)
    assert WIN["moves"][0] == "ba"
    await page.get_by_role("button", name="Next").click()
    await page.wait_for_function("() => document.getElementById('replay-status').textContent.startsWith('Step 1 of 12')")
    assert "column 2 → column 1" in (await status.text_content() or "")
    assert await _cards_in_column(page, 1) == before + 1, "the card moved onto column 1"

    await page.keyboard.press("ArrowRight")  # the focus stays in the replay: keys step it
    await page.wait_for_function("() => document.getElementById('replay').dataset.step === '2'")
    await page.keyboard.press("End")
    await page.wait_for_function("() => document.getElementById('replay').dataset.step === '12'")
    assert await page.input_value("#replay-step") == "12"
    await page.keyboard.press("Home")
    await page.wait_for_function("() => document.getElementById('replay').dataset.step === '0'")
    assert await _cards_in_column(page, 1) == before
    await page.get_by_role("button", name=re.compile(r"Replay bob's game")).click()
    await page.wait_for_function("() => document.getElementById('replay-status').textContent.startsWith('Step 0 of 1')")
    assert "Replay: bob" in (await page.text_content("#replay-title") or "")
    await race.close()


async def test_an_unknown_race_page_says_so(server: LiveServer, browser_context: Any) -> None:
    page = await browser_context.new_page()
    answer = await page.goto(f"{server.url}/watch/NOPE99")
    assert answer is not None and answer.status == 404
    assert await page.get_attribute(".error", "data-code") == "race_not_found"
