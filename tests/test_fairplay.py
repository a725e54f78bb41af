"""Fair play on a shared deal, on a real server and Redis (docs/events.md, "Fair play"): entry conditions
refuse and accept as documented; a scout and a beneficiary on a duplicate event's deal and on the daily
deal are flagged with their evidence, for the organiser only; an honest entrant is not; ``thieves event
fairplay`` run as a subprocess ends as documented.

The beneficiary plays the server's stored winning line (what the issue's beneficiary played after its
scout's draws); the honest entrant plays greedily from its own view, as ``thieves bot`` does (bench/fairplay.py's greedy player). Accounts are
registered behind a trusted proxy so that the scout and its beneficiary share an address and the honest
entrant has its own.
"""

from __future__ import annotations

from typing import Any, AsyncIterator

import msgspec
import pytest
from redis_util import Client, LiveServer, eventually, live_server
from test_event_secrecy import _thieves

from bench.fairplay import greedy
from server.events.daily import today
from server.race.clock import now_ms
from server.store.keys import AccountKeys
from shared import protocol as p
from server.deals.checked import CheckedDeal
from shared.engine import Game
from shared.pool import load_pool
from shared.solver import Verdict, solve
from shared.variants import get_variant

ORGANISER = "organiser-secret-for-fairplay"
AUTH = {"authorization": f"Bearer {ORGANISER}"}
VARIANT = "forty-thieves"
SCOUT_PLACE, HONEST_PLACE = "203.0.113.7", "198.51.100.9"


def _private_deals(count: int) -> list[CheckedDeal]:
    """Checked deals of the server's own kind: won by the solver, not in the public pool (whose lines
    anyone may follow, so the stored line is not flagged on them)."""
    public, out, number = load_pool(VARIANT).lines, [], 7_000_000
    while len(out) < count:
        number += 1
        found = solve(Game.new(get_variant(VARIANT), number), time_limit=None, node_limit=20_000)
        if number not in public and found.verdict is Verdict.WON:
            out.append(CheckedDeal(VARIANT, number, tuple(found.move_texts())))
    return out


@pytest.fixture
async def fair_server(redis_url: str) -> AsyncIterator[LiveServer]:
    """An organiser's server behind a trusted proxy (127.0.0.1), with private checked deals ready."""
    async with live_server(redis_url, organiser_token=ORGANISER, trusted_proxies="127.0.0.1",
                           fairplay_link_ms=0, fairplay_cpu=1.0) as server:
        for deal in _private_deals(2):
            await server.service.store.checked_push(VARIANT, deal.dumps(), 1000)
        yield server


async def _register(server: LiveServer, name: str, place: str) -> str:
    status, body = await server.http("POST", "/players", {"name": name}, headers={"x-forwarded-for": place})
    assert status == 201, body
    return str(body["key"])


def _bearer(key: str) -> dict[str, str]:
    return {"authorization": f"Bearer {key}"}


async def _age(server: LiveServer, account: str, days: float, rated: int) -> None:
    """Make ``account`` look ``days`` old with ``rated`` finished rated races (what an old account has)."""
    await server.service.store.redis.hset(AccountKeys(account).main, mapping={
        "created_at": now_ms() - int(days * 86_400_000), f"v:{VARIANT}:rated": rated})


async def _play(client: Client, moves: list[str], give_up: bool = True) -> None:
    for text in moves:
        assert isinstance(await client.move(text), p.Ack), text
    if give_up:
        await client.give_up()


async def _analysed(server: LiveServer, path: str) -> p.FairPlayReport:
    """The organiser's report once every game is analysed (the first asks start the analyses)."""
    reports: list[p.FairPlayReport] = []

    async def done() -> bool:
        status, body = await server.http("GET", path, headers=AUTH)
        assert status == 200, body
        reports[:] = [msgspec.convert(body, p.FairPlayReport)]
        return reports[0].waiting == 0

    await eventually(done, "every game analysed", timeout=120)
    return reports[0]


def _flags(report: p.FairPlayReport) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for flag in report.flags:
        out.setdefault(flag.name, set()).add(flag.kind)
    return out


