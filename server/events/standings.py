"""An event's standings and its public description, from the stored entrants and round results.

Computed on every read from the per-round results (a few hundred entrants at most per event), so
that the totals are always the sum of what the rounds say: ``thieves verify`` recomputes the very
same from the races' revealed results alone.
"""

from __future__ import annotations

from shared import protocol as p
from shared import scoring

from ..store.events import ArenaRace, ArenaState, Entrant, EventMeta


def event_totals(meta: EventMeta, entrants: list[Entrant], results: scoring.Scores) -> list[scoring.Total]:
    """Each entrant's matchpoints, cards home and time over the rounds scored so far."""
    return scoring.totals(entrants, results, meta.time_limit * 1000)


def standings(meta: EventMeta, entrants: list[Entrant], results: scoring.Scores) -> p.EventStandings:
    """``GET /events/{id}/standings``: ranked lines, each with its rounds."""
    return p.EventStandings(event=meta.id, status=meta.status, round=meta.round, round_state=meta.round_state,
                            version=meta.version,
                            lines=scoring.standing_lines(entrants, results, meta.time_limit * 1000))


def event_info(meta: EventMeta, arena_races: list[ArenaRace] | None = None) -> p.EventInfo:
    """What anyone may know of an event: its rounds' deals only once it has finished. An arena's
    schedule lists its races, one a "round" of one heat, in the order they were paired."""
    if meta.format == "arena":
        schedule = [p.EventRound(round=i, starts_at=r.starts_at,
                                 heats=[p.EventHeat(heat=1, race=r.race, code=r.code, entrants=r.entrants)])
                    for i, r in enumerate(arena_races or [], start=1)]
    else:
        schedule = meta.schedule if meta.status == "finished" else [
            p.EventRound(round=r.round, starts_at=r.starts_at, heats=r.heats) for r in meta.schedule]
    return p.EventInfo(
        id=meta.id, name=meta.name, format=meta.format, variant=meta.variant, rounds=meta.rounds,
        heat_size=meta.heat_size, time_limit=meta.time_limit, join_seconds=meta.join_seconds,
        break_seconds=meta.break_seconds, rated=meta.rated, late_entry=meta.late_entry,
        status=meta.status, round=meta.round, round_state=meta.round_state,
        created_at=meta.created_at, entrants=meta.entrants, check_in=meta.check_in, version=meta.version, schedule=schedule,
        next_at=meta.next_at if meta.status == "running" and meta.round_state == "done" else None,
        duration=meta.duration if meta.format == "arena" else 0,
        group_size=meta.group_size if meta.format == "arena" else 0, ends_at=meta.ends_at or None,
    )


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
