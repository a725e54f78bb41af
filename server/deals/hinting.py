"""Hints for racers: the solver on a player's authoritative position, off the event loop.

The solver runs in a small pool of worker processes (:mod:`server.workers`
says why not a thread); ``--hint-workers 0`` keeps it in a thread (one
process less, for a machine with one core).

The work crosses the process boundary as text: the position in the engine's
text form and the previous hint as JSON (:meth:`shared.hints.Hint.to_json`),
which is also what the store keeps between a player's hints.
"""

from __future__ import annotations

import json
import time

from shared.engine import Game
from shared.hints import Hint, hint

from ..config import DealSettings
from ..ops.workers import Workers

SLACK_SECONDS = 10.0
"""How much longer than its budget a hint may take (queueing behind other
players' hints, a worker starting) before the request fails."""


def compute_hint(position: str, previous: str | None, budget: float) -> tuple[str, float]:
    """The hint JSON for ``position`` and the seconds the solver spent (runs in a worker).

    A stored previous hint that no longer parses is ignored: the worst case
    is a fresh search instead of following the old line.
    """
    game = Game.from_position(position)
    prev = None
    if previous:
        try:
            prev = Hint.from_json(json.loads(previous))
        except ValueError:
            prev = None
    started = time.perf_counter()
    found = hint(game, time_budget=budget, previous=prev)
    return json.dumps(found.to_json()), time.perf_counter() - started


class HintRunner:
    """Runs :func:`compute_hint` in worker processes (``--hint-workers`` > 0) or a thread; its settings
    (``--hint-budget``, ``--hint-interval``) are the hints' rules, read by the seat that asks."""

    def __init__(self, settings: DealSettings) -> None:
        self.settings = settings
        self.workers = Workers(settings.hint_workers)

    def start(self) -> None:
        """Start the worker processes now, so the first hint does not pay for their start."""
        self.workers.start()

    async def run(self, position: str, previous: str | None) -> tuple[Hint, str, float]:
        """``(hint, its JSON, solver seconds)`` for ``position``, searched for ``--hint-budget`` seconds."""
        budget = self.settings.hint_budget
        text, seconds = await self.workers.call(budget + SLACK_SECONDS, compute_hint, position, previous, budget)
        return Hint.from_json(json.loads(text)), text, seconds

    def close(self, kill: bool = False) -> None:
        """Stop the workers: none may outlive the server. By default a running hint
        is waited for (at most its budget); ``kill`` abandons it (a server that is
        stopping has closed the connection the answer was for)."""
        self.workers.close(kill=kill)
