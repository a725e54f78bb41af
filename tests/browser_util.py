"""A real browser for the page tests: Debian's chromium driven by the ``playwright`` package.

Playwright never downloads a browser here: it launches the system's
chromium (``$THIEVES_CHROMIUM``, else ``chromium`` on PATH, else
/usr/bin/chromium). Without one the browser tests skip and say why
(``.ci/run`` installs it with apt-get); every other test still runs.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path
from typing import Any, AsyncIterator, Awaitable, Callable

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


@contextlib.asynccontextmanager
async def launch_browser() -> AsyncIterator[Any]:
    """The system's chromium, closed after use (a test opening pages at several widths takes one
    browser and a context per width: launching is the slow part)."""
    from playwright.async_api import async_playwright

    path = chromium_path()
    assert path is not None
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=path, args=["--no-sandbox", "--disable-gpu"])
        try:
            yield browser
        finally:
            await browser.close()


async def open_browser(**context_options: Any) -> AsyncIterator[Any]:
    """A fresh browser context (its own cookies and cache), closed after use."""
    async with launch_browser() as browser:
        context = await browser.new_context(**context_options)
        yield context
        await context.close()


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


WIDTHS = {"desktop 1280": {"width": 1280, "height": 800}, "desktop 1920": {"width": 1920, "height": 1080},
          "phone 390": {"width": 390, "height": 844}}
"""The widths every page is laid out at in the layout tests (a phone's context is also ``is_mobile``)."""


def context_options(width: str) -> dict[str, Any]:
    """A browser context of one of :data:`WIDTHS`."""
    viewport = WIDTHS[width]
    return {"viewport": viewport, "is_mobile": viewport["width"] < 600, "has_touch": viewport["width"] < 600}


LAYOUT_PROBLEMS = """(width) => {
  const problems = [];
  const shown = (node) => {
    const box = node.getBoundingClientRect();
    return box.width > 0 && box.height > 0 && getComputedStyle(node).visibility !== "hidden";
  };
  const where = (node) => node.id ? `#${node.id}` : (node.className ? `.${String(node.className).split(" ")[0]}` : node.tagName);
  if (document.documentElement.scrollWidth > width + 1) {
    problems.push(`the page scrolls sideways: ${document.documentElement.scrollWidth} px wide in ${width}`);
  }
  for (const table of document.querySelectorAll("main table")) {
    if (!shown(table)) continue;
    const heads = [...table.querySelectorAll("thead tr:first-child > *")].filter(shown);
    table.querySelectorAll("tbody tr").forEach((row, r) => {
      if (!shown(row) || row.querySelector("[colspan]")) return;
      const cells = [...row.children].filter(shown);
      if (cells.length !== heads.length) {
        problems.push(`${where(table)} row ${r + 1}: ${cells.length} cells under ${heads.length} headers`);
        return;
      }
      cells.forEach((cell, i) => {
        const c = cell.getBoundingClientRect(), h = heads[i].getBoundingClientRect();
        if (Math.abs(c.left - h.left) > 1 || Math.abs(c.right - h.right) > 1) {
          problems.push(`${where(table)} row ${r + 1}: cell ${i + 1} at ${Math.round(c.left)}-${Math.round(c.right)} px, `
            + `its header "${heads[i].textContent.trim()}" at ${Math.round(h.left)}-${Math.round(h.right)} px`);
        }
      });
    });
  }
  for (const board of document.querySelectorAll(".board")) {
    if (!shown(board)) continue;
    const columns = [...board.querySelectorAll(".column")];
    const tops = new Set(columns.map((c) => Math.round(c.getBoundingClientRect().top)));
    if (tops.size > 1) problems.push(`the board's ${columns.length} columns are on ${tops.size} rows`);
    columns.forEach((column, n) => {
      const cards = [...column.querySelectorAll("li.card")];
      cards.forEach((card, i) => {
        const box = card.getBoundingClientRect();
        if (card.scrollWidth > card.clientWidth + 1) problems.push(`column ${n + 1} card ${i + 1}: its face is cut off`);
        if (i === 0) return;
        const above = cards[i - 1].getBoundingClientRect();
        if (box.top <= above.top + 1 || Math.abs(box.left - above.left) > 1) {
          problems.push(`column ${n + 1}: card ${i + 1} is not below card ${i} (${Math.round(box.left)},${Math.round(box.top)} `
            + `after ${Math.round(above.left)},${Math.round(above.top)})`);
        }
      });
    });
  }
  return problems;
}"""
"""What is wrong with a page's layout, as the browser laid it out: a page wider than the window (the
context's viewport: a phone's browser would rather zoom out than show a scroll bar); a table
row whose shown cells are not one under each shown header (each cell's x-range the same as its header's);
a board whose columns do not stand in one row, or a column whose cards are not one per row."""


async def layout_problems(page: Any) -> list[str]:
    """:data:`LAYOUT_PROBLEMS` measured in ``page`` (an empty list: the page is laid out right)."""
    return list(await page.evaluate(LAYOUT_PROBLEMS, page.viewport_size["width"]))


async def each_width(contexts: dict[str, Any], url: str, ready: str, check: Callable[[Any], Awaitable[list[str]]],
                     then: str | None = None, opened: str = "#replay[data-step='0'] #board .column") -> list[str]:
    """``check``'s problems with ``url`` in each context (a width), each said with its url and width: the
    page is checked once ``ready`` is on it (and ``then`` was clicked, a replay button by default, and
    ``opened`` appeared)."""
    problems = []
    for width, context in contexts.items():
        page = await context.new_page()
        await page.goto(url)
        await page.wait_for_selector(ready)
        if then is not None:
            await page.locator(then).first.click()
            await page.wait_for_selector(opened)
        problems += [f"{url} at {width}: {problem}" for problem in await check(page)]
        await page.close()
    return problems
