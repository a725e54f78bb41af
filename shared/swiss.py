"""Swiss rounds (docs/events.md, "Swiss"): every round, every entrant of the field races one other, of
the same or the nearest score, never the same one twice while that can be avoided; the odd one out has
a bye. Points, byes, pairing and tie-breaks are written here once: the server pairs and scores with
them, the live feed scores with them, and ``thieves verify`` recomputes every round's pairing and every
line of the standings with them.

Points are kept doubled (whole numbers), as matchpoints are: a win 2, a tie 1, a loss 0, a bye 2 (a bye
counts as a win, as in lichess's Swiss); a no-show scores 0 whatever its opponent did.

**Pairing is an optimisation**, not a walk down the standings (which can paint itself into a corner
where the last two have met): a maximum-weight perfect matching (networkx's ``max_weight_matching``)
on the complete graph of the round's field, plus one "bye" node when the field is odd. Each edge's
cost is, in strict order of importance (each tier outweighs every possible sum of the tiers below):

1. a bye to an entrant who has had one, for each bye it had (so the bye rotates: nobody gets a second
   while anyone of the field has had none);
2. a pair that has met before, for each time it met (never a repeat while the field can avoid it);
3. the square of the two scores' difference (same score first, then nearest); the bye counts as an
   opponent one win below the field's lowest score, so it goes to the lowest scores;
4. among those, the bye to the entrant placed lowest in the standings so far (the field's order:
   points, cards home, time, then name, as ``shared.scoring.ranked`` orders; round 1: the last by name).

A field of more than :data:`BLOCK` entrants is cut down the standings into blocks of about that size,
each matched on its own (the matching is cubic in the field), the bye in the last.

Head to head only: a matching pairs; groups of three or more would be a hypergraph matching, which no
well-kept library solves exactly (it is NP-hard), and a heuristic could not be re-checked by verify.

Several pairings can be equally good; any of them is the rule's answer, and ``thieves verify`` checks
that the server's pairing is a valid one of the least cost (:func:`cost`), not that it is the same.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from . import protocol as p
from .scoring import BYE, NO_SHOW, Entered, RoundResult, Scores, place_key, Total, round_score, totals
from .standings import shared_ranks

WIN2, TIE2, LOSS2 = 2, 1, 0
"""Doubled points of a race against one opponent."""
BYE2 = WIN2
"""A bye counts as a win."""
BYE_NODE = ""
"""The bye's node in the pairing graph (no account is the empty name)."""


def points(field: Iterable[RoundResult]) -> dict[str, int]:
    """Each entrant's doubled points in one round: its race against its opponent (the other entrant of
    the same race) by the race standings rule (``place_key``), a bye 2, a no-show 0."""
    by_race: dict[str | None, list[RoundResult]] = {}
    results = list(field)
    for r in results:
        by_race.setdefault(r.race, []).append(r)
    out = {}
    for r in results:
        if r.status == BYE:
            out[r.account] = BYE2
        elif r.status == NO_SHOW:
            out[r.account] = LOSS2
        else:
            others = [place_key(o) for o in by_race[r.race] if o.account != r.account]
            mine = place_key(r)
            out[r.account] = (WIN2 if all(mine < o for o in others) else
                              TIE2 if all(mine <= o for o in others) else LOSS2)
    return out


@dataclass
class Record:
    """An entrant's Swiss past: what its pairing and its tie-breaks read."""

    points2: int = 0
    byes: int = 0
    met: list[str] = field(default_factory=list)
    """Its opponents, a round each (a bye adds none)."""
    beat: list[tuple[str, int]] = field(default_factory=list)
    """(opponent, doubled points it took from that race): Sonneborn-Berger's half."""


def records(results: Scores) -> dict[str, Record]:
    """Every entrant's record from the scored rounds (an absent round adds nothing)."""
    out: dict[str, Record] = {}
    races: dict[tuple[int, str], list[str]] = {}
    for (number, account), r in results.items():
        rec = out.setdefault(account, Record())
        rec.points2 += r.points2
        rec.byes += r.status == BYE
        if r.race is not None:
            races.setdefault((number, r.race), []).append(account)
    for (number, _), accounts in sorted(races.items()):
        for a in accounts:
            for o in accounts:
                if o != a:
                    out[a].met.append(o)
                    out[a].beat.append((o, results[(number, a)].points2))
    return out


@dataclass(frozen=True)
class Pairing:
    """A round's draw: its races (head to head, the better placed first) and its bye (None: even field)."""

    pairs: list[tuple[str, str]]
    bye: str | None


