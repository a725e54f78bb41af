"""The account pages: ``/player/{name}`` (a profile and its history) and ``/leaderboard``.

The same reads and the same typed bodies as ``GET /players/{name}``,
``GET /players/{name}/races`` and ``GET /leaderboard`` (server/players/http.py),
so a page and its JSON never disagree.
"""

from __future__ import annotations

import msgspec
from starlette.requests import Request
from starlette.responses import Response

from shared import protocol as p
from shared.variants import UnknownVariant, get_variant

from ..answers import service_of, tournaments_of
from ..players import http as players_http
from ..accounts.keys import account_of
from ..matchmaking.challenges import open_challenges_to
from ..store.events import EventMeta
from ..store.history import BadCursor
from .render import bad_request, not_found, render

HISTORY_SHOWN = 20
LEADERS_SHOWN = 100


async def player(request: Request) -> Response:
    """A player's record per variant, ratings, and recent races (paged with ``?before=``)."""
    history = service_of(request).history
    name = request.path_params["name"]
    stats = await history.profile(name)
    if stats is None:
        return not_found(p.ErrorCode.PLAYER_NOT_FOUND, f"No account is named {name!r}.")
    try:
        page = await history.history_page(name, request.query_params.get("before") or None, HISTORY_SHOWN)
    except BadCursor as exc:
        return bad_request(p.ErrorCode.BAD_FIELD, f"before: {exc}")
    profile = players_http.profile_body(stats)
    races = page.races if page else []
    return render("player.html", title=profile.name, profile=profile, races=races,
                  around={r.race: await _around(request, r.race, profile.name) for r in races},
                  next=page.next if page else None,
                  older=bool(request.query_params.get("before")),
                  challenges=await open_challenges_to(service_of(request), account_of(profile.name)))


class RaceAround(msgspec.Struct):
    """Who a player raced and in what: the race's other players (their standings) and its event."""

    opponents: list[p.Standing]
    event: EventMeta | None


async def _around(request: Request, race: str, name: str) -> RaceAround | None:
    """A history line's opponents and event, read from the race's own results and meta while the race
    is kept (--retention); None after. Standings are public once a race is over (its deal may not be)."""
    store = service_of(request).store
    meta, blob = await store.meta(race), await store.results(race)
    if meta is None or blob is None:
        return None
    results = msgspec.msgpack.decode(blob, type=p.Results)
    event = await tournaments_of(request).events.meta(meta.event) if meta.event else None
    return RaceAround([s for s in results.standings if s.account != account_of(name)], event)


async def leaderboard(request: Request) -> Response:
    """The rated accounts of one variant, best first (``?variant=``, Forty Thieves by default)."""
    try:
        variant = get_variant(request.query_params.get("variant") or players_http.DEFAULT_VARIANT).key
    except UnknownVariant as exc:
        return bad_request(p.ErrorCode.BAD_VARIANT, str(exc))
    rows = await service_of(request).history.leaderboard(variant, LEADERS_SHOWN)
    board = players_http.leaderboard_body(variant, rows)
    return render("leaderboard.html", title="Leaderboard", board=board)
