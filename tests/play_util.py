"""Helpers for the play page's browser tests (tests/test_play_browser.py): a player's browser context on
``/play``, and waits for what its page shows. Every wait is for a condition with a deadline."""

from __future__ import annotations

import time
from typing import Any

from redis_util import DEADLINE, LiveServer

MS = int(DEADLINE * 1000)


async def player(browser: Any, server: LiveServer, name: str, register: bool = True, **options: Any) -> Any:
    """A fresh context (its own storage) on ``/play``; registered as ``name`` through the page's own form,
    else with ``name`` typed as the guest name. Its console is watched for CSP refusals and script errors
    (``page.csp``), and the addresses it requests are kept (``page.urls``)."""
    context = await browser.new_context(**options)
    page = await context.new_page()
    page.csp = []
    page.on("console", lambda m: page.csp.append(m.text) if "Content Security Policy" in m.text else None)
    page.on("pageerror", lambda e: page.csp.append(f"page error: {e}"))
    page.urls = []  # every request's address (a key must never be in one)
    page.on("request", lambda r: page.urls.append(r.url))
    await page.goto(f"{server.url}/play")
    if register:
        await page.fill("#register-name", name)
        await page.click("#register-form button")
        await page.wait_for_function(f"() => document.getElementById('who-line').textContent.includes('as {name}')",
                                     timeout=MS)
    else:
        await page.fill("#guest-name", name)
    return page


async def status(page: Any, wanted: str) -> None:
    """Wait until the page's race is in ``wanted`` (lobby, countdown, running, finished)."""
    await page.wait_for_selector(f"#race[data-status={wanted}]", timeout=MS)


async def moves(page: Any, count: int) -> None:
    """Wait until the page's board shows the game after ``count`` moves (its last ack)."""
    await page.wait_for_selector(f"#play-board[data-moves='{count}']", timeout=MS)


async def text(page: Any, selector: str, words: str) -> None:
    """Wait until ``selector``'s text holds ``words``."""
    await page.wait_for_function("([s, w]) => (document.querySelector(s)?.textContent || '').includes(w)",
                                 arg=[selector, words], timeout=MS)


def top_card(column: int) -> str:
    """The selector of the top card of a column (1-based), the card a click or a drag takes."""
    return f"#play-board .col:nth-child({column}) li:last-child button"


async def drag(page: Any, source: str, target: str) -> None:
    """Drag ``source`` onto ``target`` with the mouse, step by step (pointer events all the way)."""
    a = await page.locator(source).bounding_box()
    b = await page.locator(target).bounding_box()
    await page.mouse.move(a["x"] + a["width"] / 2, a["y"] + a["height"] / 2)
    await page.mouse.down()
    await page.mouse.move(b["x"] + b["width"] / 2, b["y"] + b["height"] / 2, steps=8)
    await page.mouse.up()


async def touch_drag(page: Any, source: str, target: str) -> None:
    """Drag ``source`` onto ``target`` with a finger: touch events through chromium's own input (the
    DevTools protocol), which the page sees as pointer events of type touch."""
    a = await page.locator(source).bounding_box()
    b = await page.locator(target).bounding_box()
    (x0, y0), (x1, y1) = [(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2) for box in (a, b)]
    cdp = await page.context.new_cdp_session(page)
    start = time.time()
    points = [(x0 + (x1 - x0) * step / 8, y0 + (y1 - y0) * step / 8) for step in range(9)] + [(x1, y1)] * 4

    async def touch(kind: str, n: int, at: list[dict[str, float]]) -> None:
        # Input a twentieth of a second apart, the finger at rest at the end: a slow drag, not a fling
        # (chromium takes the first tap after a fling to stop it, and makes no click of it).
        await cdp.send("Input.dispatchTouchEvent", {"type": kind, "touchPoints": at, "timestamp": start + n / 20})

    await touch("touchStart", 0, [{"x": x0, "y": y0}])
    for n, (x, y) in enumerate(points[1:], 1):
        await touch("touchMove", n, [{"x": x, "y": y}])
    await touch("touchEnd", len(points), [])
    await cdp.detach()


def place(letter: str) -> str:
    """The selector a click or tap on a place of the notation lands on: a column's top card (or its
    empty slot), the waste's top card, home, or the stock."""
    if letter == "W":
        return "#play-board .waste button"
    if letter == "F":
        return "#play-board .home"
    if letter in "SR":
        return "#play-board .stock"
    return top_card(ord(letter) - ord("a") + 1)


async def tap_move(page: Any, move: str, played: int) -> None:
    """Play ``move`` (plain notation, one card) by touch: a tap on its source, a tap on its target;
    then wait for the board after it (``played`` moves before it)."""
    if move in ("S", "R"):
        await page.tap(place(move))
    else:
        await page.tap(place(move[0]))
        await page.tap(place(move[1]))
    await moves(page, played + 1)
