"""Duplicate scoring, as in duplicate bridge: every entrant of a round played the same deal, so
results compare across heats. In each round an entrant scores 1 matchpoint for every other entrant
of the round (in any heat) it beat on the race standings rule, and ½ for each tie; the event
total is the sum over the rounds. Pure functions: the runner, the standings endpoint and
``thieves verify`` all compute with these, so they cannot disagree.

Matchpoints are kept doubled (whole numbers: a tie is 1, a win 2) and halved when shown.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from . import protocol as p

NO_SHOW = "no_show"
ABSENT = "absent"


@dataclass(frozen=True)
class RoundResult:
    """One entrant's result in one round, from its heat's final standings (times from the race's start)."""

    account: str
    race: str | None
    heat: int | None
    status: str
    """finished, racing (stopped by the clock), gave_up, or no_show (drawn, never joined)."""
    home: int
    finish_ms: int | None
    """A win's time from the start."""
    home_at_ms: int | None
    """When the entrant reached its cards home, from the start (the standings' tie-break)."""


def place_key(r: RoundResult) -> tuple[int, int, int, int]:
    """The race standings rule (docs/protocol.md, "Standings and giving up") on times from each heat's
    own start, so heats compare: a win by its time; then cards home; with the same cards home playing on
    above giving up; then who got there first. A no-show is below everyone. Equal keys tie."""
    if r.status == "finished":
        return (0, r.finish_ms or 0, 0, 0)
    if r.status == NO_SHOW:
        return (2, 0, 0, 0)
    return (1, -r.home, 1 if r.status == "gave_up" else 0, r.home_at_ms if r.home_at_ms is not None else 1 << 62)


def matchpoints(results: Iterable[RoundResult]) -> dict[str, int]:
    """Each entrant's doubled matchpoints in one round: 2 per entrant beaten, 1 per tie.

    By sorting, not by comparing every pair: a live event frame scores a field of hundreds five
    times a second. An entrant's 2 per entrant beaten are 2 for each of those after its group of
    equals, and 1 for each other member of that group."""
    field = sorted(((place_key(r), r.account) for r in results))
    out: dict[str, int] = {}
    i = 0
    while i < len(field):
        j = i
        while j < len(field) and field[j][0] == field[i][0]:
            j += 1
        for _, account in field[i:j]:
            out[account] = 2 * (len(field) - j) + (j - i - 1)
        i = j
    return out


def heat_result(account: str, race: str, heat: int, results: p.Results | None, came: bool = False,
                home0: int = 0) -> RoundResult:
    """An entrant's result from its heat's Results (a no-show when it is not in the standings).

    ``came``: the entrant joined a heat that could not start (a rated heat needs two): it did not
    race, but it showed, so it counts as having played on with its starting cards (``home0``)."""
    starts = results.starts_at if results is not None and results.starts_at else 0
    for s in results.standings if results is not None else []:
        if s.account == account:
            return RoundResult(account, race, heat, s.status, s.home,
                               s.finished_at - starts if s.status == "finished" and s.finished_at else None,
                               s.home_at - starts if s.home_at else None)
    if came:
        return RoundResult(account, race, heat, "racing", home0, None, None)
    return RoundResult(account, race, heat, NO_SHOW, 0, None, None)


@dataclass
class Total:
    """An entrant's event so far: what the standings order by."""

    account: str
    name: str
    points2: int = 0
    home: int = 0
    time_ms: int = 0
    withdrawn: bool = False


def round_time(r: RoundResult, time_limit_ms: int) -> int:
    """The time a round counts toward the tie-break: a win's time, else the whole time limit."""
    return r.finish_ms if r.status == "finished" and r.finish_ms is not None else time_limit_ms


def ranked(totals: Iterable[Total]) -> list[tuple[int, Total]]:
    """Best first: matchpoints, then cards home over the event, then total time (less is better);
    entrants equal on all three share a rank (1, 2, 2, 4 ...), listed by name."""
    order = sorted(totals, key=lambda t: (-t.points2, -t.home, t.time_ms, t.name.casefold()))
    out: list[tuple[int, Total]] = []
    for i, t in enumerate(order):
        prev = out[-1] if out else None
        same = prev is not None and (prev[1].points2, prev[1].home, prev[1].time_ms) == (t.points2, t.home, t.time_ms)
        out.append((prev[0] if same and prev else i + 1, t))
    return out


def draw_heats(entrants: list[str], heat_size: int) -> list[list[str]]:
    """Split a round's field into the fewest heats of at most ``heat_size``, sizes differing by one at
    most, dealt in turn down the given order (the standings so far), so each heat gets a fair share of
    the strong and the weak: 10 entrants in heats of 4 make heats of 4, 3 and 3."""
    if not entrants:
        return []
    count = -(-len(entrants) // heat_size)
    heats: list[list[str]] = [[] for _ in range(count)]
    for i, account in enumerate(entrants):
        heats[i % count].append(account)
    return heats


WIN, TIE, NONE = 2, 1, 0
"""Arena points by place (docs/events.md, "Arenas"): a win, a tie for first (or a top-half place in a
race of three or more), anything else; doubled for an entrant on fire (two wins in a row)."""


@dataclass(frozen=True)
class Outcome:
    """What one arena race gave one entrant."""

    account: str
    points: int
    won: bool
    showed: bool


def arena_points(results: Iterable[RoundResult], on_fire: set[str]) -> list[Outcome]:
    """Each entrant's points from one finished arena race; ``on_fire``: those with two wins in a row."""
    field_ = list(results)
    keys = {r.account: place_key(r) for r in field_}
    n = len(field_)
    out = []
    for r in field_:
        mine = keys[r.account]
        better = sum(1 for o in field_ if keys[o.account] < mine)
        tied = sum(1 for o in field_ if o.account != r.account and keys[o.account] == mine)
        showed = r.status != NO_SHOW
        if not showed:
            base = NONE
        elif better == 0 and tied == 0:
            base = WIN
        elif better == 0 or (n >= 3 and better + 1 <= n // 2):
            base = TIE
        else:
            base = NONE
        out.append(Outcome(r.account, base * 2 if r.account in on_fire else base, base == WIN, showed))
    return out
