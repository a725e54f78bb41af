"""Swiss rules (shared/swiss.py), pure: points, byes, tie-breaks, the worked example of docs/events.md,
and the pairing's properties under hypothesis, each checked against the rule restated here and a
brute force over every possible pairing of small fields."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Iterator, Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from shared import scoring, swiss
from shared.scoring import RoundResult, ScoredRound

LIMIT_MS = 600_000


class Entrant:
    def __init__(self, account: str) -> None:
        self.account = self.name = account
        self.withdrawn = False


def _race(race: str, a: str, b: str, outcome: str) -> list[RoundResult]:
    """A race of ``a`` and ``b``: ``a`` wins ("a"), ``b`` wins ("b"), a tie (both gave up at nothing
    home) or ``a`` never came ("no_show")."""
    def won(who: str) -> RoundResult:
        return RoundResult(who, race, 1, "finished", 104, 300_000, 290_000)

    def lost(who: str) -> RoundResult:
        return RoundResult(who, race, 1, "racing", 40, None, 200_000)

    def tied(who: str) -> RoundResult:
        return RoundResult(who, race, 1, "gave_up", 0, None, None)

    if outcome == "a":
        return [won(a), lost(b)]
    if outcome == "b":
        return [lost(a), won(b)]
    if outcome == "no_show":
        return [RoundResult(a, race, 1, "no_show", 0, None, None), lost(b)]
    return [tied(a), tied(b)]


def test_a_race_gives_a_win_1_a_tie_half_a_loss_and_a_no_show_0_and_a_bye_1() -> None:
    field = [*_race("r1", "ann", "bob", "a"), *_race("r2", "cy", "dan", "tie"),
             *_race("r3", "eve", "fay", "no_show"), scoring.bye_result("gus")]
    assert swiss.points(field) == {"ann": 2, "bob": 0, "cy": 1, "dan": 1, "eve": 0, "fay": 2, "gus": 2}
    # Two no-shows do not tie for a point each: neither raced.
    assert swiss.points(_race("r4", "hal", "ida", "no_show")[:1] + [RoundResult("ida", "r4", 1, "no_show", 0, None, None)]) \
        == {"hal": 0, "ida": 0}


# ----------------------------------------------------------------- the rule, restated
def _restated_key(pairs: Sequence[tuple[str, str]], bye: str | None, field: Sequence[str],
                  points2: dict[str, int], met: Counter[frozenset[str]], byes: Counter[str]) -> tuple[int, ...]:
    """docs/events.md's pairing rule as a lexicographic key, least best: byes the bye's entrant has had;
    pairs that met before (each meeting); squared score differences, the bye an opponent one win below
    the lowest score; the bye's place from the bottom of the field's order."""
    floor = min(points2.get(a, 0) for a in field)
    repeats = sum(met[frozenset(pair)] for pair in pairs)
    close = sum((points2.get(a, 0) - points2.get(b, 0)) ** 2 for a, b in pairs)
    if bye is None:
        return (0, repeats, close, 0)
    close += (points2.get(bye, 0) - (floor - 2)) ** 2
    return (byes[bye], repeats, close, len(field) - 1 - list(field).index(bye))


def _every_pairing(field: Sequence[str]) -> Iterator[tuple[list[tuple[str, str]], str | None]]:
    """Every way to draw ``field`` into pairs and at most one bye (odd fields: exactly one)."""
    def matchings(rest: list[str]) -> Iterator[list[tuple[str, str]]]:
        if not rest:
            yield []
            return
        first = rest[0]
        for i in range(1, len(rest)):
            for more in matchings(rest[1:i] + rest[i + 1:]):
                yield [(first, rest[i]), *more]
    if len(field) % 2 == 0:
        for m in matchings(list(field)):
            yield m, None
    else:
        for bye in field:
            for m in matchings([a for a in field if a != bye]):
                yield m, bye


OUTCOMES = st.sampled_from(["a", "b", "tie", "no_show"])


def _blocks(order: list[str], block: int) -> list[list[str]]:
    """The rule's cut of a large field, restated: as few blocks of at most about ``block`` as can be,
    consecutive down the order, all of one even size but the last, which takes the rest."""
    if len(order) <= block:
        return [order]
    count = -(-len(order) // block)
    size = max(2, len(order) // count - (len(order) // count) % 2)
    return [order[i * size:(i + 1) * size] for i in range(count - 1)] + [order[(count - 1) * size:]]


@settings(max_examples=80, deadline=None)
@given(size=st.integers(2, 9), rounds=st.integers(1, 7), block=st.sampled_from([3, 4, swiss.BLOCK]), data=st.data())
def test_pairing_properties_over_a_tournament(size: int, rounds: int, block: int, data: st.DataObject) -> None:
    """Round after round of random results: every entrant placed once, one bye exactly when the field
    is odd, the bye rotates, no repeat while one can be avoided, and the pairing is the best by the
    restated rule (every possible pairing of each block tried; small blocks stand for the cut of a
    field of hundreds)."""
    field = [f"e{i}" for i in range(size)]
    scored: dict[tuple[int, str], ScoredRound] = {}
    for number in range(1, rounds + 1):
        past = swiss.records(scored)
        points2 = {a: past[a].points2 if a in past else 0 for a in field}
        met = Counter(frozenset((a, o)) for a in field if a in past for o in past[a].met)
        met = Counter({pair: n // 2 for pair, n in met.items()})  # each meeting seen from both sides
        byes = Counter({a: past[a].byes for a in field if a in past})
        order = sorted(field, key=lambda a: (-points2[a], a))
        pairing = swiss.pair(order, past, block)
        drawn = [a for pair in pairing.pairs for a in pair] + ([pairing.bye] if pairing.bye else [])
        assert sorted(drawn) == sorted(field), "every entrant once"
        assert (pairing.bye is not None) == (size % 2 == 1), "a bye exactly when the field is odd"
        parts = _blocks(order, block)
        assert swiss.blocks(order, block) == parts
        for part in parts:
            pairs = [pair for pair in pairing.pairs if pair[0] in part]
            assert all(b in part for _, b in pairs), "races within a block"
            bye = pairing.bye if pairing.bye in part else None
            if bye is not None:
                assert byes[bye] == min(byes[a] for a in part), "the bye rotates"
            mine = _restated_key(pairs, bye, part, points2, met, byes)
            best = min(_restated_key(m, b, part, points2, met, byes) for m, b in _every_pairing(part))
            assert mine == best, (pairing, part, mine, best)
            if best[1] == 0:
                assert all(met[frozenset(pair)] == 0 for pair in pairs), "no repeat while avoidable"
        assert swiss.fault([list(pair) for pair in pairing.pairs], [pairing.bye] if pairing.bye else [], order,
                           past, block) is None
        results = [r for i, (a, b) in enumerate(pairing.pairs) for r in _race(f"r{number}.{i}", a, b, data.draw(OUTCOMES))]
        results += [scoring.bye_result(pairing.bye)] if pairing.bye else []
        scored.update(((number, r.account), r) for r in scoring.with_points(results, swiss.points(results)))


def test_fault_names_what_is_wrong_with_a_draw() -> None:
    order = ["ann", "bob", "cy", "dan", "eve"]
    scored: dict[tuple[int, str], ScoredRound] = {}
    results = [*_race("r1", "ann", "bob", "a"), *_race("r2", "cy", "dan", "a"), scoring.bye_result("eve")]
    scored.update(((1, r.account), r) for r in scoring.with_points(results, swiss.points(results)))
    past = swiss.records(scored)
    assert swiss.fault([["ann", "cy"], ["bob", "eve"]], ["dan"], order, past) is None
    assert swiss.fault([["ann", "bob"], ["cy", "eve"]], ["dan"], order, past).startswith("the pairing costs")  # type: ignore[union-attr]
    assert swiss.fault([["ann", "bob", "cy"], ["dan", "eve"]], [], order, past) == \
        "a race of 3: Swiss races are head to head"
    assert swiss.fault([["ann", "cy"], ["bob", "ann"]], ["dan"], order, past) == "ann is drawn twice"
    assert swiss.fault([["ann", "cy"]], ["bob", "dan"], order[:4], past) == "2 byes in a field of 4"
    assert swiss.fault([["ann", "zed"]], [], order, past) == "zed is drawn but not an entrant"
    assert swiss.fault([["ann", "cy"], ["bob", "eve"]], ["dan"], order, past, block=3) == \
        "ann-cy crosses the blocks of 3"


# ------------------------------------------------------- docs/events.md, "Swiss", worked example
def test_the_worked_example_of_the_docs() -> None:
    """Five entrants, three rounds; the stronger always wins (dan and eve are equal: a tie)."""
    field = ["ann", "bob", "cy", "dan", "eve"]
    strength = {"ann": 5, "bob": 4, "cy": 3, "dan": 2, "eve": 2}
    entrants = [Entrant(a) for a in field]
    scored: dict[tuple[int, str], ScoredRound] = {}
    drawn = []
    seen: list[tuple[list[str], dict[str, swiss.Record]]] = []
    for number in (1, 2, 3):
        order = [t.account for _, t in scoring.ranked(scoring.totals(entrants, scored, LIMIT_MS))]
        pairing = swiss.pair(order, swiss.records(scored))
        drawn.append(pairing)
        seen.append((order, swiss.records(scored)))
        results = []
        for i, (a, b) in enumerate(pairing.pairs):
            outcome = "a" if strength[a] > strength[b] else "b" if strength[b] > strength[a] else "tie"
            results += _race(f"r{number}.{i}", a, b, outcome)
        results.append(scoring.bye_result(pairing.bye))  # type: ignore[arg-type]
        scored.update(((number, r.account), r) for r in scoring.with_points(results, swiss.points(results)))
    assert drawn == [swiss.Pairing([("ann", "cy"), ("bob", "dan")], "eve"),
                     swiss.Pairing([("ann", "eve"), ("bob", "cy")], "dan"),
                     swiss.Pairing([("ann", "bob"), ("dan", "eve")], "cy")]
    lines = swiss.standing_lines(entrants, scored, LIMIT_MS)
    assert [(line.rank, line.name, line.score, line.buchholz, line.sonneborn_berger) for line in lines] == [
        (1, "ann", 3.0, 4.5, 4.5), (2, "bob", 2.0, 5.5, 2.5), (3, "eve", 1.5, 4.5, 0.75),
        (4, "dan", 1.5, 3.5, 0.75), (5, "cy", 1.0, 5.0, 0.0)]
    assert [(r.status, r.matchpoints) for r in lines[4].rounds] == [("racing", 0.0), ("racing", 0.0), ("bye", 1.0)]
    # The doc's round-2 pairings that "cost the same" (dan having the bye) each cost what the rule's does.
    text = (Path(__file__).resolve().parent.parent / "docs" / "events.md").read_text()
    said = " ".join(text.split("In round 2 the bye goes to", 1)[1].split("cost the same", 1)[0].split())
    listed = [swiss.Pairing([(a, b), (c, d)], "dan") for a, b, c, d in re.findall(r"(\w+)–(\w+) with (\w+)–(\w+)", said)]
    assert len(listed) >= 2 and drawn[1] in listed, said
    order, past = seen[1]
    assert {p.pairs[0]: swiss.cost(p, order, past) for p in listed} == \
        {p.pairs[0]: swiss.cost(drawn[1], order, past) for p in listed}, "each as cheap as the rule's"
    # Equal on everything: a shared rank (here, were dan and eve's Buchholz equal).
    assert swiss.standing_lines([Entrant("x"), Entrant("y")], {}, LIMIT_MS)[1].rank == 1


def test_a_no_show_opponent_counts_in_buchholz_and_a_forfeit_win_in_sonneborn_berger() -> None:
    """docs/events.md, "Swiss": a pairing is a meeting even when one of the two did not come, so cy, who won
    round 1 because dan did not come, has dan's final point in its Buchholz and in its Sonneborn-Berger."""
    scored: dict[tuple[int, str], ScoredRound] = {}
    for number, results in ((1, _race("r1", "dan", "cy", "no_show")), (2, _race("r2", "dan", "bob", "a"))):
        scored.update(((number, r.account), r) for r in scoring.with_points(results, swiss.points(results)))
    breaks = swiss.tiebreaks(swiss.records(scored))
    assert (breaks["cy"].buchholz2 / 2, breaks["cy"].sonneborn4 / 4) == (1.0, 1.0)
