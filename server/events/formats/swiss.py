"""Swiss events (docs/events.md, "Swiss"): ``rounds`` rounds on the round machine (server/events/rounds.py),
each round's field paired head to head by score, never the same pair twice while avoidable, the odd one
out given a bye; a race won is 1 point, a tie ½, a bye 1. The pairing, the points, the byes and the
tie-breaks are ``shared/swiss.py``'s, pure, so that ``thieves verify`` recomputes and checks every round's
pairing with the very same functions; this module only hands them the event's data."""

from __future__ import annotations

from shared import protocol as p
from shared import scoring, swiss

from ...store.events import EventMeta
from ..rounds import Drawn, RoundsFormat


class Swiss(RoundsFormat):
    name = "swiss"
    score_field = "score"
    tiebreaks = ("buchholz", "sonneborn_berger")
    score_rule = "Points (a win 1, a tie ½, a bye 1), then Buchholz, then Sonneborn-Berger"
    standing_lines = staticmethod(swiss.standing_lines)

    def refusal(self, req: p.EventCreate) -> tuple[p.ErrorCode, str] | None:
        if req.group_size != 2:
            return p.ErrorCode.BAD_FIELD, f"group_size: a Swiss event pairs head to head (2), not {req.group_size}"
        return super().refusal(req)

    def draw(self, meta: EventMeta, field: list[str], results: scoring.Scores) -> Drawn:
        pairing = swiss.pair(field, swiss.records(results))
        return Drawn([list(pair) for pair in pairing.pairs], [pairing.bye] if pairing.bye is not None else [])

    def score(self, field: list[scoring.RoundResult]) -> dict[str, int]:
        return swiss.points(field)

    def summary(self, meta: EventMeta) -> str:
        return f"{meta.rounds} Swiss round{'s' if meta.rounds != 1 else ''}, head to head"

    def shown_settings(self, meta: EventMeta) -> dict[str, object]:
        return {"heat_size": 2}


SWISS = Swiss()
