"""A rated race's rating update, computed without I/O: the standings in, every account's change out.

openskill's Weng-Lin Plackett-Luce model rates free-for-all results: each
player is a team of one, ranked by the final standings, and players the
standings cannot tell apart (``standings.tied``) share a rank, which the
model counts as a tie. Only players with an account are rated; they are
ranked among themselves.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from openskill.models import PlackettLuce

from shared import protocol as p

from shared.standings import places, rank_key
from ..store.history_records import RatingChange, RatingPlan

MU = 25.0
SIGMA = 25.0 / 3
"""A new account's rating in a variant (openskill's defaults)."""
PROVISIONAL_SIGMA = 5.0
"""A rating whose sigma is above this is provisional (measured: some 20 races between two players, 30 in races
of four, 80 in races of ten): shown with a ``?``."""
SHOWN_BASE, SHOWN_SCALE = 1000, 40
"""The shown rating is ``1000 + 40 * (mu - 3 sigma)``: a new player shows 1000, and it rises as sigma falls."""

_MODEL = PlackettLuce(mu=MU, sigma=SIGMA)


def shown(mu: float, sigma: float) -> int:
    """The rating shown to people: openskill's ordinal (mu - 3 sigma), scaled and rounded."""
    ordinal = _MODEL.rating(mu=mu, sigma=sigma).ordinal(z=3.0, alpha=SHOWN_SCALE, target=SHOWN_BASE)
    return round(ordinal)


def provisional(sigma: float) -> bool:
    return sigma > PROVISIONAL_SIGMA


def plan(race: str, variant: str, standings: Sequence[p.Standing],
         current: Mapping[str, tuple[float, float] | None]) -> RatingPlan:
    """The update of a rated race: for each account in ``standings``, its ``(mu, sigma)`` in ``current``
    (None or missing: a new rating) before and after. Fewer than two accounts change nothing."""
    rated = sorted((s for s in standings if s.account), key=rank_key)
    if len(rated) < 2:
        return RatingPlan(race=race, variant=variant, changes=[])
    shared = places(rated)
    before = [current.get(s.account or "") or (MU, SIGMA) for s in rated]
    teams = [[_MODEL.rating(mu=mu, sigma=sigma)] for mu, sigma in before]
    after = _MODEL.rate(teams, ranks=[float(place) for place in shared])
    return RatingPlan(race=race, variant=variant, changes=[
        RatingChange(account=s.account or "", place=place, mu_before=mu, sigma_before=sigma,
                     mu_after=float(team[0].mu), sigma_after=float(team[0].sigma))
        for s, place, (mu, sigma), team in zip(rated, shared, before, after)
    ])
