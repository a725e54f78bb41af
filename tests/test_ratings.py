"""The rating update of a rated race (server/accounts/ratings.py), without I/O: order, ties, provisional."""

from __future__ import annotations

import random

from openskill.models import PlackettLuce

from server.accounts import ratings
from shared.standings import ranked
from shared import protocol as p


def _standing(seat: int, account: str | None, status: str = "racing", home: int = 0, home_at: int | None = None,
              finished_at: int | None = None) -> p.Standing:
    return p.Standing(rank=0, seat=seat, name=account or f"guest{seat}", status=status,  # type: ignore[arg-type]
                      home=home, total=104, moves=5, home_at=home_at, finished_at=finished_at, account=account)


def _race() -> list[p.Standing]:
    return [_standing(0, "ann", "finished", 104, 50_000, 60_000),
            _standing(1, "bob", home=40, home_at=30_000),
            _standing(2, "cy", "gave_up", 40, 10_000, 20_000)]


def test_new_players_show_1000_and_are_provisional() -> None:
    assert ratings.shown(ratings.MU, ratings.SIGMA) == 1000
    assert ratings.provisional(ratings.SIGMA) and not ratings.provisional(5.0) and ratings.provisional(5.01)
    assert ratings.shown(30.0, 4.0) == round(1000 + 40 * (30.0 - 12.0))


def test_the_order_of_the_standings_is_the_order_of_the_ratings() -> None:
    plan = ratings.plan("r1", "forty-thieves", _race(), {})
    by = {c.account: c for c in plan.changes}
    assert [c.account for c in plan.changes] == ["ann", "bob", "cy"] and [c.place for c in plan.changes] == [1, 2, 3]
    assert by["ann"].mu_after > by["bob"].mu_after > by["cy"].mu_after
    assert by["ann"].mu_after > ratings.MU > by["cy"].mu_after
    assert all(c.sigma_after < c.sigma_before for c in plan.changes)
    assert all((c.mu_before, c.sigma_before) == (ratings.MU, ratings.SIGMA) for c in plan.changes)
    # openskill itself, for the record: the plan is exactly its Plackett-Luce update.
    model = PlackettLuce()
    expected = model.rate([[model.rating()] for _ in range(3)], ranks=[1, 2, 3])
    assert [(c.mu_after, c.sigma_after) for c in plan.changes] == [(t[0].mu, t[0].sigma) for t in expected]


def test_the_input_order_does_not_matter() -> None:
    standings = _race()
    reference = ratings.plan("r1", "forty-thieves", standings, {})
    for seed in range(5):
        shuffled = standings[:]
        random.Random(seed).shuffle(shuffled)
        assert ratings.plan("r1", "forty-thieves", shuffled, {}) == reference


def test_ties_are_ties() -> None:
    """bob and cy both played on to 7 cards home reached at the same moment: the standings order them
    by seat, the ratings do not."""
    standings = [_standing(0, "ann", "finished", 104, 50_000, 60_000), _standing(1, "bob", home=7, home_at=9_000),
                 _standing(2, "cy", home=7, home_at=9_000)]
    assert [s.seat for _, s in ranked(standings)] == [0, 1, 2]
    plan = ratings.plan("r1", "forty-thieves", standings, {})
    by = {c.account: c for c in plan.changes}
    assert [c.place for c in plan.changes] == [1, 2, 2]
    assert (by["bob"].mu_after, by["bob"].sigma_after) == (by["cy"].mu_after, by["cy"].sigma_after)
    untied = ratings.plan("r1", "forty-thieves", [*standings[:2], _standing(2, "cy", home=7, home_at=9_001)], {})
    assert {c.account: c for c in untied.changes}["bob"].mu_after > by["bob"].mu_after


def test_giving_up_early_rates_below_playing_on() -> None:
    """The issue's example: gave up at 1/104 after 2 moves vs played to the time limit with 1/104."""
    standings = [_standing(0, "ann", "gave_up", 1, 1_000, 1_500), _standing(1, "bob", home=1, home_at=40_000)]
    by = {c.account: c for c in ratings.plan("r1", "forty-thieves", standings, {}).changes}
    assert by["bob"].place == 1 and by["ann"].place == 2 and by["bob"].mu_after > by["ann"].mu_after


def test_current_ratings_are_the_starting_point_and_guests_are_not_rated() -> None:
    standings = [*_race(), _standing(3, None, "finished", 104, 1_000, 2_000)]  # a guest won: not rated
    plan = ratings.plan("r1", "forty-thieves", standings, {"ann": (20.0, 3.0), "bob": None})
    by = {c.account: c for c in plan.changes}
    assert set(by) == {"ann", "bob", "cy"} and by["ann"].place == 1
    assert (by["ann"].mu_before, by["ann"].sigma_before) == (20.0, 3.0)
    assert (by["bob"].mu_before, by["bob"].sigma_before) == (ratings.MU, ratings.SIGMA)
    assert by["ann"].mu_after - 20.0 < ratings.plan("r1", "forty-thieves", _race(), {}).changes[0].mu_after - 25.0, \
        "a sure rating moves less"


def test_one_account_alone_is_not_rated() -> None:
    assert ratings.plan("r1", "forty-thieves", [_standing(0, "ann"), _standing(1, None)], {}).changes == []


def test_a_rating_stops_being_provisional_after_some_races() -> None:
    """Two players winning in turn: sigma falls to the provisional bound in about twenty races
    (docs/protocol.md, "Ratings", says so)."""
    current: dict[str, tuple[float, float] | None] = {}
    races = 0
    while True:
        races += 1
        first, second = ("ann", "bob") if races % 2 else ("bob", "ann")
        standings = [_standing(0, first, "finished", 104, 5_000, 6_000), _standing(1, second, home=50, home_at=1)]
        plan = ratings.plan(f"r{races}", "forty-thieves", standings, current)
        current = {c.account: (c.mu_after, c.sigma_after) for c in plan.changes}
        mu, sigma = current["ann"]  # type: ignore[misc]
        if not ratings.provisional(sigma):
            break
    assert 12 <= races <= 30, races
