"""The race pages: ``/`` (races being played and waiting) and ``/watch/{race}`` (one race).

Rendered whole on the server (readable without JavaScript: the table as it
stood, the standings once over); static/watch.js then keeps a race's page
live from its SSE stream, which resumes from the version the page was
rendered at, so nothing is fetched twice.
"""

from __future__ import annotations

import msgspec
from starlette.requests import Request
from starlette.responses import Response

from shared import protocol as p
from shared.variants import VARIANTS, get_variant

from ..answers import service_of, tournaments_of
from ..events.tournaments import Tournaments
from ..events import daily
from ..events.format import format_of, unplayable
from ..race import rules as races
from ..race.clock import now_ms
from ..race.service import Service
from ..store import RaceMeta
from .render import not_found, render, variant_name
from .sse import deal_text


async def race_meta(service: Service, ref: str) -> RaceMeta | None:
    """The race of an id or join code, closed first if its time ran out with nobody connected
    (as ``GET /races/{race}`` does)."""
    race = await service.store.resolve(ref)
    meta = await service.store.meta(race) if race else None
    if meta is not None and meta.status == "started" and now_ms() >= meta.ends_at:
        if await service.end_race(meta.id):
            meta = await service.store.meta(meta.id)
    return meta


async def index(request: Request) -> Response:
    """Races in the lobby or running, with links to watch them; events open or running, with their
    current round's heats (each a race to watch)."""
    service = service_of(request)
    metas = await service.store.active_races()
    now = now_ms()
    rows = [races.race_info(m, now) for m in metas]
    live = [r for r in rows if r.status in ("countdown", "running")]
    lobby = [r for r, m in zip(rows, metas) if r.status == "lobby" and not m.called_off_at]  # (nobody may join)
    recent = [races.race_info(m, now) for m in await service.store.recent_races(RECENT_SHOWN)]
    seeking = [line for line in (await service.seeks.pools()).pools if line.waiting]
    return render("index.html", title="Races", live=live, lobby=lobby, recent=recent, seeking=seeking,
                  events=await _current_events(tournaments_of(request)),
                  daily=await _daily_boards(tournaments_of(request), now))


RECENT_SHOWN = 10
"""Finished races listed on the front page (their standings and replays stay until --retention)."""
DAILY_SHOWN = 5
"""Lines of each daily board on the front page."""


async def _daily_boards(t: Tournaments, now: int) -> list[p.DailyBoard]:
    """Today's daily deal of each variant someone has played today (``GET /daily/{variant}``)."""
    date = daily.today(now)
    out = []
    for variant in VARIANTS:
        if await t.daily.deal(variant, date) is not None:
            b = await daily.board(t, variant, date)
            out.append(msgspec.structs.replace(b, lines=b.lines[:DAILY_SHOWN]))
    return out


async def _current_events(t: Tournaments) -> list[tuple[p.EventInfo, list[p.EventHeat]]]:
    """Events taking entries (a scheduled one: when it starts) or under way, as ``GET /events/{id}`` shows them (server/events/http.py),
    each with the races its format says to watch now (a round's heats, an arena's latest pairings)."""
    out = []
    for event in await t.events.recent_ids():
        meta = await t.events.meta(event)
        if meta is None or meta.status in ("finished", "cancelled") or unplayable(meta) is not None:
            continue
        fmt = format_of(meta.format)
        info = await fmt.info(t.events, meta)
        out.append((info, fmt.watch_now(info)))
    return out


async def watch(request: Request) -> Response:
    """One race: its live table (kept live by static/watch.js), or the standings and replays once over."""
    service = service_of(request)
    ref = request.path_params["race"]
    meta = await race_meta(service, ref)
    if meta is None:
        return not_found(p.ErrorCode.RACE_NOT_FOUND, f"No race has the id or join code {ref!r}.")
    version, lines = await service.store.lines(meta.id)
    now = now_ms()
    info = races.race_info(meta, now)
    table = races.progress_lines(lines, meta.started, get_variant(meta.variant).total_cards)
    results = None
    if meta.status == "finished":
        blob = await service.store.results(meta.id)
        results = races.shown_results(meta, blob, now) if blob is not None else None
    state = {"race": msgspec.to_builtins(info), "version": version, "server_time": now,
             "progress": msgspec.to_builtins(table),
             "results": msgspec.to_builtins(results) if results else None,
             "deal_text": deal_text(results) if results else None,
             "secret_text": results.secret_words() if results else None, "variant_name": variant_name(meta.variant),
             "events": f"/races/{meta.id}/events", "replay": f"/races/{meta.id}/replay/"}
    return render("watch.html", title=f"Race {meta.code}", race=info, table=sorted(table, key=lambda e: e.rank),
                  results=results, state=state)
