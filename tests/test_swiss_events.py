"""Swiss events on a real server and Redis: five rounds of an odd field (a bye each round), no pair
met twice, every round's pairing and points recomputed here from the rule restated (docs/events.md,
"Swiss"), the standings with their tie-breaks, ``thieves verify`` agreeing (and finding a tampered
round), and bad requests refused with typed errors that store nothing."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections import Counter
from pathlib import Path

import httpx
import msgspec
from redis_util import Client, LiveServer, eventually, register
from test_events import AUTH, WIN, _beats, _create, _enter, _info, _play, _round_open, _scored, events_server  # noqa: F401
from test_swiss import _every_pairing, _restated_key

from shared import protocol as p

MOVES = {"s0": len(WIN["moves"]), "s1": 37, "s2": 36, "s3": 34, "s4": 27, "s5": 0, "s6": 0}
"""How far each entrant plays the winning line before giving up (s0 wins; s5 and s6, nothing home, tie)."""
NO_SHOW = (3, "s6")
"""In round 3, s6 does not come (its opponent wins; s6 scores 0)."""


async def _thieves(server: LiveServer, *argv: str) -> tuple[int, str]:
    """``thieves ARGV --server URL`` as a subprocess (with the organiser's token in its environment)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "client_cli.main", *argv, "--server", server.url,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, cwd=Path(__file__).parent.parent,
        env={**os.environ, "THIEVES_ORGANISER_TOKEN": AUTH["authorization"].removeprefix("Bearer ")})
    out, _ = await proc.communicate()
    return proc.returncode or 0, out.decode()


async def _verify(server: LiveServer, event: str) -> tuple[int, str]:
    return await _thieves(server, "verify", event)


async def _live_round_scored_by_the_swiss_rule(server: LiveServer, event: str, drawn: p.EventRound,
                                               keys: dict[str, str]) -> None:
    """Everyone of the round joins; while all race with nothing home, the event's live feed scores each
    race a tie, ½ each, by the Swiss rule (matchpoints would give 2½: five ties over the round); then
    each plays its share of the line and gives up."""
    clients = []
    for h in drawn.heats:
        for a in h.entrants:
            c = await Client.connect(server)
            await c.hello(h.code, key=keys[a])
            clients.append((c, a))
    for c, _ in clients:
        await c.expect(p.Countdown, timeout=30)
    live: list[p.EventLiveLine] = []

    async def all_racing() -> bool:
        frame = await server.tournaments.feeds.frame(event)
        live[:] = msgspec.json.decode(frame, type=p.EventLive).live
        return len(live) == 6 and all(line.status == "racing" for line in live)
    await eventually(all_racing, "the round's six entrants racing in the live feed")
    assert [line.matchpoints for line in live] == [0.5] * 6, live

    async def play(c: Client, a: str) -> None:
        for text in WIN["moves"][:MOVES[a]]:
            assert isinstance(await c.move(text), p.Ack)
        if MOVES[a] < len(WIN["moves"]):
            await c.give_up()
        await c.close()
    await asyncio.gather(*(play(c, a) for c, a in clients))


