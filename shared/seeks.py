"""Seeks: who races whom when players ask for "a race now" (pure: no I/O).

A seek puts a player in a *pool*, one per (variant, seats, time limit, rated). Every wave (a second or
so, docs/protocol.md "Seeks") the server forms races of ``seats`` players from a pool by this module's
rule, in the manner of lichess's quick-pairing pools:

- **The allowed gap widens with waiting.** A player who has waited ``w`` seconds accepts opponents
  whose ratings are at most :func:`allowed_gap` ``(w)`` = min(:data:`GAP_BASE` + :data:`GAP_PER_SECOND`
  · w, :data:`GAP_MAX`) away. A group's *spread* (its highest rating less its lowest) is at most the
  allowed gap of its longest waiter: the bound every formed race keeps (:func:`within_bound`), and
  the one the tests check wave by wave. Players further apart than :data:`GAP_MAX` are never grouped.
- **No-shows are paired among themselves.** A player who did not come to a race a seek formed for
  it recently is *shy*: a group is all shy or all not (lichess pairs players who abort often among
  themselves, so they spoil no one else's game).
- **Pairs** (``seats`` 2) are a maximum-weight matching of the graph whose edges join players within
  the allowed gap (networkx's ``max_weight_matching`` with ``maxcardinality``: as many pairs as
  possible, then the best ones), each edge weighted to favour close ratings and long waits. Each
  player is joined to its :data:`NEIGHBOURS` nearest in rating only, so a wave stays cheap however
  large the pool (the matching is cubic in the nodes; the nearest are the only useful partners).
- **Groups of more** (``seats`` 3..8) are sorted windows: ratings are one number, so the tightest
  group of N around a player is always N neighbours in rating order. The players are taken
  longest-waiting first; each one not yet placed gets the window of N consecutive unplaced players
  containing it with the smallest spread, if that spread is within the bound. That is greedy (an
  exact partition into groups of N is a hard problem in general) but keeps the two promises that
  matter: a long waiter is served first, and no group breaks the bound.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from .protocol import MIN_TIME_LIMIT

GAP_BASE = 100
"""Rating points a player accepts at once (shown ratings: a new account shows 1000)."""
GAP_PER_SECOND = 50
"""Points the accepted gap widens each second of waiting."""
GAP_MAX = 1000
"""The widest gap ever accepted (reached after 18 s)."""
NEIGHBOURS = 8
"""Matching edges per player: its nearest in rating on each side, at most this many in all."""
SEEK_SEATS = (2, 8)
"""Fewest and most players in a race formed from a seek."""
SEEK_TIME_LIMIT = (MIN_TIME_LIMIT, 3600)
"""Shortest and longest time limit (seconds) a seek may ask for: the shortest is every race's."""
DEFAULT_RATING = 1000
"""The rating a player without one (anonymous, or new to the variant) is paired by: a new account's."""


@dataclass(frozen=True)
class Seeker:
    """One waiting seek, as the pairing rule sees it."""

    id: str
    rating: int
    since: int
    """When the seek entered the pool (ms, the server's clock)."""
    shy: bool = False
    """Failed to come to a race formed for it recently: grouped only with other shy players."""


@dataclass(frozen=True)
class Pool:
    """What a seek asks for: the pool it waits in."""

    variant: str
    seats: int
    time_limit: int
    rated: bool

    @property
    def key(self) -> str:
        """The pool's name, also its hash tag in Redis: ``forty-thieves/2/300/rated``."""
        return f"{self.variant}/{self.seats}/{self.time_limit}/{'rated' if self.rated else 'casual'}"

    @classmethod
    def parse(cls, key: str) -> "Pool":
        """The pool named ``key`` (:attr:`key`); raises ValueError for a name no pool has."""
        variant, seats, time_limit, kind = key.split("/")
        if kind not in ("rated", "casual"):
            raise ValueError(f"not a pool name: {key!r}")
        return cls(variant, int(seats), int(time_limit), kind == "rated")


