"""Arena pairing (pure): who is paired with whom, in the manner of lichess arenas: for the arena's
duration an entrant who is waiting (just entered, or just finished a race) is paired at once with
waiting entrants of close score. The same pair never meets twice in a row while someone else is
waiting. Races under way at the end count when they finish.

What a race is worth (a win 2, a tie for first 1, doubled on fire), the streaks and the ranking are
``shared/scoring.py``'s, so ``thieves verify`` recomputes them with the very same functions.
"""

from __future__ import annotations

from dataclasses import replace

from shared import scoring

from ..store.events import ArenaState


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


def after_race(state: ArenaState, outcome: scoring.Outcome, others: list[str]) -> ArenaState:
    """The entrant's stored state once a race is scored: its tally (``shared.scoring.after_race``),
    out of the race, waiting or paused, and who it last met."""
    return replace(scoring.after_race(state, outcome), status=scoring.status_after(outcome), race="", last=others)
