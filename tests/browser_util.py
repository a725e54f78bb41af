"""A real browser for the page tests: Debian's chromium driven by the ``playwright`` package.

Playwright never downloads a browser here: it launches the system's
chromium (``$THIEVES_CHROMIUM``, else ``chromium`` on PATH, else
/usr/bin/chromium). Without one the browser tests skip and say why
(``.ci/run`` installs it with apt-get); every other test still runs.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any, AsyncIterator

import pytest


def chromium_path() -> str | None:
    """The chromium to launch, or None when the machine has none."""
    for candidate in (os.environ.get("THIEVES_CHROMIUM"), shutil.which("chromium"), "/usr/bin/chromium"):
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def skip_reason() -> str | None:
    """Why the browser tests cannot run here (None: they can)."""
    try:
        import playwright.async_api  # noqa: F401
    except ImportError:
        return "browser tests skipped: the playwright package is not installed (pip install -e '.[dev]')"
    if chromium_path() is None:
        return ("browser tests skipped: no chromium on this machine (apt-get install chromium; .ci/run does it; "
                "or set THIEVES_CHROMIUM to a chromium binary)")
    return None


async def open_browser(**context_options: Any) -> AsyncIterator[Any]:
    """A fresh browser context (its own cookies and cache), closed after use."""
    from playwright.async_api import async_playwright

    path = chromium_path()
    assert path is not None
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=path, args=["--no-sandbox", "--disable-gpu"])
        try:
            context = await browser.new_context(**context_options)
            yield context
            await context.close()
        finally:
            await browser.close()


@pytest.fixture
async def browser_context() -> AsyncIterator[Any]:
    reason = skip_reason()
    if reason is not None:
        pytest.skip(reason)
    async for context in open_browser():
        refused: list[str] = []
        context.on("console", lambda m: refused.append(m.text) if "Content Security Policy" in m.text else None)
        yield context
        assert refused == [], "the page broke its Content-Security-Policy (an inline script or style?)"


async def rows(page: Any) -> dict[int, tuple[int, str, int]]:
    """The racers' table as the page shows it: seat -> (cards home, status, place)."""
    found = await page.eval_on_selector_all(
        "#racers tbody tr[data-seat]",
        "rows => rows.map(r => [Number(r.dataset.seat), Number(r.dataset.home), r.dataset.status,"
        " Number(r.querySelector('.rank').textContent)])")
    return {seat: (home, status, rank) for seat, home, status, rank in found}


def expected_rows(lines: dict[int, dict[str, Any]]) -> dict[int, tuple[int, str, int]]:
    return {seat: (e["home"], e["status"], e["rank"]) for seat, e in lines.items()}
