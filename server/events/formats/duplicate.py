"""Duplicate events (docs/events.md, "Duplicate events"): every round, every entrant plays the same
deal, in heats of at most ``heat_size`` dealt in turn down the standings; a round gives matchpoints
(1 for each entrant of the round beaten, ½ a tie) over all its heats."""

from __future__ import annotations

from shared import scoring

from ...store.events import EventMeta
from ..rounds import Drawn, RoundsFormat


class Duplicate(RoundsFormat):
    name = "duplicate"
    score_field = "matchpoints"
    score_rule = "Matchpoints over the rounds played"

    def draw(self, meta: EventMeta, field: list[str], results: scoring.Scores) -> Drawn:
        return Drawn(scoring.draw_heats(field, meta.heat_size))

    def score(self, field: list[scoring.RoundResult]) -> dict[str, int]:
        return scoring.matchpoints(field)

    def summary(self, meta: EventMeta) -> str:
        return f"{meta.rounds} round{'s' if meta.rounds != 1 else ''} in heats of {meta.heat_size}"


DUPLICATE = Duplicate()
