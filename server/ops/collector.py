"""The garbage collector's settings for a long-running server process.

Why: CPython starts a young collection every 700 net container
allocations and, now and then, a full one that walks every live object;
a race server allocates a few containers a move (frames, boards, futures)
and holds a large, slowly growing heap (every game, its moves, its last
boards), so the full collections grow with it. Measured under
``bench/race_load.py`` (200 players, some 200,000 moves): the default
collected 717 times for 0.37 s of the server's CPU, about 1.8 us a move;
with the thresholds below, 7 times for 0.05 s. Almost all garbage here is
freed by reference counting the moment it is dropped; the collector is only
for cycles (exceptions with tracebacks, closed tasks), which wait a little
longer for their collection and are still collected (a full collection still
comes, after some ten million allocations instead of some seventy thousand).
"""

from __future__ import annotations

import gc

THRESHOLDS = (50_000, 20, 10)
"""Young collections every 50,000 net allocations; the middle generation every 20 of those; a full
collection every 10 middle ones (and, as always, only once the survivors grew by a quarter)."""


def tune() -> None:
    """Set :data:`THRESHOLDS`, and move everything allocated so far (modules, their functions and
    constants) out of the collector's sight for good: full collections walk only what serving made."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)
