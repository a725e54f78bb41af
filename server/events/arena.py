"""Arena rules (pure): who is paired with whom, and what a race is worth.

In the manner of lichess arenas: for the arena's duration an entrant who is waiting (just entered,
or just finished a race) is paired at once with waiting entrants of close score; a win is 2, a tie
for first 1 (and, in races of three or more, a place in the top half 1), nothing else; after two
wins in a row the entrant is "on fire" and its points count double until a race is not won. The
same pair never meets twice in a row while someone else is waiting. Races under way at the end
count when they finish.
"""

from __future__ import annotations

from typing import Iterable

from ..store.events import ArenaState
from shared.scoring import Outcome, RoundResult, arena_points



def pair(waiting: list[tuple[str, ArenaState]], group_size: int) -> list[list[str]]:
    """Groups of ``group_size`` from the waiting entrants, close in score (best first); the odd ones
    out wait for the next race to end. A group that would repeat a pair's last race is swapped with
    the next waiting entrant when there is one."""
    order = sorted(waiting, key=lambda w: (-w[1].points, w[0]))
    names = [a for a, _ in order]
    last = {a: set(s.last) for a, s in order}
    groups = []
    i = 0
    while len(names) - i >= group_size:
        group = names[i:i + group_size]
        if _repeats(group, last) and i + group_size < len(names):
            names[i + group_size - 1], names[i + group_size] = names[i + group_size], names[i + group_size - 1]
            group = names[i:i + group_size]
        groups.append(group)
        i += group_size
    return groups


def _repeats(group: list[str], last: dict[str, set[str]]) -> bool:
    """Every member's last race was with exactly these others."""
    return all(last[a] == set(group) - {a} for a in group)


def race_points(results: Iterable[RoundResult], states: dict[str, ArenaState]) -> list[Outcome]:
    """What one finished arena race gives each of its entrants (``states``: before the race)."""
    return arena_points(results, {a for a, s in states.items() if s.on_fire})


def after_race(state: ArenaState, outcome: Outcome, home: int, others: list[str]) -> ArenaState:
    """The entrant's state once a race is scored: back to waiting (paused after a no-show)."""
    return ArenaState(
        status="waiting" if outcome.showed else "paused", race="", points=state.points + outcome.points,
        streak=state.streak + 1 if outcome.won else 0, wins=state.wins + int(outcome.won),
        races=state.races + int(outcome.showed), home=state.home + home, last=others)


def ranked(states: dict[str, ArenaState]) -> list[tuple[int, str]]:
    """Best first: points, then wins, then cards home over all races; equal on all three share a rank."""
    order = sorted(states, key=lambda a: (-states[a].points, -states[a].wins, -states[a].home, a))
    out: list[tuple[int, str]] = []
    for i, a in enumerate(order):
        s = states[a]
        if out:
            prev = states[out[-1][1]]
            if (prev.points, prev.wins, prev.home) == (s.points, s.wins, s.home):
                out.append((out[-1][0], a))
                continue
        out.append((i + 1, a))
    return out
