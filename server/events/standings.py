"""An event's standings, from the stored entrants and round results (the public description is the
format's: server/events/format.py).

Computed on every read from the per-round results (a few hundred entrants at most per event), so
that the totals are always the sum of what the rounds say: ``thieves verify`` recomputes the very
same from the races' revealed results alone.
"""

from __future__ import annotations

from typing import Callable

from shared import protocol as p
from shared import scoring

from ..store.events import ArenaState, Entrant, EventMeta


def event_totals(meta: EventMeta, entrants: list[Entrant], results: scoring.Scores) -> list[scoring.Total]:
    """Each entrant's matchpoints, cards home and time over the rounds scored so far."""
    return scoring.totals(entrants, results, meta.time_limit * 1000)


Lines = Callable[[list[Entrant], scoring.Scores, int], list[p.EventStandingLine]]
"""A round-based format's standings rule: its lines from the entrants, the scored rounds and the time limit."""


def standings(meta: EventMeta, entrants: list[Entrant], results: scoring.Scores,
              lines: Lines = scoring.standing_lines) -> p.EventStandings:
    """``GET /events/{id}/standings``: ranked lines, each with its rounds (by the format's ``lines``)."""
    return p.EventStandings(event=meta.id, status=meta.status, round=meta.round, round_state=meta.round_state,
                            version=meta.version, lines=lines(entrants, results, meta.time_limit * 1000))


def arena_standings(meta: EventMeta, entrants: list[Entrant], states: dict[str, ArenaState]) -> p.EventStandings:
    """An arena's standings: points, then wins, then cards home (docs/events.md, "Arenas")."""
    every = {e.account: states.get(e.account, ArenaState()) for e in entrants}
    names = {e.account: e for e in entrants}
    lines = [p.EventStandingLine(rank=rank, account=a, name=names[a].name, matchpoints=0.0, home=every[a].home,
                                 time_ms=0, withdrawn=names[a].withdrawn, points=every[a].points,
                                 wins=every[a].wins, races=every[a].races, streak=every[a].streak,
                                 status=every[a].status, race=every[a].race or None)
             for rank, a in scoring.arena_ranked(every)]
    return p.EventStandings(event=meta.id, status=meta.status, round=meta.round, round_state=meta.round_state,
                            version=meta.version, lines=lines)