async def test_entry_conditions_refuse_with_what_is_missing_and_accept_an_account_that_meets_them(
        fair_server: LiveServer) -> None:
    server = fair_server
    fresh = await _register(server, "newbie", HONEST_PLACE)
    old = await _register(server, "veteran", HONEST_PLACE)
    await _age(server, "veteran", days=3, rated=5)
    body = {"name": "Club Night", "rounds": 1, "conditions": {"min_rated_races": 3, "min_account_age": 86_400}}
    status, event = await server.http("POST", "/events", body, headers=AUTH)
    assert status == 201, event
    assert event["conditions"] == {"min_rated_races": 3, "min_account_age": 86_400, "min_rating": None,
                                   "max_rating": None}
    status, refused = await server.http("POST", f"/events/{event['id']}/entrants", headers=_bearer(fresh))
    assert status == 403 and refused["code"] == "entry_conditions_unmet", refused
    assert "3 finished rated races of forty-thieves (you have 0: 3 more)" in refused["message"]
    assert "an account at least 1 day old" in refused["message"]
    status, info = await server.http("GET", f"/events/{event['id']}")
    assert info["entrants"] == 0, "a refused entry stores nothing"
    status, entry = await server.http("POST", f"/events/{event['id']}/entrants", headers=_bearer(old))
    assert status == 200 and entry["account"] == "veteran", entry
    code, out = await _thieves("event", "show", event["id"], "--server", server.url)
    assert code == 0 and "entry: 3 finished rated races of forty-thieves; an account 1 day old" in out, out

    # A rating range: an account not rated yet has no rating to be at least anything.
    body = {"name": "Strong Cup", "rounds": 1, "conditions": {"min_rating": 900, "max_rating": 1100}}
    status, strong = await server.http("POST", "/events", body, headers=AUTH)
    assert status == 201, strong
    status, refused = await server.http("POST", f"/events/{strong['id']}/entrants", headers=_bearer(fresh))
    assert status == 403 and "a forty-thieves rating of at least 900 (yours: none yet)" in refused["message"]
    # Upside down: nobody could enter.
    body = {"name": "Nobody Cup", "conditions": {"min_rating": 1200, "max_rating": 1100}}
    status, bad = await server.http("POST", "/events", body, headers=AUTH)
    assert status == 400 and bad["code"] == "bad_field" and "nobody could enter" in bad["message"], bad


async def test_the_daily_board_counts_only_accounts_that_meet_the_servers_condition(fair_server: LiveServer) -> None:
    server = fair_server
    keys = {name: await _register(server, name, HONEST_PLACE) for name in ("quick", "steady")}
    await _age(server, "steady", days=2, rated=3)
    drawn = None
    for name, moves in (("quick", 40), ("steady", 10)):
        status, body = await server.http("POST", f"/daily/{VARIANT}", headers=_bearer(keys[name]))
        assert status == 200, body
        play = msgspec.convert(body, p.DailyPlay)
        drawn = await server.tournaments.daily.deal(VARIANT, play.date)
        c = await Client.connect(server)
        await c.hello(play.code, key=keys[name])
        await c.send(p.Ready(ready=True))
        await c.expect(p.Countdown)
        await _play(c, drawn[1].split()[:moves])
        await c.expect(p.Finished)
        await c.close()
    status, body = await server.http("GET", f"/daily/{VARIANT}")
    board = msgspec.convert(body, p.DailyBoard)
    assert [(line.name, line.rank, line.counted) for line in board.lines] == [("steady", 1, True), ("quick", 2, False)]
    code, out = await _thieves("daily", "board", "--server", server.url)
    shown = [line.split() for line in out.splitlines()]
    assert code == 0 and ["1", "steady"] == shown[2][:2] and shown[3][:2] == ["2", "quick"], out
    assert out.splitlines()[3].endswith("(not counted)") and "(not counted: accounts newer" in out


async def _event_with_a_scout(server: LiveServer) -> tuple[str, dict[str, str], Any]:
    """A duplicate event of one round: a scout and its beneficiary (one address) and an honest entrant,
    all in one heat; the scout draws the whole stock and gives up, the beneficiary plays the stored line,
    the honest entrant plays greedily and gives up when it has nothing new. Returns the event, the keys,
    and the heat's race meta."""
    keys = {"scout": await _register(server, "scout", SCOUT_PLACE),
            "helped": await _register(server, "helped", SCOUT_PLACE),
            "honest": await _register(server, "honest", HONEST_PLACE)}
    body = {"name": "Fair Cup", "rounds": 1, "heat_size": 3, "join_seconds": 1, "break_seconds": 0,
            "time_limit": 120, "deal_source": "pool"}
    status, event = await server.http("POST", "/events", body, headers=AUTH)
    assert status == 201, event
    for key in keys.values():
        status, answer = await server.http("POST", f"/events/{event['id']}/entrants", headers=_bearer(key))
        assert status == 200, answer
    status, answer = await server.http("POST", f"/events/{event['id']}/start", headers=AUTH)
    assert status == 200, answer
    heats: list[p.EventHeat] = []

    async def drawn() -> bool:
        status, info = await server.http("GET", f"/events/{event['id']}")
        heats[:] = [h for r in msgspec.convert(info, p.EventInfo).schedule for h in r.heats]
        return bool(heats)

    await eventually(drawn, "the heat drawn")
    clients = {}
    for name in heats[0].entrants:
        clients[name] = await Client.connect(server)
        await clients[name].hello(heats[0].code, key=keys[name])
    for c in clients.values():
        await c.expect(p.Countdown, timeout=30)
    meta = await server.service.store.meta(heats[0].race)
    stock = len(Game.new(get_variant(VARIANT), meta.deal).stock)
    await _play(clients["scout"], ["S"] * stock)
    await _play(clients["helped"], meta.line.split(), give_up=False)
    await _play(clients["honest"], greedy(meta.deal, 0.0, 1))
    for c in clients.values():
        await c.expect(p.Finished)
        await c.close()

    async def over() -> bool:
        status, info = await server.http("GET", f"/events/{event['id']}")
        return bool(info["status"] == "finished")

    await eventually(over, "the event over", timeout=60)
    return event["id"], keys, meta


