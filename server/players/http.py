"""The account endpoints that read results: ``GET /players/{name}``, ``GET /players/{name}/races`` and
``GET /leaderboard``. Thin: check the query, read through ``server/store/history.py``, answer the typed
bodies of ``shared/protocol/`` (the shown rating and the provisional mark are computed here, from mu
and sigma, by ``ratings.py``). A refused query reads nothing.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from shared import params, protocol as p
from shared.variants import UnknownVariant, get_variant

from ..ops.http import json_response
from ..race.requests import service_of
from ..store.history import BadCursor, History
from ..store.history_records import AccountStats, LeaderRow
from ..accounts import ratings

HISTORY_LIMIT = (1, 100, 20)
LEADERBOARD_LIMIT = (1, 100, 50)
"""Each list's ``limit``: smallest, largest, default."""
DEFAULT_VARIANT = "forty-thieves"


def _history(request: Request) -> History:
    return service_of(request).history


def _limit(request: Request, bounds: tuple[int, int, int]) -> int:
    low, high, default = bounds
    text = request.query_params.get("limit")
    if text is None:
        return default
    try:
        limit = params.count(text)
    except ValueError:
        limit = -1
    if not low <= limit <= high:
        raise p.Refusal(p.ErrorCode.BAD_FIELD, f"limit must be a whole number from {low} to {high}, not {text!r}")
    return limit


def profile_body(stats: AccountStats) -> p.Profile:
    variants = {}
    for key, v in stats.variants.items():
        rated = v.mu is not None and v.sigma is not None
        variants[key] = p.VariantRecord(
            races=v.races, wins=v.wins, best_ms=v.best_ms,
            rating=ratings.shown(v.mu, v.sigma) if v.mu is not None and v.sigma is not None else None,
            mu=v.mu, sigma=v.sigma, provisional=ratings.provisional(v.sigma) if v.sigma is not None else True,
            rated_races=v.rated if rated else 0,
        )
    return p.Profile(name=stats.name, created_at=stats.created_at, races=stats.races, wins=stats.wins,
                     variants=variants)


def leaderboard_body(variant: str, rows: list[LeaderRow]) -> p.Leaderboard:
    """Lines best first; equal shown ratings share a rank (1, 2, 2, 4)."""
    lines: list[p.LeaderboardLine] = []
    for i, row in enumerate(rows, start=1):
        rating = ratings.shown(row.mu, row.sigma)
        rank = lines[-1].rank if lines and lines[-1].rating == rating else i
        lines.append(p.LeaderboardLine(rank=rank, name=row.name, rating=rating, mu=row.mu, sigma=row.sigma,
                                       provisional=ratings.provisional(row.sigma), rated_races=row.rated))
    return p.Leaderboard(variant=variant, players=lines)


async def get_profile(request: Request) -> Response:
    stats = await _history(request).profile(request.path_params["name"])
    if stats is None:
        raise p.Refusal(p.ErrorCode.PLAYER_NOT_FOUND)
    return json_response(profile_body(stats))


async def get_history(request: Request) -> Response:
    limit = _limit(request, HISTORY_LIMIT)
    try:
        page = await _history(request).history_page(request.path_params["name"],
                                                    request.query_params.get("before") or None, limit)
    except BadCursor as exc:
        raise p.Refusal(p.ErrorCode.BAD_FIELD, str(exc)) from None
    if page is None:
        raise p.Refusal(p.ErrorCode.PLAYER_NOT_FOUND)
    return json_response(page)


async def get_leaderboard(request: Request) -> Response:
    limit = _limit(request, LEADERBOARD_LIMIT)
    try:
        variant = get_variant(request.query_params.get("variant") or DEFAULT_VARIANT).key
    except UnknownVariant as exc:
        raise p.Refusal(p.ErrorCode.BAD_VARIANT, str(exc)) from None
    return json_response(leaderboard_body(variant, await _history(request).leaderboard(variant, limit)))
