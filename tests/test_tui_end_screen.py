"""The end screen of ``thieves play`` against the real race server (headless textual apps in the
server's event loop, as tests/test_tui_race.py): a rated race shows the rating change once the results
are applied; a race of the daily deal offers no rematch (its deal stays secret after the end); a race
that may have one offers ``m`` once the server has said so."""

from __future__ import annotations

import asyncio
import re

from client_cli import api
from client_cli.play_app import PlayApp
from client_cli.race_screens import StandingsScreen
from client_cli.rematch import RematchStandingsScreen
from client_cli.textshot import screen_text
from redis_util import Client, LiveServer, register
from shared import protocol as p
from test_tui_race import SIZE, create, racing, until


async def test_a_rated_race_shows_the_rating_change_and_offers_a_rematch(server: LiveServer) -> None:
    ann_key, bob_key = await register(server, "Ann"), await register(server, "Bob")
    created = await create(server.url, seats=2, time_limit=120, rated=True, start_mode="all-ready")
    code = created.race.code
    bob = await Client.connect(server)
    await bob.hello(code, key=bob_key)
    ann = PlayApp(server.url, code, None, key=ann_key)
    async with ann.run_test(size=SIZE) as pilot:
        await until(lambda: ann.link.online and len(ann.state.players) == 2, what="both seated")
        await bob.send(p.Ready(ready=True))
        await pilot.press("s")
        await until(lambda: racing(ann), timeout=20, what="the start")
        await bob.expect(p.Countdown)
        await bob.give_up()
        await pilot.press("g", "g")
        await until(lambda: isinstance(ann.screen, RematchStandingsScreen), timeout=20, what="the end screen")
        text = ""

        async def shown() -> bool:
            nonlocal text
            await pilot.pause()
            text = screen_text(ann)
            return "rating 1000 → " in text and "m rematch" in text

        deadline = asyncio.get_running_loop().time() + 60
        while not await shown():
            assert asyncio.get_running_loop().time() < deadline, text
            await asyncio.sleep(0.1)
        change = re.search(r"rating 1000 → (\d+) \(([+-]\d+)\)", text)
        assert change is not None, text
        entry = (await asyncio.to_thread(api.history, server.url, "ann", 5)).races[0]
        assert (entry.race, entry.rating_before, entry.rating_after) == (created.race.id, 1000, int(change.group(1)))
        assert int(change.group(2)) == entry.rating_after - 1000
        assert "m: offer Bob a rematch" in text
    await bob.close()


async def test_a_race_of_the_daily_deal_offers_no_rematch(server: LiveServer) -> None:
    """Its end screen offered m, and m then said no rematch is offered: it offers none now."""
    key = await register(server, "Ann")
    daily = await asyncio.to_thread(api.play_daily, server.url, "forty-thieves", key)
    ann = PlayApp(server.url, daily.code, None, key=key)
    async with ann.run_test(size=SIZE) as pilot:
        await until(lambda: ann.link.online and ann.state.seat is not None, what="seated")
        await pilot.press("s")
        await until(lambda: racing(ann), timeout=20, what="the start")
        await pilot.press("g", "g")
        await until(lambda: isinstance(ann.screen, StandingsScreen), timeout=20, what="the end screen")
        await pilot.pause()
        assert not isinstance(ann.screen, RematchStandingsScreen)
        text = screen_text(ann)
        assert "The race is over" in text and "Esc back to the board · q quit" in text
        assert "rematch" not in text
        await pilot.press("m")
        await pilot.pause()
        assert "rematch" not in screen_text(ann)