async def test_a_scout_and_its_beneficiary_in_a_duplicate_event_are_flagged_for_the_organiser_only(
        fair_server: LiveServer) -> None:
    server = fair_server
    event, keys, meta = await _event_with_a_scout(server)
    for headers in ({}, _bearer(keys["helped"])):  # a player's key is no organiser's
        status, refused = await server.http("GET", f"/events/{event}/fairplay", headers=headers)
        assert status == 403 and refused["code"] == "organiser_required", refused
        assert str(meta.deal) not in refused["message"]
    report = await _analysed(server, f"/events/{event}/fairplay")
    assert report.scope == f"event:{event}" and report.analysed == 3 and report.waiting == 0
    flags = _flags(report)
    assert "scouting" in flags["scout"] and "linked" in flags["scout"]
    assert {"stored_line", "linked"} <= flags["helped"]
    assert "honest" not in flags, flags["honest"]
    scouting = next(f for f in report.flags if f.kind == "scouting")
    assert scouting.race == meta.id and scouting.moves[:3] == ["S", "S", "S"] and "gave up" in scouting.why
    line = next(f for f in report.flags if f.kind == "stored_line")
    assert line.moves == meta.line.split() and line.statistic == 1.0
    linked = next(f for f in report.flags if f.kind == "linked" and f.name == "helped")
    assert linked.linked == ["scout"] and "registered from the same address" in linked.why

    # The organiser's command, as a subprocess: exit 0 and the flags with their evidence.
    code, out = await _thieves("event", "fairplay", event, "--server", server.url, "--organiser-token", ORGANISER)
    assert code == 0, out
    assert f"event:{event}: 3 games analysed" in out and "scouting: scout" in out and "stored_line: helped" in out
    assert "linked accounts: scout" in out and "honest" not in out
    code, out = await _thieves("event", "fairplay", event, "--server", server.url, "--organiser-token", "x" * 20)
    assert code == 1 and "organiser_required" in out or "organiser token" in out, out


async def test_a_scout_and_its_beneficiary_on_the_daily_deal_are_flagged(fair_server: LiveServer) -> None:
    server = fair_server
    keys = {"dscout": await _register(server, "dscout", SCOUT_PLACE),
            "dhelped": await _register(server, "dhelped", SCOUT_PLACE),
            "dhonest": await _register(server, "dhonest", HONEST_PLACE)}
    line: list[str] = []
    for name in keys:
        status, body = await server.http("POST", f"/daily/{VARIANT}", headers=_bearer(keys[name]))
        assert status == 200, body
        play = msgspec.convert(body, p.DailyPlay)
        deal, stored = await server.tournaments.daily.deal(VARIANT, play.date)
        line = stored.split()
        c = await Client.connect(server)
        await c.hello(play.code, key=keys[name])
        await c.send(p.Ready(ready=True))
        await c.expect(p.Countdown)
        if name == "dscout":
            await _play(c, ["S"] * len(Game.new(get_variant(VARIANT), deal).stock))
        elif name == "dhelped":
            await _play(c, line, give_up=False)
        else:
            await _play(c, greedy(deal, 0.0, 1))
        await c.expect(p.Finished)
        await c.close()
    status, refused = await server.http("GET", f"/daily/{VARIANT}/fairplay", headers=_bearer(keys["dhonest"]))
    assert status == 403 and refused["code"] == "organiser_required"
    report = await _analysed(server, f"/daily/{VARIANT}/fairplay?date={today(now_ms())}")
    flags = _flags(report)
    assert report.analysed == 3 and "scouting" in flags["dscout"] and "stored_line" in flags["dhelped"]
    assert "linked" in flags["dscout"] and "dhonest" not in flags, flags
    status, bad = await server.http("GET", f"/daily/{VARIANT}/fairplay?date=tomorrow", headers=AUTH)
    assert status == 400 and bad["code"] == "bad_field"
