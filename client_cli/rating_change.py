"""The rating change a rated race made, for its end screen: "rating 1000 → 1032 (+32)".

The race's results are applied to the accounts after the race has ended, by whichever server process
gets to it first (docs/protocol.md, "Accounts, seats and ratings"), so the final standings cannot carry
the change. The end screen asks the account's history (``GET /players/{name}/races``, whose entry for
the race names the rating before and after) every :data:`POLL_SECONDS` until the entry is there, for at
most :data:`WAIT_SECONDS`.
"""

from __future__ import annotations

import asyncio
import time

from shared import protocol as p

POLL_SECONDS = 1.0
WAIT_SECONDS = 120.0
"""How long the end screen waits for the results to be applied (they normally are within a second)."""


def rating_words(entry: p.HistoryEntry) -> str | None:
    """The change in one line, or None when the entry holds none (not rated, not applied yet)."""
    if entry.rating_before is None or entry.rating_after is None:
        return None
    change = entry.rating_after - entry.rating_before
    return f"rating {entry.rating_before} → {entry.rating_after} ({change:+d})"


async def rating_change(server: str, account: str, race: str) -> str | None:
    """Wait until the account's history has the rated race applied: its rating line (None if it never
    came in time). A server out of reach a moment is asked again."""
    from . import api

    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        try:
            page = await asyncio.to_thread(api.history, server, account, 10)
        except api.ApiError as exc:
            if exc.code is not None:  # the server refused (no such account): asking again changes nothing
                return None
        else:
            for entry in page.races:
                if entry.race == race:
                    return rating_words(entry)
        await asyncio.sleep(POLL_SECONDS)
    return None
