"""Every page laid out right in a real browser at 1280, 1920 and 390 px wide (Debian's chromium).

Measured in the browser, not guessed from the CSS: each table header stands over its own column's
cells (its x-range is theirs), no page scrolls sideways, a replay board's ten columns stand in one
row with their cards one per row (browser_util.LAYOUT_PROBLEMS). One browser for the module; the
pages are a race live and over (with a replay open), an account's page, the front page, the leaderboard
and an event live and over.
"""

from __future__ import annotations

from typing import Any

import pytest
import redis
from browser_util import WIDTHS, context_options, each_width, launch_browser, layout_problems, skip_reason
from redis_util import live_server
from results_util import apply, put_account, put_finished_race, standing
from web_util import event_round, new_race

pytestmark = pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")

ORGANISER = "organiser-secret-for-layout"
AUTH = {"authorization": f"Bearer {ORGANISER}"}


async def _check(contexts: dict[str, Any], url: str, ready: str, then: str | None = None) -> list[str]:
    """The layout problems of ``url`` at every width: waits for the selector ``ready`` (and clicks ``then``,
    a replay button, waiting for its first board)."""
    return await each_width(contexts, url, ready, layout_problems, then)


async def test_every_page_at_desktop_and_phone_widths(redis_url: str, sync: redis.Redis) -> None:
    async with live_server(redis_url, organiser_token=ORGANISER) as server, launch_browser() as browser:
        contexts = {width: await browser.new_context(**context_options(width)) for width in WIDTHS}
        refused: list[str] = []
        for context in contexts.values():
            context.on("console", lambda m: refused.append(m.text) if "Content Security Policy" in m.text else None)
        live = await new_race(server)
        await live.move(0, 12)
        await live.move(1, 3)
        over = await new_race(server, names=("ann", "bob"))
        await over.move(0, 12)
        await over.end(server)
        put_account(sync, "Zed")
        put_finished_race(sync, "rated1", [standing(0, "zed", "finished", 104, 90_000, 90_000),
                                           standing(1, None, home=50)])
        await apply(server, "rated1")
        event, players = await event_round(server, AUTH)

        problems = await _check(contexts, f"{server.url}/watch/{live.created.race.code}",
                                "#conn[data-state=live]")
        problems += await _check(contexts, f"{server.url}/watch/{over.created.race.code}",
                                 "#standings .replay-button", then="#standings .replay-button")
        problems += await _check(contexts, f"{server.url}/player/zed", "table.history")
        problems += await _check(contexts, f"{server.url}/", "table.races")
        problems += await _check(contexts, f"{server.url}/leaderboard", "main h1")
        problems += await _check(contexts, f"{server.url}/event/{event}", "#event-live tbody tr")
        for client in players:
            await client.give_up()
            await client.close()
        problems += await _check(contexts, f"{server.url}/event/{event}", "#event-status[data-status=finished]")
        await live.close()
        await over.close()
        for context in contexts.values():
            await context.close()
    assert not problems, "\n".join(problems)
    assert refused == [], "a page broke its Content-Security-Policy"
