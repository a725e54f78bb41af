"""The pure pairing rule of seeks (shared/seeks.py): properties over random pools (hypothesis)."""

from __future__ import annotations

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared import seeks
from shared.seeks import GAP_BASE, GAP_MAX, GAP_PER_SECOND, Pool, Seeker, allowed_gap, form, within_bound

NOW = 1_000_000


@st.composite
def pools(draw: st.DrawFn, max_size: int = 40) -> list[Seeker]:
    n = draw(st.integers(0, max_size))
    return [Seeker(id=f"s{i}", rating=draw(st.integers(600, 2400)), since=NOW - draw(st.integers(0, 30_000)),
                   shy=draw(st.booleans()) if draw(st.integers(0, 4)) == 0 else False)
            for i in range(n)]


@settings(max_examples=150, deadline=None)
@given(pools(), st.integers(2, 8))
def test_every_group_is_disjoint_full_and_within_the_bound(pool: list[Seeker], seats: int) -> None:
    groups = form(pool, seats, NOW)
    placed = [s.id for g in groups for s in g]
    assert len(placed) == len(set(placed))
    assert set(placed) <= {s.id for s in pool}
    for g in groups:
        assert len(g) == seats
        assert within_bound(g, NOW)
        assert max(s.rating for s in g) - min(s.rating for s in g) <= allowed_gap(NOW - min(s.since for s in g))


@settings(max_examples=150, deadline=None)
@given(pools())
def test_pairs_are_a_maximum_matching_of_the_allowed_neighbours(pool: list[Seeker]) -> None:
    """No two players left waiting could have been paired with each other (a maximal matching over the
    edges the rule allows), and as many pairs as the allowed graph has (maximum cardinality)."""
    pairs = form(pool, 2, NOW)
    placed = {s.id for g in pairs for s in g}
    for shy in (False, True):
        part = sorted((s for s in pool if s.shy is shy), key=lambda s: (s.rating, s.id))
        graph = nx.Graph()
        for i, a in enumerate(part):
            for b in part[i + 1:i + 1 + seeks.NEIGHBOURS // 2]:
                if within_bound((a, b), NOW):
                    graph.add_edge(a.id, b.id)
        best = len(nx.max_weight_matching(graph, maxcardinality=True))
        assert sum(1 for g in pairs if g[0].shy is shy) == best
        waiting = [s for s in part if s.id not in placed]
        for a, b in zip(waiting, waiting[1:]):
            assert not within_bound((a, b), NOW) or not graph.has_edge(a.id, b.id)


@settings(max_examples=100, deadline=None)
@given(pools())
def test_shy_players_race_only_with_shy_players(pool: list[Seeker]) -> None:
    for seats in (2, 3):
        for g in form(pool, seats, NOW):
            assert len({s.shy for s in g}) == 1


@given(st.integers(-5_000, 100_000))
def test_the_gap_widens_with_waiting_up_to_its_bound(waited: int) -> None:
    gap = allowed_gap(waited)
    assert GAP_BASE <= gap <= GAP_MAX
    assert gap <= allowed_gap(waited + 1000)
    assert gap == min(GAP_MAX, GAP_BASE + GAP_PER_SECOND * max(0, waited) // 1000)


def test_close_ratings_are_preferred_and_a_long_wait_widens_the_gap() -> None:
    a, b, c, d = (Seeker("a", 1000, NOW), Seeker("b", 1050, NOW), Seeker("c", 1090, NOW),
                  Seeker("d", 1500, NOW))
    assert [[s.id for s in g] for g in form([a, b, c, d], 2, NOW)] == [["b", "c"]]
    # d has waited 10 s: 600 points now, so c may race it, and a takes b: two pairs beat one.
    d_waited = Seeker("d", 1500, NOW - 10_000)
    assert sorted(sorted(s.id for s in g) for g in form([a, b, c, d_waited], 2, NOW)) == [["a", "b"], ["c", "d"]]


def test_groups_of_four_take_the_tightest_window_around_the_longest_waiter() -> None:
    pool = [Seeker(f"p{r}", r, NOW - (9_000 if r == 1300 else 0)) for r in (1000, 1010, 1020, 1030, 1300, 1310,
                                                                          1320, 1330, 2000)]
    groups = form(pool, 4, NOW)
    assert [[s.rating for s in g] for g in groups] == [[1300, 1310, 1320, 1330], [1000, 1010, 1020, 1030]]


@pytest.mark.parametrize("key", ["forty-thieves/2/300/rated", "sixty-thieves/4/60/casual"])
def test_a_pool_name_round_trips(key: str) -> None:
    assert Pool.parse(key).key == key


def test_out_of_range_sizes_and_clocks_are_named() -> None:
    assert seeks.out_of_range(2, 300) is None
    assert "2 to 8 players, not 1" in (seeks.out_of_range(1, 300) or "")
    assert "not 9" in (seeks.out_of_range(9, 300) or "")
    assert "30 to 3600 seconds, not 10" in (seeks.out_of_range(2, 10) or "")
