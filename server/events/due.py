"""What an event's format is due to do next: pure functions of the event's state (an arena's: and its
races) and the time, with no read, no clock and no step of their own, so that each format's schedule of
steps is table-tested (tests/test_event_due.py) and the formats' ``advance`` only does the I/O.

The round machine (server/events/rounds.py: duplicate, Swiss) is due for one step at a time, named by
its transition, from a time its state holds; an arena (server/events/formats/arena.py) pairs while it
runs, starts and scores its races one by one, and closes once its time is up and all are scored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from shared.event_states import Transition

from ..store.events import ArenaRace, EventMeta


@dataclass(frozen=True)
class Due:
    """A round-based event's next step and from when it is due (ms since the epoch; 0: whenever its
    format finds it can: a round is scored once every heat has ended, which only the races can say)."""

    step: Transition
    at: int

    def now(self, now: int) -> bool:
        return now >= self.at


def round_due(meta: EventMeta) -> Due | None:
    """The round machine's next step: claim the next round for drawing (once the break is over), take
    over a claim that ran out, start the drawn heats (at their start time), or score the round (its last
    one finishing the event). None when no step of the machine is left (not running, or all played)."""
    if meta.status != "running":
        return None
    if meta.round_state == "done":
        return Due(Transition.CLAIM_ROUND, meta.next_at) if meta.round < meta.rounds else None
    if meta.round_state == "opening":
        return Due(Transition.TAKE_OVER_CLAIM, meta.claim_until)
    if meta.round_state == "open":
        return Due(Transition.START_HEATS, meta.starts_at)
    if meta.round_state == "running":
        return Due(Transition.SCORE_LAST_ROUND if meta.round >= meta.rounds else Transition.SCORE_ROUND, 0)
    return None


def round_due_now(meta: EventMeta, now: int) -> Transition | None:
    """The round machine's step due at ``now``, if any."""
    due = round_due(meta)
    return due.step if due is not None and due.now(now) else None


def arena_pairs(meta: EventMeta, now: int) -> bool:
    """An arena pairs its waiting entrants until its end (races under way then still count)."""
    return now < meta.ends_at


RaceStep = Literal["start", "score"]


def arena_race_steps(races: list[ArenaRace], now: int) -> list[tuple[ArenaRace, RaceStep]]:
    """An arena's races that are due for a step, in the order they were paired: started at their start
    time, then scored (once: whether it has ended yet only the race can say)."""
    steps: list[tuple[ArenaRace, RaceStep]] = []
    for race in races:
        if not race.started and now >= race.starts_at:
            steps.append((race, "start"))
        elif race.started and not race.scored:
            steps.append((race, "score"))
    return steps


def arena_closes(meta: EventMeta, races: list[ArenaRace], now: int) -> bool:
    """An arena closes (the event finishes) once its time is up and every race it paired is scored."""
    return now >= meta.ends_at and all(r.scored for r in races)


def arena_next_at(meta: EventMeta, races: list[ArenaRace], now: int) -> int | None:
    """When an arena is next due for a timed step after ``now``: a paired race's start, or its end (None:
    nothing timed is left; scoring waits on the races)."""
    times = [r.starts_at for r in races if not r.started and r.starts_at > now]
    if now < meta.ends_at:
        times.append(meta.ends_at)
    return min(times, default=None)
