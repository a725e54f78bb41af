"""No serious or critical accessibility violation on any page, as axe-core finds them in a real chromium.

axe-core (vendored under tests/vendor/axe-core with its licence: a test-only asset, never served) is
injected into each page once it has drawn itself, at 1280 px in the light scheme and at 390 px (a
phone, touch) in the dark one, so the contrast of both colour schemes is measured. The pages: the front
page (races live, waiting and finished with their winners, events running and finished, a daily
board), a race live, a race over with a replay open, a heat of an event, a daily deal's play, an
account's page, the leaderboard, a duplicate event, an arena and a Swiss event under way, an error
page, and the play page's lobby (test_play_browser.py plays on it). The context bypasses the CSP only to let the test inject axe (test_web_layout.py checks the
pages keep their CSP).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from browser_util import context_options, each_width, launch_browser, layout_problems, skip_reason
from redis_util import Client, LiveServer, create_race, live_server, register, seed_checked, start_race
from web_util import WIN, daily_play, event_round, join_heats, new_race, start_event

from shared import protocol as p

pytestmark = pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")

AXE = Path(__file__).parent / "vendor" / "axe-core" / "axe.min.js"
ORGANISER = "organiser-secret-for-a11y"
AUTH = {"authorization": f"Bearer {ORGANISER}"}
SCHEMES = {"desktop 1280": "light", "phone 390": "dark"}

SERIOUS = """async () => {
  const found = await axe.run(document, { resultTypes: ["violations"] });
  if (!found.passes.length) return ["axe checked nothing: is it the page it should be?"];
  return found.violations.filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.impact} ${v.id}: ${v.help} (${v.nodes.slice(0, 3).map((n) => n.target.join(" ")).join("; ")})`);
}"""
"""axe's serious and critical violations of the page as it stands, one line each with up to three places."""


async def _audit(contexts: dict[str, Any], url: str, ready: str, then: str | None = None,
                 opened: str | None = None) -> list[str]:
    """The violations of ``url`` at every width (and its layout problems: browser_util), once ``ready`` is
    on the page (and ``then`` was clicked and ``opened`` appeared)."""

    async def problems(page: Any) -> list[str]:
        await page.add_script_tag(path=str(AXE))
        return list(await page.evaluate(SERIOUS)) + [f"laid out: {problem}" for problem in await layout_problems(page)]

    return await each_width(contexts, url, ready, problems, then, opened or "body")


async def _daily_play(server: LiveServer, name: str) -> str:
    """A play of today's deal given up at once: its race's code (its page keeps the deal secret)."""
    body, client = await daily_play(server, name)
    await client.give_up()
    await client.expect(p.Finished)
    await client.close()
    return str(body["code"])


async def test_no_serious_violation_on_any_page(redis_url: str) -> None:
    async with live_server(redis_url, organiser_token=ORGANISER) as server, launch_browser() as browser:
        await seed_checked(server)
        contexts = {width: await browser.new_context(**context_options(width), bypass_csp=True,
                                                     color_scheme=scheme)  # type: ignore[arg-type]
                    for width, scheme in SCHEMES.items()}
        live = await new_race(server)
        await live.move(0, 12)
        waiting = await new_race(server, names=("eve",), start=False)
        checked = await create_race(server, seats=1, deal_source="pool")
        winner = await register(server, "Zoe")
        player = await Client.connect(server)
        await player.hello(checked.race.id, key=winner)
        await start_race(server, checked.creator_token, [player])
        await player.give_up()
        await player.expect(p.Finished)
        daily = await _daily_play(server, "dan")
        event, heat_players = await event_round(server, AUTH)
        arena_event, arena_keys, arena_races = await start_event(server, AUTH, {
            "name": "Blitz", "format": "arena", "duration": 120, "group_size": 2, "join_seconds": 3,
            "break_seconds": 0, "time_limit": 60, "deals": [WIN["deal"]]}, ("fay", "gus"))
        arena_players = await join_heats(server, arena_races, arena_keys, {"fay": 3})
        swiss, swiss_keys, pairings = await start_event(server, AUTH, {
            "name": "Swiss Cup", "format": "swiss", "rounds": 1, "join_seconds": 4, "break_seconds": 0,
            "time_limit": 120, "deals": [WIN["deal"]]}, ("hal", "ivy", "jo"))
        swiss_players = await join_heats(server, pairings, swiss_keys, {"hal": 2})
        heat = (await server.http("GET", f"/events/{event}"))[1]["schedule"][0]["heats"][0]["code"]

        problems = await _audit(contexts, f"{server.url}/watch/{live.created.race.code}", "#conn[data-state=live]")
        problems += await _audit(contexts, f"{server.url}/watch/{heat}", "#conn[data-state=live]")
        problems += await _audit(contexts, f"{server.url}/watch/{checked.race.code}", ".line-button",
                                 then=".line-button", opened="#replay[data-step='0'] #board .column")
        problems += await _audit(contexts, f"{server.url}/watch/{daily}", "#final:not([hidden])")
        problems += await _audit(contexts, f"{server.url}/event/{event}", "#event-live tbody tr")
        problems += await _audit(contexts, f"{server.url}/event/{arena_event}", "#event-standings td.now a")
        for client in heat_players + swiss_players + arena_players:
            await client.give_up()
            await client.close()
        problems += await _audit(contexts, f"{server.url}/event/{event}", "#event-status[data-status=finished]")
        problems += await _audit(contexts, f"{server.url}/event/{swiss}", "#event-status[data-status]")
        problems += await _audit(contexts, f"{server.url}/", "table.races")
        problems += await _audit(contexts, f"{server.url}/player/zoe", "table.history")
        problems += await _audit(contexts, f"{server.url}/leaderboard", "main h1")
        problems += await _audit(contexts, f"{server.url}/watch/NOPE99", "main h1")
        problems += await _audit(contexts, f"{server.url}/play", "#create-form button")
        await live.close()
        await waiting.close()
        for context in contexts.values():
            await context.close()
    assert not problems, "\n".join(problems)