class _Scale:
    """The cost of each possible race (or bye) of one round's field, on one integer scale where each
    tier of the module's docstring outweighs every sum a matching can make of the tiers below it."""

    def __init__(self, field: Sequence[str], past: Mapping[str, Record]) -> None:
        self.past = past
        self.place = {a: i for i, a in enumerate(field)}
        scores = [self.record(a).points2 for a in field] or [0]
        self.floor2 = min(scores)
        spread = max(scores) - self.floor2 + BYE2
        edges = len(field) // 2 + 1
        meets = max((max(Counter(past[a].met).values(), default=0) for a in field if a in past), default=0)
        self.close_tier = len(field) + 1
        self.repeat_tier = (edges * spread * spread + 1) * self.close_tier
        self.bye_tier = edges * (meets * self.repeat_tier + spread * spread * self.close_tier) + len(field) + 1

    def record(self, a: str) -> Record:
        return self.past.get(a, Record())

    def edge(self, a: str, b: str) -> int:
        """Pairing ``a`` with ``b`` (or with the bye: tier 4, the bye to the lowest placed of equals)."""
        ra = self.record(a)
        if b == BYE_NODE:
            lower = len(self.place) - 1 - self.place[a]
            return ra.byes * self.bye_tier + (ra.points2 - (self.floor2 - BYE2)) ** 2 * self.close_tier + lower
        return ra.met.count(b) * self.repeat_tier + (ra.points2 - self.record(b).points2) ** 2 * self.close_tier


def cost(pairing: Pairing, field: Sequence[str], past: Mapping[str, Record]) -> int:
    """A pairing's total cost on the rule's scale (less is better; ``field`` best placed first): what
    verify compares with the least."""
    scale = _Scale(field, past)
    return (sum(scale.edge(a, b) for a, b in pairing.pairs)
            + (scale.edge(pairing.bye, BYE_NODE) if pairing.bye is not None else 0))


BLOCK = 100
"""The most entrants matched as one: a larger field is split down its order (the standings) into
blocks of about this size, each matched on its own. The blossom algorithm is cubic in the field
(docs/events.md, "Swiss": 0.5 s for 101 entrants here, 6 s for 201), blocks keep a round of hundreds
to seconds."""