async def test_a_five_round_swiss_of_seven_with_byes_and_no_pair_twice(events_server: LiveServer,
                                                                       redis_url: str) -> None:
    import redis.asyncio as aioredis

    server = events_server
    keys = {name: await register(server, name) for name in MOVES}
    code, out = await _thieves(server, "event", "create", "Swiss Cup", "--format", "swiss", "--rounds", "5",
                               "--join-seconds", "1", "--break-seconds", "0", "--time-limit", "120",
                               "--deals", ",".join([str(WIN["deal"])] * 5))
    assert code == 0 and "Swiss Cup" in out, out
    event = await _info(server, out.split()[1])
    assert (event.summary, event.score_field, event.tiebreaks, event.heat_size) == \
        ("5 Swiss rounds, head to head", "score", ["buchholz", "sonneborn_berger"], 2)
    for key in keys.values():
        await _enter(server, event.id, key)
    status, _ = await server.http("POST", f"/events/{event.id}/start", headers=AUTH)
    assert status == 200
    points2: Counter[str] = Counter()
    met: Counter[frozenset[str]] = Counter()
    byes: Counter[str] = Counter()
    took: list[tuple[str, str, int]] = []  # (entrant, opponent, doubled points it took from the race)
    for number in range(1, 6):
        drawn = await _round_open(server, event.id, number)
        pairs = [(h.entrants[0], h.entrants[1]) for h in drawn.heats]
        assert all(len(h.entrants) == 2 for h in drawn.heats)
        assert len(drawn.byes) == 1 and sorted([*(a for pair in pairs for a in pair), *drawn.byes]) == sorted(MOVES)
        assert not any(met[frozenset(pair)] for pair in pairs), f"round {number}: a pair met before"
        assert byes[drawn.byes[0]] == 0, f"round {number}: a second bye"
        # The pairing is the best the restated rule allows (every pairing of the field tried); the bye's
        # place among equals is left out here (the field's order is the server's own; see test_swiss).
        field = sorted(MOVES)
        best = min(_restated_key(m, b, field, points2, met, byes)[:3] for m, b in _every_pairing(field))
        assert _restated_key(pairs, drawn.byes[0], field, points2, met, byes)[:3] == best
        if number == 1:
            await _live_round_scored_by_the_swiss_rule(server, event.id, drawn, keys)
        else:
            await asyncio.gather(*(_play(server, h.code, keys[a], MOVES[a]) for h in drawn.heats
                                   for a in h.entrants if (number, a) != NO_SHOW))
        await _scored(server, event.id, number)
        # The round's points from the races' results alone: a win 1, a tie ½, a no-show 0, the bye 1.
        byes[drawn.byes[0]] += 1
        points2[drawn.byes[0]] += 2
        for h in drawn.heats:
            status, answer = await server.http("GET", f"/races/{h.race}/results")
            res = msgspec.convert(answer, p.Results)
            lines = {s.account: s for s in res.standings}
            for a, b in ((h.entrants[0], h.entrants[1]), (h.entrants[1], h.entrants[0])):
                if a not in lines:
                    got = 0
                elif b not in lines:
                    got = 2
                else:
                    got = 1 + _beats(lines[a], lines[b], res.starts_at or 0, res.starts_at or 0)
                points2[a] += got
                took.append((a, b, got))
            met[frozenset(h.entrants)] += 1
    assert set(byes.values()) == {1} and len(byes) == 5, "five byes, five entrants"
    status, answer = await server.http("GET", f"/events/{event.id}/standings")
    standings = msgspec.convert(answer, p.EventStandings)
    assert standings.status == "finished"
    buchholz = {a: sum(points2[o] for x, o, _ in took if x == a) / 2 for a in MOVES}
    sonneborn = {a: sum(got * points2[o] for x, o, got in took if x == a) / 4 for a in MOVES}
    assert {line.account: (line.score, line.buchholz, line.sonneborn_berger) for line in standings.lines} == \
        {a: (points2[a] / 2, buchholz[a], sonneborn[a]) for a in MOVES}
    order = [(line.score, line.buchholz, line.sonneborn_berger) for line in standings.lines]
    assert order == sorted(order, reverse=True)
    assert [r.status for r in next(line for line in standings.lines if line.account == "s6").rounds][2] == "no_show"
    info = await _info(server, event.id)
    assert all(r.deal == WIN["deal"] for r in info.schedule)
    # The page shows the score and the tie-breaks the EventInfo names (no branch on the format's name).
    async with httpx.AsyncClient(base_url=server.url) as http:
        page = (await http.get(f"/event/{event.id}")).text
    assert '<th scope="col">Points</th>' in page and ">Buchholz</span>" in page and ">Sonneborn-Berger</span>" in page
    assert "(points if the pairings ended now)" in page and "Score" not in page, "a Swiss score is points, as its caption says"
    assert [f'<li class="bye">Bye: <span class="rules">{r.byes[0]}</span></li>' in page for r in info.schedule] == \
        [True] * 5, "each round played lists its bye"
    top = standings.lines[0]
    assert f'<td class="tiebreak">{top.buchholz}</td><td class="tiebreak">{top.sonneborn_berger}</td>' in page

    code, out = await _thieves(server, "event", "standings", event.id)
    assert code == 0 and out.splitlines()[0].split()[:3] == ["rank", "name", "points"], out
    marks = [line.split()[7:] for line in out.splitlines()[1:] if not line.startswith(("rounds:", "Bu:"))]  # (legends)
    assert sorted(m.count("B") for m in marks) == [0, 0, 1, 1, 1, 1, 1], out
    code, out = await _thieves(server, "event", "show", event.id)
    assert code == 0 and [line.split()[1] for line in out.splitlines() if line.startswith("  bye ")] == \
        [r.byes[0] for r in info.schedule], out
    code, out = await _verify(server, event.id)
    assert code == 0 and out.startswith("agree: 5 rounds, 15 heats, 7 entrants"), out
    client = aioredis.from_url(redis_url)
    try:
        # A round's stored draw that the rule would not make (a racer given the bye too): verify says so.
        meta = f"event:{{{event.id}}}"
        schedule = await client.hget(meta, "schedule")
        assert isinstance(schedule, bytes)
        rounds = json.loads(schedule)
        twice = rounds[0]["heats"][0]["entrants"][0]
        rounds[0]["byes"].append(twice)
        await client.hset(meta, "schedule", json.dumps(rounds))
        code, out = await _verify(server, event.id)
        assert code == 1 and out.startswith(f"differ: round 1: {twice} is drawn twice"), out
        await client.hset(meta, "schedule", schedule)
        bye = f"1|{info.schedule[0].byes[0]}"
        honest = await client.hget(f"event:{{{event.id}}}:results", bye)
        assert isinstance(honest, bytes) and json.loads(honest)["status"] == "bye", honest
        stored = json.loads(honest)
        stored["points2"] = 0  # the bye's point taken away
        await client.hset(f"event:{{{event.id}}}:results", bye, json.dumps(stored))
    finally:
        await client.aclose()
    code, out = await _verify(server, event.id)
    assert code == 1 and out.startswith("differ: "), out


