"""The daily deal: one deal a day per variant (UTC). Each account plays it once, when it likes, on its
own clock (its race starts when it says ``ready``); the board ranks by finish time, then cards home;
the deal and everyone's games are revealed once the day is over (until then each play's results hide
them, so a player who has finished cannot pass the deal on).

HTTP: ``POST /daily/{variant}`` (the account's key) and ``GET /daily/{variant}?date=YYYY-MM-DD``.
"""

from __future__ import annotations

import datetime as dt

import msgspec
from starlette.requests import Request
from starlette.responses import Response

from shared import params, protocol as p
from shared.standings import shared_ranks, win_ms
from shared.variants import UnknownVariant, get_variant

from ..ops.http import json_response
from ..race.requests import client_of
from ..config import TournamentSettings
from ..deals.checked import CheckedDeal, PoolUnavailable, fresh_deal_number
from ..fairplay.conditions import DailyCondition
from ..store.fairplay import FairPlayStore
from ..race.clock import now_ms
from ..players.registration import bearer_account
from ..store import Store
from ..store.daily import DailyStore
from .requests import tournaments_of

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


def _variant(request: Request) -> str:
    """The variant of the path; raises ``bad_variant``."""
    try:
        return get_variant(request.path_params["variant"]).key
    except UnknownVariant as exc:
        raise p.Refusal(p.ErrorCode.BAD_VARIANT, str(exc)) from None


async def play_daily(request: Request) -> Response:
    """The account's race on today's deal: made on the first call, the same one on every later call."""
    account = await bearer_account(request)
    variant = _variant(request)
    t = tournaments_of(request)
    now = now_ms()
    date = today(now)
    existing = await t.daily.play_of(variant, date, account.account)
    if existing is None:
        # A new play is a race the address asked for, and the day's first may set the solver
        # working: it spends a creation token, whatever comes of it.
        await t.races.spend_creation(client_of(request))
        deal = await _deal_of_the_day(request, variant, date, now)
        midnight = day_end(date)  # the games are shown then, so the play ends by then
        race = await t.races.create_for([account.account], deal, t.races.config.events.daily_time_limit, "all-ready",
                                        event_name(variant, date), reveal_at=midnight, ends_by=midnight)
        existing = await t.daily.claim(variant, date, account.account, race.id)
    meta = await t.races.store.meta(existing)
    if meta is None:
        raise p.Refusal(p.ErrorCode.RACE_NOT_FOUND, "your play of today's deal is gone")
    return json_response(p.DailyPlay(variant=variant, date=date, race=meta.id, code=meta.code,
                                     time_limit=meta.time_limit, reveal_at=day_end(date)))


async def _deal_of_the_day(request: Request, variant: str, date: str, now: int) -> CheckedDeal:
    t = tournaments_of(request)
    drawn = await t.daily.deal(variant, date)
    if drawn is None:
        try:
            fresh = await t.races.checked.take(variant, min(t.races.checked.wait, SOLVE_SECONDS))
            number, line = fresh.deal, " ".join(fresh.line)
        except PoolUnavailable:  # none ready nor found in time, or the solver cannot check the variant
            number, line = fresh_deal_number(), ""
        drawn = await t.daily.draw(variant, date, number, line, now)
    return CheckedDeal(variant, drawn[0], tuple(drawn[1].split()))


def variant_and_day(request: Request) -> tuple[str, str]:
    """The variant of the path and the day of ``?date=`` (default today); raises ``bad_variant`` or
    ``bad_field`` (the board and its fair-play flags read the same)."""
    variant = _variant(request)
    date = request.query_params.get("date") or today(now_ms())
    try:
        params.day(date)
    except ValueError:
        raise p.Refusal(p.ErrorCode.BAD_FIELD, f"date: {date!r} is not a day (YYYY-MM-DD)") from None
    return variant, date


async def daily_board(request: Request) -> Response:
    """The day's board; the deal and the games once the day is over."""
    variant, date = variant_and_day(request)
    t = tournaments_of(request)
    return json_response(await board(t.daily, t.races.store, variant, date, daily_condition(t.races.config.events)))


async def board(plays: DailyStore, store: Store, variant: str, date: str,
                condition: DailyCondition) -> p.DailyBoard:
    """The board of ``variant``'s deal of ``date``: by finish time, then cards home; the deal and
    every game once the day is over (the JSON endpoint and the front page show the same). Given the daily
    store and the race store alone: what it reads."""
    revealed = now_ms() >= day_end(date)
    lines: list[tuple[str, str, str, int, int | None, str, list[str] | None]] = []
    for account, race in (await plays.plays(variant, date)).items():
        meta = await store.meta(race)
        if meta is None:
            continue
        blob = await store.results(race) if meta.status == "finished" else None
        if blob is None:
            _, progress = await store.lines(race)
            home = progress[0].home if progress else 0
            lines.append((account, progress[0].name if progress else account, "playing", home, None, race, None))
            continue
        res = msgspec.msgpack.decode(blob, type=p.Results)
        s = res.standings[0]
        time_ms = win_ms(s.status, s.finished_at, res.starts_at or 0)
        lines.append((account, s.name, s.status, s.home, time_ms, race, res.records[0].moves if revealed else None))
    counted = await _counted(plays, condition, variant, [line[0] for line in lines])
    out: list[p.DailyLine] = []
    for counts in (True, False):  # the counted lines ranked first, the others after them (docs/events.md)
        part = [line for line in lines if (line[0] in counted) == counts]
        order = sorted(part, key=lambda line: (line[4] is None, line[4] or 0, -line[3], line[0]))
        out.extend(p.DailyLine(rank=len(out) + rank, account=account, name=name, status=status, home=home,
                               time_ms=time_ms, race=race, moves=moves, counted=counts)
                   for rank, (account, name, status, home, time_ms, race, moves)
                   in zip(shared_ranks(order, lambda line: (line[4], line[3])), order))
    drawn = await plays.deal(variant, date)
    return p.DailyBoard(variant=variant, date=date, revealed=revealed, lines=out,
                        deal=drawn[0] if revealed and drawn else None)


def daily_condition(events: TournamentSettings) -> DailyCondition:
    """The server's daily condition (``--daily-min-rated-races``, ``--daily-min-account-age``)."""
    return DailyCondition(events.daily_min_rated_races, events.daily_min_account_age)


async def _counted(plays: DailyStore, condition: DailyCondition, variant: str, accounts: list[str]) -> set[str]:
    """The accounts that meet the server's daily condition: a scout's fresh account plays, but does not
    count."""
    now = now_ms()
    return {f.account for f in await FairPlayStore(plays.redis).facts(accounts, variant)
            if condition.counts(f, variant, now)}
