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
from ..matchmaking.requests import seeks_of
from ..events import daily
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
    finished = await service.store.recent_races(RECENT_SHOWN)
    recent = [races.race_info(m, now) for m in finished]
    seeking = [line for line in (await seeks_of(request).pools()).pools if line.waiting]
    t = tournaments_of(request)
    return render("index.html", title="Races", live=live, lobby=lobby, recent=recent, seeking=seeking,
                  winners={m.code: await _winner(service, m) for m in finished},
                  events=await _current_events(t), finished_events=await _finished_events(t),
                  daily=await _daily_boards(t, now))


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
            b = await daily.board(t.daily, t.races.store, variant, date, daily.daily_condition(t.races.config.events))
            out.append(msgspec.structs.replace(b, lines=b.lines[:DAILY_SHOWN]))
    return out


async def _current_events(t: Tournaments) -> list[tuple[p.EventInfo, list[p.EventHeat]]]:
    """Events taking entries (a scheduled one: when it starts) or under way, as ``GET /events/{id}`` shows them (server/events/http.py),
    each with the races its format says to watch now (a round's heats, an arena's latest pairings)."""
    out = []
    for event in await t.events.recent_ids():
        meta = await t.events.meta(event)
        if meta is None or meta.status in ("finished", "cancelled") or t.formats.unplayable(meta) is not None:
            continue
        fmt = t.formats.of(meta.format)
        info = await fmt.info(t.events, meta)
        out.append((info, fmt.watch_now(info)))
    return out


async def _winner(service: Service, meta: RaceMeta) -> tuple[p.Standing, int | None] | None:
    """A finished race's winner (its first place, if that player finished the deal) and time: the
    standings are public as soon as the race is over, even while its deal stays secret."""
    blob = await service.store.results(meta.id)
    if blob is None:
        return None
    results = msgspec.msgpack.decode(blob, type=p.Results)
    first = winner_of(results)
    return (first, winning_ms(results)) if first is not None else None


def winner_of(results: p.Results) -> p.Standing | None:
    """The player who won the race (first, and finished the deal), or None when nobody did."""
    first = results.standings[0] if results.standings else None
    return first if first is not None and first.status == "finished" else None


def winning_ms(results: p.Results) -> int | None:
    """The winner's time from the start (ms), or None when nobody won."""
    first = winner_of(results)
    if first is None or first.finished_at is None or results.starts_at is None:
        return None
    return first.finished_at - results.starts_at


FINISHED_EVENTS_SHOWN = 5
"""Finished events listed on the front page, newest first."""


async def _finished_events(t: Tournaments) -> list[tuple[p.EventInfo, list[p.EventStandingLine]]]:
    """The latest finished events, each with its first place(s) (ties share rank 1)."""
    out = []
    for event in await t.events.recent_ids():
        meta = await t.events.meta(event)
        if meta is None or meta.status != "finished" or t.formats.unplayable(meta) is not None:
            continue
        fmt = t.formats.of(meta.format)
        standings = await fmt.standings(t.events, meta)
        out.append((await fmt.info(t.events, meta), [line for line in standings.lines if line.rank == 1]))
        if len(out) == FINISHED_EVENTS_SHOWN:
            break
    return out


async def _accounts(service: Service, race: str, seats: list[int]) -> dict[int, str]:
    """The seats held by an account (a live table's names link to the players' pages; a guest's seat has
    no page). Read when the page is rendered: a player seated later is linked from the next load on."""
    out = {}
    for seat in seats:
        claim = await service.store.seat(race, seat)
        if claim is not None and claim.account:
            out[seat] = claim.account
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
    event = await tournaments_of(request).events.meta(meta.event) if meta.event else None
    accounts = await _accounts(service, meta.id, [line.seat for line in table])
    state = {"race": msgspec.to_builtins(info), "version": version, "server_time": now,
             "progress": msgspec.to_builtins(table),
             "results": msgspec.to_builtins(results) if results else None,
             "deal_text": deal_text(results) if results else None,
             "secret_text": results.secret_words() if results else None, "variant_name": variant_name(meta.variant),
             "events": f"/races/{meta.id}/events", "replay": f"/races/{meta.id}/replay/",
             "accounts": {str(seat): account for seat, account in accounts.items()}}
    return render("watch.html", title=f"Race {meta.code}", race=info, table=sorted(table, key=lambda e: e.rank),
                  results=results, state=state, event=event, accounts=accounts,
                  winner=winner_of(results) if results else None, winning_ms=winning_ms(results) if results else None)