async def test_bad_swiss_requests_are_typed_and_change_nothing(events_server: LiveServer) -> None:
    server = events_server
    for body, code, words in [
            ({"rounds": 0}, "bad_field", "rounds"), ({"rounds": 51}, "bad_field", "rounds"),
            ({"rounds": "five"}, "bad_field", "rounds"), ({"group_size": 3}, "bad_field", "head to head"),
            ({"rounds": 2, "deals": [5]}, "bad_deal", "one per round")]:
        status, answer = await server.http("POST", "/events", {"name": "x", "format": "swiss", **body}, headers=AUTH)
        assert (status, answer["code"]) == (400, code) and words in answer["message"], (body, answer)
    status, answer = await server.http("GET", "/events")
    assert answer["events"] == []


async def test_round_ones_bye_goes_to_the_last_by_name_and_counts_the_time_limit(events_server: LiveServer) -> None:
    """docs/events.md, "Swiss": entrants placed equal (in round 1, everyone) are ordered by name, so the bye
    goes to the last by name, whoever entered last; the bye counts no cards and the whole time limit, and a
    Swiss line's ``matchpoints`` is 0 (its points are ``score``; each round's ``matchpoints`` its points)."""
    server = events_server
    event = (await _create(server, name="Swiss", format="swiss", rounds=2, time_limit=30, deal_source="random")).id
    for name in ("zed", "amy", "bob"):  # zed enters first and is the last by name
        await _enter(server, event, await register(server, name))
    status, answer = await server.http("POST", f"/events/{event}/start", headers=AUTH)
    assert status == 200, answer
    drawn = await _round_open(server, event, 1)
    assert (drawn.byes, [h.entrants for h in drawn.heats]) == (["zed"], [["amy", "bob"]])
    await _scored(server, event, 1)  # (nobody joins: amy and bob are no-shows)
    status, answer = await server.http("GET", f"/events/{event}/standings")
    line = {ln.account: ln for ln in msgspec.convert(answer, p.EventStandings).lines}["zed"]
    assert (line.matchpoints, line.score, line.home, line.time_ms) == (0.0, 1.0, 0, 30_000), line
    assert [(r.status, r.matchpoints, r.home, r.time_ms) for r in line.rounds] == [("bye", 1.0, 0, None)], line
