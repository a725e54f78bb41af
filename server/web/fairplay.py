"""HTTP: the fair-play flags of an event (``GET /events/{event}/fairplay``) and of a day's daily deal
(``GET /daily/{variant}/fairplay?date=``), for the organiser token only (docs/events.md, "Fair play").

They hold the deal's positions and unseen cards, so they are never public; an organiser's power never
comes from a player's key (server/players/organiser.py). Here, beside the pages, because answering HTTP
is this layer's job; the analysis itself is server/fairplay/.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from shared import protocol as p

from ..answers import error_response, json_response, service_of, tournaments_of
from ..events.daily import event_name, variant_and_day
from ..events.format import format_of, unplayable
from ..fairplay.report import Scope, report
from ..players.organiser import organiser_refusal
from ..store.fairplay import FairPlayStore


async def event_fairplay(request: Request) -> Response:
    """200 FairPlayReport of the event's races so far; 403 without the organiser token; 404 no event."""
    if (refusal := await organiser_refusal(request)) is not None:
        return refusal
    t = tournaments_of(request)
    meta = await t.events.meta(request.path_params["event"])
    if meta is None:
        return error_response(p.ErrorCode.EVENT_NOT_FOUND, 404)
    if (why := unplayable(meta)) is not None:
        return error_response(p.ErrorCode.UNAVAILABLE, 503, why)
    rounds = await format_of(meta.format).schedule(t.events, meta)
    races = [heat.race for r in rounds for heat in r.heats]
    scope = Scope(name=f"event:{meta.id}", variant=meta.variant, races=races)
    return json_response(await _report(request, scope))


async def daily_fairplay(request: Request) -> Response:
    """200 FairPlayReport of the day's plays; 403 without the organiser token; 400 bad variant or date."""
    if (refusal := await organiser_refusal(request)) is not None:
        return refusal
    asked = variant_and_day(request)
    if isinstance(asked, Response):
        return asked
    variant, date = asked
    plays = await tournaments_of(request).daily.plays(variant, date)
    scope = Scope(name=event_name(variant, date), variant=variant, races=sorted(plays.values()))
    return json_response(await _report(request, scope))


async def _report(request: Request, scope: Scope) -> p.FairPlayReport:
    service = service_of(request)
    return await report(service, FairPlayStore(service.store.redis), scope, service.config.fairplay_link_ms)
