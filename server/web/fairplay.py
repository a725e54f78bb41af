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

from ..events.daily import event_name, variant_and_day
from ..events.http import event_of_path
from ..events.requests import tournaments_of
from ..fairplay.report import Scope, report
from ..ops.http import json_response
from ..players.organiser import require_organiser
from ..race.requests import service_of
from ..store.fairplay import FairPlayStore


async def event_fairplay(request: Request) -> Response:
    """200 FairPlayReport of the event's races so far; 403 without the organiser token; 404 no event."""
    await require_organiser(request)
    t = tournaments_of(request)
    meta = await event_of_path(request)
    rounds = await t.formats.of(meta.format).schedule(t.events, meta)
    races = [heat.race for r in rounds for heat in r.heats]
    scope = Scope(name=f"event:{meta.id}", variant=meta.variant, races=races)
    return json_response(await _report(request, scope))


async def daily_fairplay(request: Request) -> Response:
    """200 FairPlayReport of the day's plays; 403 without the organiser token; 400 bad variant or date."""
    await require_organiser(request)
    variant, date = variant_and_day(request)
    plays = await tournaments_of(request).daily.plays(variant, date)
    scope = Scope(name=event_name(variant, date), variant=variant, races=sorted(plays.values()))
    return json_response(await _report(request, scope))


async def _report(request: Request, scope: Scope) -> p.FairPlayReport:
    service = service_of(request)
    return await report(service, FairPlayStore(service.store.redis), scope, service.config.events.fairplay_link_ms)
