"""The play page: ``/play``, where a player races in the browser on the same protocol as the terminal.

The page is static/play.js talking msgpack over ``/ws`` (docs/protocol.md is its whole contract) and
the JSON endpoints with the account key in an ``Authorization`` header. The server renders only the
frame of the page and the few settings the forms offer (variants and clocks): what to join comes from
the page's own address (``?race=CODE``, ``?event=ID``) and the player's choices, never from anything
secret. Why a page of its own rather than the watch page grown: a watcher's page holds no key and
sends nothing, which keeps it simple to reason about; everything that acts for a player lives here.
See docs/play.md.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from shared import protocol as p
from shared.seeks import SEEK_TIME_LIMIT
from shared.variants import VARIANTS

from .render import render

CLOCKS = (60, 180, 300, 600, 900)
"""The time limits the forms offer (seconds); a seek's must lie in ``SEEK_TIME_LIMIT``."""


async def play(request: Request) -> Response:
    """The play page: identity, find a race, challenges, join by code, and the race itself."""
    variants = [{"key": key, "name": v.name, "columns": v.columns} for key, v in VARIANTS.items()]
    low, high = SEEK_TIME_LIMIT
    settings = {"protocol": p.PROTOCOL_VERSION, "variants": variants,
                "clocks": [c for c in CLOCKS if low <= c <= high]}
    return render("play.html", title="Play", settings=settings)
