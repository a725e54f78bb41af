"""The play page as served (/play): its edge headers, no inline script, nothing secret in it, its
scripts and styles under 100 KB (measured over HTTP, following every module import), and its files
shipped with the package. The page in a browser is tests/test_play_browser.py."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import httpx

from redis_util import LiveServer, TEST_SECRET

BUDGET = 100_000
"""Bytes of scripts and styles the play page may load, uncompressed (issue 38)."""
IMPORT = re.compile(r"""(?:import|export)\s[^;]*?from\s+["']([^"']+)["']""")


async def test_the_play_page_keeps_the_edge_and_holds_no_secret(server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=server.url) as http:
        page = await http.get("/play")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    csp = page.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    for tag in re.findall(r"<script\b[^>]*>", page.text):
        assert 'src="/static/' in tag or 'type="application/json"' in tag, f"an inline script: {tag}"
    assert "set-cookie" not in page.headers
    for secret in ("creator_token", "organiser", TEST_SECRET, "Bearer"):
        assert secret not in page.text
    assert 'href="/play"' in page.text, "every page's navigation leads to it"


async def test_the_play_pages_scripts_and_styles_are_under_100_kb(server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=server.url) as http:
        html = (await http.get("/play")).text
        todo = re.findall(r'<script[^>]* src="([^"]+)"', html) + re.findall(r'<link rel="stylesheet" href="([^"]+)"', html)
        sizes: dict[str, int] = {}
        while todo:
            path = todo.pop()
            if path in sizes:
                continue
            answer = await http.get(path, headers={"accept-encoding": "identity"})
            assert answer.status_code == 200, path
            sizes[path] = len(answer.content)
            if path.endswith(".js"):
                base = path.rsplit("/", 1)[0]
                todo += [f"{base}/{name.removeprefix('./')}" for name in IMPORT.findall(answer.text)]
    assert {"/static/play.js", "/static/play_board.js", "/static/play_net.js", "/static/play_end.js",
            "/static/play_find.js", "/static/play_event.js", "/static/play.css",
            "/static/vendor/msgpack/msgpack.min.js", "/static/web.css", "/static/cards.js"} <= set(sizes)
    total = sum(sizes.values())
    print(f"the play page loads {total} bytes of scripts and styles: {sizes}")
    assert total < BUDGET, sizes


def test_the_play_pages_files_ship_with_the_package() -> None:
    root = Path(__file__).parent.parent
    data = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["server"]
    shipped = {f for pattern in data for f in (root / "server").glob(pattern)}
    static = root / "server" / "web" / "static"
    for name in ("play.js", "play_board.js", "play_net.js", "play_event.js", "play_end.js", "play_find.js", "play.css",
                 "vendor/msgpack/msgpack.min.js", "vendor/msgpack/LICENSE"):
        assert static / name in shipped, name
    assert root / "server" / "web" / "templates" / "play.html" in shipped
