"""Take the screenshots of the play page (docs/web/play-1920.png, play-1280.png, play-390.png) in
Debian's chromium.

    .venv/bin/python scripts/play_screenshots.py [--out docs/web]

A private Redis and a live server on free ports; a race on deal 2 of two: ann plays in the browser
(the first moves of the test suite's winning line, by click), bob is a scripted client.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from browser_util import launch_browser  # noqa: E402
from play_util import player, status, tap_move  # noqa: E402
from redis_util import Client, create_race, live_server  # noqa: E402
from web_util import WIN  # noqa: E402

from server.ops.embedded import EmbeddedRedis, free_port  # noqa: E402
from shared import protocol as p  # noqa: E402

WIDTHS = {1920: 1080, 1280: 800, 390: 844}


async def shoot(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, EmbeddedRedis(Path(tmp), port=free_port(), appendonly=False) as redis:
        async with live_server(redis.url, progress_hz=10.0) as server, launch_browser() as browser:
            created = await create_race(server, seats=2, start_mode="all-ready", deal_source="number",
                                        deal=WIN["deal"], time_limit=600)
            ann = await player(browser, server, "ann", register=False, has_touch=True,
                               viewport={"width": 1280, "height": 800})
            await ann.fill("#join-code", created.race.code)
            await ann.click("#join-form button")
            await status(ann, "lobby")
            bob = await Client.connect(server)
            await bob.hello(created.race.id, "bob")
            await bob.send(p.Ready())
            await ann.keyboard.press("s")
            await status(ann, "running")
            for played, move in enumerate(WIN["moves"][:30]):
                await tap_move(ann, move, played)
            for move in WIN["moves"][:21]:
                await bob.move(move)
            await ann.click("#play-board .col:nth-child(9) li:last-child button")  # a card picked
            await ann.wait_for_function("() => document.querySelector(\"#racers tr[data-seat='1'] td.moves\")"
                                        "?.textContent === '21'")  # the rival's bar is up to date
            for width, height in WIDTHS.items():
                await ann.set_viewport_size({"width": width, "height": height})
                await ann.screenshot(path=out / f"play-{width}.png", full_page=True)
            await bob.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "web")
    asyncio.run(shoot(parser.parse_args().out))


if __name__ == "__main__":
    main()