def blocks(field: Sequence[str], block: int = BLOCK) -> list[list[str]]:
    """``field`` (best placed first) in consecutive blocks of at most about ``block`` entrants, each
    even but the last (which holds the odd one out, so the bye stays at the bottom)."""
    if len(field) <= block:
        return [list(field)]
    count = -(-len(field) // block)
    size = max(2, len(field) // count // 2 * 2)
    return [list(field[i * size:(i + 1) * size]) for i in range(count - 1)] + [list(field[(count - 1) * size:])]


def pair(field: Sequence[str], past: Mapping[str, Record], block: int = BLOCK) -> Pairing:
    """The round's pairing of ``field`` (the round's entrants, best placed first): every entrant in
    one race or the bye, each of :func:`blocks` paired among itself by a perfect matching of least
    :func:`cost`."""
    scale = _Scale(field, past)
    pairs: list[tuple[str, str]] = []
    bye = None
    for part in blocks(field, block):
        more, odd = _match(part, scale)
        pairs += more
        bye = odd if odd is not None else bye
    return Pairing(pairs, bye)


def _match(field: list[str], scale: _Scale) -> tuple[list[tuple[str, str]], str | None]:
    """A maximum-weight perfect matching of ``field`` (and the bye, when odd): least total cost."""
    import networkx as nx  # here, not at the top: 0.12 s of every `thieves` command's start otherwise
    if len(field) < 2:
        return [], field[0] if field else None
    nodes = [*field, *([BYE_NODE] if len(field) % 2 else [])]
    costs = {(a, b): scale.edge(a, b) for i, a in enumerate(nodes) for b in nodes[i + 1:]}
    top = max(costs.values()) + 1  # weights positive; every perfect matching has the same edge count
    graph: nx.Graph[Any] = nx.Graph()
    graph.add_nodes_from(nodes)
    graph.add_weighted_edges_from((a, b, top - c) for (a, b), c in costs.items())
    place = scale.place
    pairs, bye = [], None
    for a, b in nx.max_weight_matching(graph, maxcardinality=True):
        if BYE_NODE in (a, b):
            bye = b if a == BYE_NODE else a
        else:
            pairs.append((a, b) if place[a] < place[b] else (b, a))
    pairs.sort(key=lambda ab: place[ab[0]])
    return pairs, bye


def fault(heats: Sequence[Sequence[str]], byes: Sequence[str], order: Sequence[str],
          past: Mapping[str, Record], block: int = BLOCK) -> str | None:
    """What is wrong with a round's draw as the rule makes it (None: nothing), given the standings
    order and the entrants' records before the round: every race head to head and within one of the
    field's :func:`blocks`, every entrant of the round in one race or the bye, one bye exactly when the
    field is odd, and no pairing of the blocks cheaper (:func:`cost`). ``thieves verify`` checks every
    round of a Swiss event with it."""
    drawn = [a for heat in heats for a in heat] + list(byes)
    if any(a not in order for a in drawn):
        return f"{next(a for a in drawn if a not in order)} is drawn but not an entrant"
    field = [a for a in order if a in drawn]
    if any(len(heat) != 2 for heat in heats):
        return f"a race of {next(len(h) for h in heats if len(h) != 2)}: Swiss races are head to head"
    if len(set(drawn)) != len(drawn):
        return f"{next(a for a in drawn if drawn.count(a) > 1)} is drawn twice"
    if len(byes) != len(field) % 2:
        return f"{len(byes)} byes in a field of {len(field)}"
    part = {a: i for i, members in enumerate(blocks(field, block)) for a in members}
    if any(part[a] != part[b] for a, b in heats):
        return f"{next(f'{a}-{b}' for a, b in heats if part[a] != part[b])} crosses the blocks of {block}"
    theirs = Pairing([(a, b) for a, b in heats], byes[0] if byes else None)
    best = pair(field, past, block)
    if cost(theirs, field, past) != cost(best, field, past):
        return (f"the pairing costs {cost(theirs, field, past)} on the rule's scale, the best costs "
                f"{cost(best, field, past)} ({_shown(best)})")
    return None


def _shown(pairing: Pairing) -> str:
    return ", ".join([f"{a}-{b}" for a, b in pairing.pairs] + ([f"{pairing.bye} bye"] if pairing.bye else []))


@dataclass
class Tiebreaks:
    """An entrant's Swiss tie-breaks, doubled or quadrupled to stay whole."""

    buchholz2: int = 0
    """Buchholz: the sum of its opponents' points (doubled); a bye adds nothing."""
    sonneborn4: int = 0
    """Sonneborn-Berger: each opponent beaten adds that opponent's points, each tied half (quadrupled)."""


def tiebreaks(past: Mapping[str, Record]) -> dict[str, Tiebreaks]:
    """Every entrant's Buchholz and Sonneborn-Berger from the final points of its opponents."""
    total = {a: r.points2 for a, r in past.items()}
    return {a: Tiebreaks(sum(total.get(o, 0) for o in r.met),
                         sum(took * total.get(o, 0) for o, took in r.beat))
            for a, r in past.items()}


def standing_lines(entrants: Iterable[Entered], results: Scores, time_limit_ms: int) -> list[p.EventStandingLine]:
    """A Swiss event's standings, best first: points, then Buchholz, then Sonneborn-Berger, then cards
    home and total time as a duplicate event counts them (``shared.scoring.totals``); equal on all five
    share a rank. Each line carries its rounds (a bye is a round of status ``bye``). What
    ``GET /events/{id}/standings`` serves and ``thieves verify`` recomputes and compares."""
    rounds = sorted({number for number, _ in results})
    breaks = tiebreaks(records(results))

    def key(t: Total) -> tuple[int, int, int, int, int]:
        b = breaks.get(t.account, Tiebreaks())
        return (t.points2, b.buchholz2, b.sonneborn4, t.home, -t.time_ms)

    order = sorted(totals(entrants, results, time_limit_ms),
                   key=lambda t: (tuple(-k for k in key(t)), t.name.casefold()))
    lines = []
    for rank, t in zip(shared_ranks(order, key), order):
        b = breaks.get(t.account, Tiebreaks())
        lines.append(p.EventStandingLine(
            rank=rank, account=t.account, name=t.name, matchpoints=0.0, home=t.home, time_ms=t.time_ms,
            withdrawn=t.withdrawn, rounds=[round_score(n, results.get((n, t.account))) for n in rounds],
            score=t.points2 / 2, buchholz=b.buchholz2 / 2, sonneborn_berger=b.sonneborn4 / 4))
    return lines