def out_of_range(seats: int, time_limit: int) -> str | None:
    """Why a seek's size or clock cannot be, in the player's words; None when both are fine."""
    if not SEEK_SEATS[0] <= seats <= SEEK_SEATS[1]:
        return f"a race from a seek has {SEEK_SEATS[0]} to {SEEK_SEATS[1]} players, not {seats}"
    if not SEEK_TIME_LIMIT[0] <= time_limit <= SEEK_TIME_LIMIT[1]:
        return (f"a race from a seek lasts {SEEK_TIME_LIMIT[0]} to {SEEK_TIME_LIMIT[1]} seconds, "
                f"not {time_limit}")
    return None


def allowed_gap(waited_ms: int) -> int:
    """The widest rating gap a player who has waited ``waited_ms`` accepts."""
    return min(GAP_MAX, GAP_BASE + GAP_PER_SECOND * max(0, waited_ms) // 1000)


def spread(group: Sequence[Seeker]) -> int:
    """The group's highest rating less its lowest."""
    ratings = [s.rating for s in group]
    return max(ratings) - min(ratings)


def bound(group: Sequence[Seeker], now: int) -> int:
    """The widest spread the group may have at ``now``: the allowed gap of its longest waiter."""
    return allowed_gap(now - min(s.since for s in group))


def within_bound(group: Sequence[Seeker], now: int) -> bool:
    """Whether ``group`` may race at ``now``: its spread within :func:`bound`, all shy or none."""
    return spread(group) <= bound(group, now) and len({s.shy for s in group}) == 1


def form(seekers: Sequence[Seeker], seats: int, now: int) -> list[list[Seeker]]:
    """The races of one wave: disjoint groups of ``seats`` seekers, each :func:`within_bound`; the
    others wait for the next wave. Deterministic for the same input (ties broken by id)."""
    groups: list[list[Seeker]] = []
    for shy in (False, True):
        part = sorted((s for s in seekers if s.shy is shy), key=lambda s: (s.rating, s.id))
        if len(part) >= seats:
            groups += _pairs(part, now) if seats == 2 else _windows(part, seats, now)
    return groups


def _weight(a: Seeker, b: Seeker, now: int) -> int:
    """Higher for close ratings and long waits (positive: every allowed edge is worth taking)."""
    waited = (now - a.since) + (now - b.since)
    return 2 * GAP_MAX - abs(a.rating - b.rating) + waited // 100


def _pairs(part: list[Seeker], now: int) -> list[list[Seeker]]:
    """A maximum-weight matching among ``part`` (sorted by rating) over the allowed edges."""
    import networkx as nx  # here, not at the top: 0.12 s of every `thieves` command's start otherwise

    graph: nx.Graph[int] = nx.Graph()
    reach = max(1, NEIGHBOURS // 2)
    for i, a in enumerate(part):
        for j in range(i + 1, min(len(part), i + 1 + reach)):
            b = part[j]
            if abs(a.rating - b.rating) <= bound((a, b), now):
                graph.add_edge(i, j, weight=_weight(a, b, now))
    matching = nx.max_weight_matching(graph, maxcardinality=True)
    pairs = [sorted((part[i], part[j]), key=lambda s: (s.rating, s.id)) for i, j in matching]
    return sorted(pairs, key=lambda g: (g[0].rating, g[0].id))


def _windows(part: list[Seeker], seats: int, now: int) -> list[list[Seeker]]:
    """Sorted windows of ``seats`` consecutive unplaced players (``part`` sorted by rating), longest
    waiter first, each the tightest window around it that keeps the bound."""
    free = list(part)
    groups = []
    for s in sorted(part, key=lambda s: (s.since, s.id)):
        if s not in free or len(free) < seats:
            continue
        at = free.index(s)
        best: list[Seeker] | None = None
        for start in range(max(0, at - seats + 1), min(at, len(free) - seats) + 1):
            window = free[start:start + seats]
            if within_bound(window, now) and (best is None or spread(window) < spread(best)):
                best = window
        if best is not None:
            groups.append(best)
            free = [f for f in free if f not in best]
    return groups
