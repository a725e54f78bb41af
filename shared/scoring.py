"""Duplicate scoring, as in duplicate bridge: every entrant of a round played the same deal, so
results compare across heats. In each round an entrant scores 1 matchpoint for every other entrant
of the round (in any heat) it beat on the race standings rule, and ½ for each tie; the event
total is the sum over the rounds. Also the event's totals and tie-breaks (:func:`round_time`,
:func:`totals`, :func:`standing_lines`) and the arena's points, streaks and ranking. Pure functions,
each rule once: the runner, the standings endpoint, the live feed and ``thieves verify`` all compute
with these, so they can disagree only when stored data was changed.

Matchpoints are kept doubled (whole numbers: a tie is 1, a win 2) and halved when shown.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Final, Iterable, Literal, Mapping, Protocol, TypeVar

import msgspec

from . import protocol as p
from .standings import Merit, final_status, merit_of, shared_ranks, win_ms

NO_SHOW: Final = "no_show"
ABSENT: Final = "absent"
BYE: Final = "bye"


class RoundResult(msgspec.Struct, frozen=True):
    """One entrant's result in one round, from its heat's final standings (times from the race's start)."""

    account: str
    race: str | None
    heat: int | None
    status: p.RoundStatus
    """finished, racing (stopped by the clock), gave_up, or no_show (drawn, never joined)."""
    home: int
    finish_ms: int | None
    """A win's time from the start."""
    home_at_ms: int | None
    """When the entrant reached its cards home, from the start (the standings' tie-break)."""


class ScoredRound(RoundResult, frozen=True):
    """A round result with the doubled matchpoints it earned: what the event stores per entrant and
    round (the event's results hash, JSON), and what ``thieves verify`` recomputes from the races."""

    points2: int

    def encode(self) -> bytes:
        return _scored_encoder.encode(self)

    @classmethod
    def decode(cls, raw: bytes | str) -> "ScoredRound":
        """A stored record; raises ``msgspec.ValidationError`` (or ``DecodeError``) on anything else."""
        return _scored_decoder.decode(raw)


_scored_encoder = msgspec.json.Encoder()
_scored_decoder = msgspec.json.Decoder(ScoredRound)


def place_key(r: RoundResult) -> Merit:
    """The race standings rule (``shared.standings.merit_of``) on times from each heat's own start, so
    heats compare. Equal keys tie."""
    return merit_of(r.status, r.home, r.finish_ms, r.home_at_ms)


def matchpoints(results: Iterable[RoundResult]) -> dict[str, int]:
    """Each entrant's doubled matchpoints in one round: 2 per entrant beaten, 1 per tie.

    By sorting, not by comparing every pair: a live event frame scores a field of hundreds five
    times a second. An entrant's 2 per entrant beaten are 2 for each of those after its group of
    equals, and 1 for each other member of that group.

    The answer lists the entrants best first. Why say so: a caller that scores a field again (the live
    feed, a frame every 0.2 s, most results unchanged) and passes it in that order hands the sort long
    runs already in order, which it merges in far fewer comparisons (a field of 1,000 passed in the order
    of its last score: 0.36 ms against 0.87 ms, measured)."""
    field = sorted([(place_key(r), r.account) for r in results])
    n = len(field)
    starts = [i for i in range(1, n) if field[i][0] != field[i - 1][0]]  # where a group of equals begins
    out: dict[str, int] = {}
    for i, j in zip([0, *starts], [*starts, n]):
        points = 2 * (n - j) + (j - i - 1)
        for _, account in field[i:j]:
            out[account] = points
    return out


def scored(results: Iterable[RoundResult]) -> list[ScoredRound]:
    """A round's results with their matchpoints (the runner stores these; verify recomputes them)."""
    field = list(results)
    return with_points(field, matchpoints(field))


def with_points(field: Iterable[RoundResult], points: Mapping[str, int]) -> list[ScoredRound]:
    """A round's results with the doubled points each earned, by whatever rule its format scores."""
    return [ScoredRound(**msgspec.structs.asdict(r), points2=points[r.account]) for r in field]


def result_at(account: str, race: str, heat: int, status: str, home: int, finished_at: int | None,
              home_at: int | None, starts: int) -> RoundResult:
    """An entrant's result from a race line (final or live; absolute times, 0 or None: never), its
    times taken from the heat's start ``starts`` so that heats compare."""
    return RoundResult(account, race, heat, final_status(status), home, win_ms(status, finished_at, starts),
                       home_at - starts if home_at else None)


def heat_result(account: str, race: str, heat: int, results: p.Results | None, came: bool = False,
                home0: int = 0) -> RoundResult:
    """An entrant's result from its heat's Results (a no-show when it is not in the standings).

    ``came``: the entrant joined a heat that could not start (a rated heat needs two): it did not
    race, but it showed, so it counts as having played on with its starting cards (``home0``)."""
    starts = results.starts_at if results is not None and results.starts_at else 0
    for s in results.standings if results is not None else []:
        if s.account == account:
            return result_at(account, race, heat, s.status, s.home, s.finished_at, s.home_at, starts)
    if came:
        return RoundResult(account, race, heat, "racing", home0, None, None)
    return RoundResult(account, race, heat, NO_SHOW, 0, None, None)


def bye_result(account: str) -> RoundResult:
    """A round in which the entrant was drawn into no race (a Swiss round's odd one out): no cards, no
    win, and the round's whole time limit toward the tie-break (:func:`round_time`)."""
    return RoundResult(account, None, None, BYE, 0, None, None)


@dataclass
class Total:
    """An entrant's event so far: what the standings order by."""

    account: str
    name: str
    points2: int = 0
    home: int = 0
    time_ms: int = 0
    withdrawn: bool = False


def round_time(r: RoundResult | None, time_limit_ms: int) -> int:
    """The time a round counts toward the tie-break: a win's time; any other round, absent rounds
    included (``r`` None), the whole time limit. Charging an absence the limit keeps the tie-break
    from rewarding a round not played: otherwise a late entrant or one who withdrew would beat,
    on time, an entrant who played that round to the clock with the same matchpoints and cards."""
    if r is not None and r.status == "finished" and r.finish_ms is not None:
        return r.finish_ms
    return time_limit_ms


class Entered(Protocol):
    """Who the standings list: a stored entrant, or a line of the server's standings (verify)."""

    @property
    def account(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def withdrawn(self) -> bool: ...


Scores = Mapping[tuple[int, str], ScoredRound]
"""Every scored round result of an event: (round, account) -> its record."""


def totals(entrants: Iterable[Entered], results: Scores, time_limit_ms: int) -> list[Total]:
    """Each entrant's matchpoints, cards home and time over the rounds scored so far (every round
    that has a result), an absent round counting 0 matchpoints, 0 cards and the whole time limit.
    An account with results but no entry is listed under its account (verify then says so)."""
    out = {e.account: Total(e.account, e.name, withdrawn=e.withdrawn) for e in entrants}
    for _, account in results:
        out.setdefault(account, Total(account, account))
    rounds = sorted({number for number, _ in results})
    for t in out.values():
        for number in rounds:
            r = results.get((number, t.account))
            t.points2 += r.points2 if r is not None else 0
            t.home += r.home if r is not None else 0
            t.time_ms += round_time(r, time_limit_ms)
    return list(out.values())


def ranked(totals: Iterable[Total]) -> list[tuple[int, Total]]:
    """Best first: matchpoints, then cards home over the event, then total time (less is better);
    entrants equal on all three share a rank (1, 2, 2, 4 ...), listed by name."""
    order = sorted(totals, key=lambda t: (-t.points2, -t.home, t.time_ms, t.name.casefold()))
    return list(zip(shared_ranks(order, lambda t: (t.points2, t.home, t.time_ms)), order))


def round_score(number: int, r: ScoredRound | None) -> p.EventRoundScore:
    """One round of an entrant's standings line (``r`` None: absent from that round)."""
    if r is None:
        return p.EventRoundScore(round=number, race=None, heat=None, status=ABSENT, home=0, time_ms=None,
                                 matchpoints=0.0)
    return p.EventRoundScore(round=number, race=r.race, heat=r.heat, status=r.status, home=r.home,
                             time_ms=r.finish_ms, matchpoints=r.points2 / 2)


def standing_lines(entrants: Iterable[Entered], results: Scores, time_limit_ms: int) -> list[p.EventStandingLine]:
    """A duplicate event's standings, best first, each line with its rounds: what
    ``GET /events/{id}/standings`` serves and what ``thieves verify`` recomputes and compares."""
    rounds = sorted({number for number, _ in results})
    return [p.EventStandingLine(rank=rank, account=t.account, name=t.name, matchpoints=t.points2 / 2, home=t.home,
                                time_ms=t.time_ms, withdrawn=t.withdrawn,
                                rounds=[round_score(n, results.get((n, t.account))) for n in rounds])
            for rank, t in ranked(totals(entrants, results, time_limit_ms))]


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
race of three or more), anything else; doubled for an entrant on fire."""
ON_FIRE = 2
"""Wins in a row from which an arena entrant is on fire (its points count double)."""


def on_fire(streak: int) -> bool:
    """An arena entrant with ``streak`` wins in a row scores double (the standings show "on fire")."""
    return streak >= ON_FIRE


@dataclass(frozen=True)
class Outcome:
    """What one arena race gave one entrant (``home``: its cards home, 0 for a no-show)."""

    account: str
    points: int
    won: bool
    showed: bool
    home: int = 0


def arena_points(results: Iterable[RoundResult], fired: set[str]) -> list[Outcome]:
    """Each entrant's points from one finished arena race; ``fired``: those on fire."""
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
        out.append(Outcome(r.account, base * 2 if r.account in fired else base, base == WIN, showed,
                           r.home if showed else 0))
    return out


@dataclass
class ArenaTally:
    """An arena entrant's score so far: what its points double on, what the standings order by. The
    server's stored ``ArenaState`` is one (with its status and race); verify folds races into these."""

    points: int = 0
    streak: int = 0
    """Wins in a row (:func:`on_fire` from :data:`ON_FIRE`)."""
    wins: int = 0
    races: int = 0
    home: int = 0

    @property
    def on_fire(self) -> bool:
        return on_fire(self.streak)


A = TypeVar("A", bound=ArenaTally)


def race_points(results: Iterable[RoundResult], before: Mapping[str, ArenaTally]) -> list[Outcome]:
    """What one finished arena race gives each of its entrants (``before``: their tallies before it)."""
    return arena_points(results, {a for a, s in before.items() if s.on_fire})


def after_race(tally: A, outcome: Outcome) -> A:
    """The entrant's tally once a race is scored: its points, its streak (reset by a race not won),
    its wins, its races (a no-show's does not count) and its cards home."""
    return replace(tally, points=tally.points + outcome.points, streak=tally.streak + 1 if outcome.won else 0,
                   wins=tally.wins + int(outcome.won), races=tally.races + int(outcome.showed),
                   home=tally.home + outcome.home)


def status_after(outcome: Outcome) -> Literal["waiting", "paused"]:
    """Where an arena race leaves its entrant: waiting to be paired again, or paused after a no-show."""
    return "waiting" if outcome.showed else "paused"


def arena_ranked(tallies: Mapping[str, ArenaTally]) -> list[tuple[int, str]]:
    """Best first: points, then wins, then cards home over all races; equal on all three share a rank."""
    order = sorted(tallies, key=lambda a: (-tallies[a].points, -tallies[a].wins, -tallies[a].home, a))
    return list(zip(shared_ranks(order, lambda a: (tallies[a].points, tallies[a].wins, tallies[a].home)), order))
