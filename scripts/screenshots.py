"""Take the README's screenshots of the spectator pages (docs/web/*.png) in Debian's chromium.

    .venv/bin/python scripts/screenshots.py [--out docs/web]

A private Redis and a live server on free ports, three scripted players on
deal 2 (the test suite's helpers: tests/redis_util.py, tests/web_util.py),
and playwright driving the system chromium (it never downloads one).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from browser_util import chromium_path, expected_rows, rows  # noqa: E402
from redis_util import eventually, live_server  # noqa: E402
from web_util import new_race, server_lines  # noqa: E402

from server.ops.embedded import EmbeddedRedis, free_port  # noqa: E402


async def shoot(out: Path) -> None:
    from playwright.async_api import async_playwright

    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        redis = EmbeddedRedis(Path(tmp), port=free_port(), appendonly=False)
        redis.start()
        try:
            async with live_server(redis.url, progress_hz=10.0, organiser_token=ORGANISER) as server, \
                    async_playwright() as pw:
                browser = await pw.chromium.launch(executable_path=chromium_path(), args=["--no-sandbox"])
                race = await new_race(server, names=("ann", "bob", "cy"), time_limit=600)
                other = await new_race(server, names=("dee", "eve"), time_limit=300)
                lobby = await new_race(server, names=("fay",), start=False)
                await race.move(0, 30)
                await race.move(1, 22)
                await race.move(2, 9)
                await other.move(0, 4)

                desktop = await browser.new_context(viewport={"width": 1000, "height": 640})
                page = await desktop.new_page()
                await page.goto(f"{server.url}/")
                await page.screenshot(path=out / "index.png")

                await page.goto(f"{server.url}/watch/{race.created.race.code}")
                await page.wait_for_selector("#conn[data-state=live]")
                await eventually(lambda: _same(page, server, race.id), "the live table")
                await page.screenshot(path=out / "watch-live.png")

                phone = await browser.new_context(viewport={"width": 390, "height": 720}, color_scheme="dark",
                                                  is_mobile=True, device_scale_factor=1)
                small = await phone.new_page()
                await small.goto(f"{server.url}/watch/{race.created.race.code}")
                await small.wait_for_selector("#conn[data-state=live]")
                await small.screenshot(path=out / "watch-phone-dark.png")

                await race.give_up(2)
                await race.end(server)
                await page.wait_for_selector("#final:not([hidden])")
                await page.get_by_role("button", name="Replay ann's game (30 steps)").click()
                await page.wait_for_selector("#replay[data-step='0']")
                for _ in range(18):
                    await page.get_by_role("button", name="Next").click()
                await page.wait_for_selector("#replay[data-step='18']")
                await page.locator("#final").scroll_into_view_if_needed()
                await page.screenshot(path=out / "watch-replay.png", full_page=True)

                await _accounts(server, redis.url)
                await page.goto(f"{server.url}/leaderboard")
                await page.screenshot(path=out / "leaderboard.png")
                await page.goto(f"{server.url}/player/Ann")
                await page.screenshot(path=out / "player.png")

                await _event_page(server, page, out)

                dark = await browser.new_context(viewport={"width": 1000, "height": 900}, color_scheme="dark")
                page = await dark.new_page()
                await page.goto(f"{server.url}/watch/{race.created.race.code}")
                await page.get_by_role("button", name="Replay bob's game (22 steps)").click()
                await page.wait_for_selector("#replay[data-step='0']")
                await page.locator("#replay").scroll_into_view_if_needed()
                await page.screenshot(path=out / "replay-dark.png")
                await browser.close()
                for r in (race, other, lobby):
                    await r.close()
        finally:
            redis.stop()
    for png in sorted(out.glob("*.png")):
        print(png.relative_to(ROOT) if png.is_relative_to(ROOT) else png)


ORGANISER = "screenshots-organiser"


async def _event_page(server, page, out: Path) -> None:  # type: ignore[no-untyped-def]
    """A one-round duplicate event of four in heats of two, its round live."""
    from redis_util import Client, register
    from web_util import WIN

    from shared import protocol as p

    auth = {"authorization": f"Bearer {ORGANISER}"}
    _, event = await server.http("POST", "/events", {"name": "Friday Cup", "rounds": 1, "heat_size": 2,
                                                     "join_seconds": 2, "break_seconds": 0, "time_limit": 300,
                                                     "deals": [WIN["deal"]]}, headers=auth)
    keys = {}
    for name in ("Gil", "Hal", "Ivy", "Jo"):
        keys[name.lower()] = await register(server, name)
        await server.http("POST", f"/events/{event['id']}/entrants", headers={"authorization": f"Bearer {keys[name.lower()]}"})
    await server.http("POST", f"/events/{event['id']}/start", headers=auth)

    async def drawn() -> bool:
        _, info = await server.http("GET", f"/events/{event['id']}")
        return bool(info["schedule"])

    await eventually(drawn, "the heats")
    _, info = await server.http("GET", f"/events/{event['id']}")
    clients = []
    for heat in info["schedule"][0]["heats"]:
        for account in heat["entrants"]:
            client = await Client.connect(server)
            await client.hello(heat["code"], key=keys[account])
            clients.append((account, client))
    for _, client in clients:
        await client.expect(p.Countdown, timeout=30)
    for (account, client), moves in zip(clients, (19, 12, 3, 25)):
        for text in WIN["moves"][:moves]:
            await client.move(text)
    await page.goto(f"{server.url}/event/{event['id']}")
    await page.wait_for_selector("#conn[data-state=live]")
    await page.wait_for_function("document.querySelectorAll('#event-live tbody tr').length === 4")
    await page.screenshot(path=out / "event.png", full_page=True)
    for _, client in clients:
        await client.close()


async def _accounts(server, redis_url: str) -> None:  # type: ignore[no-untyped-def]
    """A few accounts with rated and casual races in their history, as the results store keeps them."""
    import redis as sync_redis
    from results_util import put_account, put_finished_race, standing

    client = sync_redis.Redis.from_url(redis_url)
    for name in ("Ann", "Bob", "Cy", "Dee"):
        put_account(client, name)
    games = [("ann", "bob", "cy"), ("bob", "ann", "dee"), ("ann", "dee", "cy"), ("cy", "ann", "bob")]
    for i, order in enumerate(games):
        lines = [standing(0, order[0], "finished", 104, 200_000 + 9000 * i, 200_000 + 9000 * i),
                 standing(1, order[1], home=80 - i), standing(2, order[2], "gave_up", home=30 + i)]
        put_finished_race(client, f"rated{i}", lines, ended_after=400_000 + 60_000 * i)
        assert (await server.results.apply(f"rated{i}")).value == "applied"
    client.close()


async def _same(page, server, race: str) -> bool:  # type: ignore[no-untyped-def]
    return await rows(page) == expected_rows(await server_lines(server, race))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "web")
    args = parser.parse_args()
    if chromium_path() is None:
        sys.exit("no chromium: apt-get install chromium (or set THIEVES_CHROMIUM)")
    asyncio.run(shoot(args.out))


if __name__ == "__main__":
    main()
