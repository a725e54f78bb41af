"""The daily deal: one deal a day per variant (UTC). Each account plays it once, when it likes, on its
own clock (its race starts when it says ``ready``); the board ranks by finish time, then cards home;
the deal and everyone's games are revealed once the day is over (until then each play's results hide
them, so a player who has finished cannot pass the deal on).

HTTP: ``POST /daily/{variant}`` (the account's key) and ``GET /daily/{variant}?date=YYYY-MM-DD``.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

import msgspec
from starlette.requests import Request
from starlette.responses import Response

from shared import params, protocol as p
from shared.standings import shared_ranks, win_ms
from shared.variants import UnknownVariant, get_variant

from ..answers import client_of, creation_refused, error_response, json_response, tournaments_of
from ..deals.checked import CheckedDeal, PoolUnavailable, fresh_deal_number
from ..race.rules import CreateError
from ..race.clock import now_ms
from ..players.registration import bearer_account

if TYPE_CHECKING:
    from .tournaments import Tournaments

DAY_MS = 86_400_000
SOLVE_SECONDS = 2.0
"""The longest the day's first player waits for a checked deal (at most ``--checked-wait``) when the
pool has none ready; then the day's deal is a secret random one (docs/events.md, "The daily deal")."""


def today(now: int) -> str:
    return dt.datetime.fromtimestamp(now / 1000, dt.timezone.utc).date().isoformat()


def day_end(date: str) -> int:
    """Milliseconds at the end of the UTC day ``date`` (the reveal)."""
    start = dt.datetime.fromisoformat(date).replace(tzinfo=dt.timezone.utc)
    return int(start.timestamp() * 1000) + DAY_MS


def event_name(variant: str, date: str) -> str:
    """What a daily play's race names as its event."""
    return f"daily:{variant}:{date}"


async def play_daily(request: Request) -> Response:
    """The account's race on today's deal: made on the first call, the same one on every later call."""
    account = await bearer_account(request)
    if isinstance(account, Response):
        return account
    try:
        variant = get_variant(request.path_params["variant"]).key
    except UnknownVariant as exc:
        return error_response(p.ErrorCode.BAD_VARIANT, 400, str(exc))
    t = tournaments_of(request)
    now = now_ms()
    date = today(now)
    existing = await t.daily.play_of(variant, date, account.account)
    if existing is None:
        try:
            # A new play is a race the address asked for, and the day's first may set the solver
            # working: it spends a creation token, whatever comes of it.
            await t.races.spend_creation(client_of(request))
        except CreateError as exc:
            return creation_refused(exc)
        deal = await _deal_of_the_day(request, variant, date, now)
        midnight = day_end(date)  # the games are shown then, so the play ends by then
        race = await t.races.create_for([account.account], deal, t.races.config.daily_time_limit, "all-ready",
                                        event_name(variant, date), reveal_at=midnight, ends_by=midnight)
        existing = await t.daily.claim(variant, date, account.account, race.id)
    meta = await t.races.store.meta(existing)
    if meta is None:
        return error_response(p.ErrorCode.RACE_NOT_FOUND, 404, "your play of today's deal is gone")
    return json_response(p.DailyPlay(variant=variant, date=date, race=meta.id, code=meta.code,
                                     time_limit=meta.time_limit, reveal_at=day_end(date)))


async def _deal_of_the_day(request: Request, variant: str, date: str, now: int) -> CheckedDeal:
    t = tournaments_of(request)
    drawn = await t.daily.deal(variant, date)
    if drawn is None:
        try:
            fresh = await t.races.checked.take(variant, min(t.races.config.checked_wait, SOLVE_SECONDS))
            number, line = fresh.deal, " ".join(fresh.line)
        except PoolUnavailable:  # none ready nor found in time, or the solver cannot check the variant
            number, line = fresh_deal_number(), ""
        drawn = await t.daily.draw(variant, date, number, line, now)
    return CheckedDeal(variant, drawn[0], tuple(drawn[1].split()))


async def daily_board(request: Request) -> Response:
    """The day's board; the deal and the games once the day is over."""
    try:
        variant = get_variant(request.path_params["variant"]).key
    except UnknownVariant as exc:
        return error_response(p.ErrorCode.BAD_VARIANT, 400, str(exc))
    date = request.query_params.get("date") or today(now_ms())
    try:
        params.day(date)
    except ValueError:
        return error_response(p.ErrorCode.BAD_FIELD, 400, f"date: {date!r} is not a day (YYYY-MM-DD)")
    return json_response(await board(tournaments_of(request), variant, date))


async def board(t: "Tournaments", variant: str, date: str) -> p.DailyBoard:
    """The board of ``variant``'s deal of ``date``: by finish time, then cards home; the deal and
    every game once the day is over (the JSON endpoint and the front page show the same)."""
    revealed = now_ms() >= day_end(date)
    lines: list[tuple[str, str, str, int, int | None, str, list[str] | None]] = []
    for account, race in (await t.daily.plays(variant, date)).items():
        meta = await t.races.store.meta(race)
        if meta is None:
            continue
        blob = await t.races.store.results(race) if meta.status == "finished" else None
        if blob is None:
            _, progress = await t.races.store.lines(race)
            home = progress[0].home if progress else 0
            lines.append((account, progress[0].name if progress else account, "playing", home, None, race, None))
            continue
        res = msgspec.msgpack.decode(blob, type=p.Results)
        s = res.standings[0]
        time_ms = win_ms(s.status, s.finished_at, res.starts_at or 0)
        lines.append((account, s.name, s.status, s.home, time_ms, race, res.records[0].moves if revealed else None))
    order = sorted(lines, key=lambda line: (line[4] is None, line[4] or 0, -line[3], line[0]))
    out = [p.DailyLine(rank=rank, account=account, name=name, status=status, home=home, time_ms=time_ms, race=race,
                       moves=moves)
           for rank, (account, name, status, home, time_ms, race, moves)
           in zip(shared_ranks(order, lambda line: (line[4], line[3])), order)]
    drawn = await t.daily.deal(variant, date)
    return p.DailyBoard(variant=variant, date=date, revealed=revealed, lines=out,
                        deal=drawn[0] if revealed and drawn else None)
