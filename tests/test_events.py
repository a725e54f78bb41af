"""Duplicate events on a real server and Redis: entrants, heats, rounds, matchpoints, the organiser's
token, late entry, no-shows, withdrawal and a server killed mid-round."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest
from redis_util import Client, LiveServer, eventually, live_server, register

from shared import protocol as p

WIN = json.loads((Path(__file__).parent / "data" / "race_win_line.json").read_text())
ORGANISER = "organiser-secret-for-tests"
AUTH = {"authorization": f"Bearer {ORGANISER}"}


@pytest.fixture
async def events_server(redis_url: str) -> Any:
    async with live_server(redis_url, organiser_token=ORGANISER) as server:
        yield server


async def _create(server: LiveServer, **fields: Any) -> p.EventInfo:
    body = {"name": "Cup", "join_seconds": 1, "break_seconds": 0, "time_limit": 120, **fields}
    status, answer = await server.http("POST", "/events", body, headers=AUTH)
    assert status == 201, answer
    return msgspec.convert(answer, p.EventInfo)


async def _enter(server: LiveServer, event: str, key: str) -> p.EventEntry:
    status, answer = await server.http("POST", f"/events/{event}/entrants", headers={"authorization": f"Bearer {key}"})
    assert status == 200, answer
    return msgspec.convert(answer, p.EventEntry)


async def _info(server: LiveServer, event: str) -> p.EventInfo:
    status, answer = await server.http("GET", f"/events/{event}")
    assert status == 200, answer
    return msgspec.convert(answer, p.EventInfo)


async def _round_open(server: LiveServer, event: str, number: int) -> p.EventRound:
    """Wait until round ``number``'s heats are drawn."""
    found: list[p.EventRound] = []

    async def drawn() -> bool:
        info = await _info(server, event)
        found[:] = [r for r in info.schedule if r.round == number]
        return bool(found)

    await eventually(drawn, f"round {number} drawn")
    return found[0]


async def _scored(server: LiveServer, event: str, number: int) -> p.EventInfo:
    infos: list[p.EventInfo] = []

    async def done() -> bool:
        info = await _info(server, event)
        infos[:] = [info]
        return info.round == number and info.round_state == "done"

    await eventually(done, f"round {number} scored")
    return infos[0]


async def _play(server: LiveServer, code: str, key: str, moves: int) -> None:
    """An entrant's race: join its heat, play ``moves`` moves of the deal's winning line, give up."""
    c = await Client.connect(server)
    await c.hello(code, key=key)
    await c.expect(p.Countdown, timeout=30)
    for text in WIN["moves"][:moves]:
        answer = await c.move(text)
        assert isinstance(answer, p.Ack), answer
    if moves < len(WIN["moves"]):
        await c.give_up()
    await c.close()


async def _verify(server: LiveServer, event: str) -> tuple[int, str]:
    """``thieves verify EVENT`` as its own process: its exit status and what it printed."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "client_cli.main", "verify", event, "--server", server.url,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, cwd=Path(__file__).parent.parent)
    out, _ = await proc.communicate()
    return proc.returncode or 0, out.decode()


def _beats(a: p.Standing, b: p.Standing, a_start: int, b_start: int) -> int:
    """The race standings rule, restated from docs/protocol.md: +1 a ahead, 0 a tie, -1 b ahead."""
    def key(s: p.Standing, start: int) -> tuple[int, int, int, int]:
        if s.status == "finished":
            return (0, (s.finished_at or 0) - start, 0, 0)
        return (1, -s.home, 1 if s.status == "gave_up" else 0, (s.home_at - start) if s.home_at else 1 << 62)
    ka, kb = key(a, a_start), key(b, b_start)
    return (ka < kb) - (ka > kb)


async def test_a_three_round_duplicate_event_of_30_in_heats_of_10(events_server: LiveServer) -> None:
    server = events_server
    keys = {f"p{i:02d}": await register(server, f"p{i:02d}") for i in range(30)}
    event = await _create(server, rounds=3, heat_size=10, deals=[WIN["deal"]] * 3)
    assert (event.deal_source, event.deals) == ("deals", None), "the organiser's deals are secret until the end"
    for key in keys.values():
        await _enter(server, event.id, key)
    status, answer = await server.http("POST", f"/events/{event.id}/start", headers=AUTH)
    assert status == 200 and answer["status"] == "running"
    expected: dict[str, float] = {name: 0.0 for name in keys}
    for number in (1, 2, 3):
        drawn = await _round_open(server, event.id, number)
        assert [len(h.entrants) for h in drawn.heats] == [10, 10, 10]
        assert sorted(a for h in drawn.heats for a in h.entrants) == sorted(keys)
        plays = []
        for h in drawn.heats:
            for a in h.entrants:
                # Varied results, with ties: moves from 0 to 9 of the winning line (cards home 0 to 2).
                plays.append(_play(server, h.code, keys[a], (int(a[1:]) * (number + 1)) % 10))
        await asyncio.gather(*plays)
        await _scored(server, event.id, number)
        # Matchpoints recomputed here from the heats' results alone.
        field = []
        for h in drawn.heats:
            status, res = await server.http("GET", f"/races/{h.race}/results")
            assert status == 200
            results = msgspec.convert(res, p.Results)
            # The deal and the games stay secret until the event is over (the standings are there).
            assert (results.revealed, results.deal) == ((True, WIN["deal"]) if number == 3 else (False, 0))
            field += [(s, results.starts_at or 0) for s in results.standings]
        assert len(field) == 30
        for s, start in field:
            expected[s.name] += sum({1: 1.0, 0: 0.5, -1: 0.0}[_beats(s, o, start, ostart)]
                                    for o, ostart in field if o.name != s.name)
    status, answer = await server.http("GET", f"/events/{event.id}/standings")
    standings = msgspec.convert(answer, p.EventStandings)
    assert standings.status == "finished"
    assert {line.name: line.matchpoints for line in standings.lines} == expected
    points = [line.matchpoints for line in standings.lines]
    assert points == sorted(points, reverse=True)
    assert all(len(line.rounds) == 3 for line in standings.lines)
    info = await _info(server, event.id)
    assert all(r.deal == WIN["deal"] for r in info.schedule), "the deals are revealed once it is over"
    assert (info.deal_source, info.deals) == ("deals", [WIN["deal"]] * 3)


async def test_the_organiser_token_and_only_it_creates_and_starts_events(events_server: LiveServer, redis_url: str) -> None:
    server = events_server
    key = await register(server, "ann")
    for headers in ({}, {"authorization": f"Bearer {key}"}, {"authorization": "Bearer wrong"}):
        status, answer = await server.http("POST", "/events", {"name": "x"}, headers=headers)
        assert (status, answer["code"]) == (403, "organiser_required"), headers
    event = await _create(server)
    assert (event.deal_source, event.deals) == ("pool", None)
    status, answer = await server.http("POST", f"/events/{event.id}/start", headers={"authorization": f"Bearer {key}"})
    assert (status, answer["code"]) == (403, "organiser_required")
    assert (await _info(server, event.id)).status == "registration"
    async with live_server(redis_url) as plain:
        status, answer = await plain.http("POST", "/events", {"name": "x"}, headers=AUTH)
        assert (status, answer["code"]) == (403, "organiser_required") and "--organiser-token" in answer["message"]


async def test_bad_event_requests_are_typed_and_change_nothing(events_server: LiveServer) -> None:
    server = events_server
    for body, code in [({"name": "x", "rounds": 0}, "bad_field"), ({"name": ""}, "bad_field"),
                       ({"name": "x", "variant": "nope"}, "bad_variant"),
                       ({"name": "x", "rounds": 2, "deals": [5]}, "bad_deal")]:
        status, answer = await server.http("POST", "/events", body, headers=AUTH)
        assert (status, answer["code"]) == (400, code), body
    status, answer = await server.http("GET", "/events")
    assert answer["events"] == []
    status, answer = await server.http("GET", "/events/nope")
    assert (status, answer["code"]) == (404, "event_not_found")
    key = await register(server, "ann")
    status, answer = await server.http("POST", "/events/nope/entrants", headers={"authorization": f"Bearer {key}"})
    assert (status, answer["code"]) == (404, "event_not_found")


async def test_late_entry_no_show_withdrawal_and_who_may_join_a_heat(events_server: LiveServer) -> None:
    server = events_server
    keys = {n: await register(server, n) for n in ("ann", "bob", "cy", "dan")}
    event = await _create(server, rounds=2, heat_size=4, deals=[WIN["deal"]] * 2, join_seconds=2)
    for n in ("ann", "bob", "cy"):
        assert (await _enter(server, event.id, keys[n])).from_round == 1
    await server.http("POST", f"/events/{event.id}/start", headers=AUTH)
    first = await _round_open(server, event.id, 1)
    assert (await _enter(server, event.id, keys["dan"])).from_round == 2, "late entry plays from the next round"
    heat = first.heats[0]
    outsider = await Client.connect(server)
    await outsider.send(p.Hello(protocol=p.PROTOCOL_VERSION, race=heat.code, key=keys["dan"]))
    assert (await outsider.error()).code == "not_an_entrant"
    guest = await Client.connect(server)
    await guest.send(p.Hello(protocol=p.PROTOCOL_VERSION, race=heat.code, name="guest"))
    assert (await guest.error()).code == "not_an_entrant"
    # ann plays 20 moves (2 cards home), bob 2 (1 card), cy never comes (a no-show: last).
    await asyncio.gather(_play(server, heat.code, keys["ann"], 20), _play(server, heat.code, keys["bob"], 2))
    await _scored(server, event.id, 1)
    status, answer = await server.http("DELETE", f"/events/{event.id}/entrants/bob",
                                       headers={"authorization": f"Bearer {keys['bob']}"})
    assert status == 200 and answer["withdrawn"]
    second = await _round_open(server, event.id, 2)
    assert sorted(a for h in second.heats for a in h.entrants) == ["ann", "cy", "dan"]
    await asyncio.gather(*(_play(server, second.heats[0].code, keys[n], 1) for n in ("ann", "cy", "dan")))
    await _scored(server, event.id, 2)
    status, answer = await server.http("GET", f"/events/{event.id}/standings")
    lines = {line.name: line for line in msgspec.convert(answer, p.EventStandings).lines}
    assert lines["cy"].rounds[0].status == "no_show" and lines["cy"].rounds[0].matchpoints == 0
    assert lines["ann"].rounds[0].matchpoints == 2 and lines["bob"].rounds[0].matchpoints == 1
    assert lines["dan"].rounds[0].status == "absent" and lines["bob"].withdrawn
    assert lines["bob"].rounds[1].status == "absent"
    # Absent rounds count the whole time limit in the tie-break, as a round played and not won does.
    assert lines["dan"].time_ms == lines["bob"].time_ms == lines["cy"].time_ms == 2 * 120_000
    status, answer = await server.http("POST", f"/events/{event.id}/entrants", headers={"authorization": f"Bearer {keys['bob']}"})
    assert (status, answer["code"]) == (409, "event_over")


async def test_a_server_killed_mid_round_leaves_a_round_the_other_finishes_exactly(redis_url: str,
                                                                                    tmp_path: Path) -> None:
    """Entrants race through a server process that is SIGKILLed mid-round; they come back through the
    other process, whose runner ends the heats and scores the round from their results alone."""
    from process_util import ServerProcess
    from redis_util import PROCESS_ARGS

    doomed = ServerProcess(redis_url, args=[*PROCESS_ARGS, "--organiser-token", ORGANISER, "--presence-lease", "1"],
                           log_path=tmp_path / "doomed.log")
    await asyncio.to_thread(doomed.start)
    try:
        async with live_server(redis_url, organiser_token=ORGANISER, presence_lease=1.0) as survivor:
            keys = {n: await register(survivor, n) for n in ("ann", "bob", "cy", "dan")}
            event = await _create(survivor, rounds=1, heat_size=2, deals=[WIN["deal"]], join_seconds=2)
            for key in keys.values():
                await _enter(survivor, event.id, key)
            await survivor.http("POST", f"/events/{event.id}/start", headers=AUTH)
            drawn = await _round_open(survivor, event.id, 1)
            clients: dict[str, Client] = {}
            for h in drawn.heats:
                for a in h.entrants:
                    clients[a] = await Client.connect(doomed)  # type: ignore[arg-type]
                    await clients[a].hello(h.code, key=keys[a])
            for c in clients.values():
                await c.expect(p.Countdown, timeout=30)
            moves = {"ann": 2, "bob": 20, "cy": 0, "dan": 2}
            for a, c in clients.items():
                for text in WIN["moves"][:moves[a]]:
                    assert isinstance(await c.move(text), p.Ack)
            await asyncio.to_thread(doomed.kill)
            for a, h in ((a, h) for h in drawn.heats for a in h.entrants):
                back = await Client.connect(survivor)
                welcome = await back.hello(h.code, key=keys[a])
                assert welcome.seq == moves[a], "the game is where the killed process left it"
                await back.give_up()
                await back.close()
            await _scored(survivor, event.id, 1)
            status, answer = await survivor.http("GET", f"/events/{event.id}/standings")
            lines = {line.name: line for line in msgspec.convert(answer, p.EventStandings).lines}
            # bob (2 cards) beats all; ann and dan (1 card each) beat cy (none); ann v dan by who got there first.
            assert lines["bob"].matchpoints == 3 and lines["cy"].matchpoints == 0
            assert lines["ann"].matchpoints + lines["dan"].matchpoints == 3
            assert [line.home for line in msgspec.convert(answer, p.EventStandings).lines][0] == 2
    finally:
        await asyncio.to_thread(doomed.close)


async def _arena_bot(server: LiveServer, event: str, name: str, key: str, moves: int) -> list[str]:
    """An arena entrant: waits to be paired, plays its race (``moves`` of the line, then gives up), again
    until the arena is over. Returns the races it played, in order."""
    played: list[str] = []
    seen: list[p.EventStandings] = []

    async def paired_or_over() -> bool:
        status, answer = await server.http("GET", f"/events/{event}/standings")
        seen[:] = [msgspec.convert(answer, p.EventStandings)]
        mine = next(line for line in seen[0].lines if line.account == name)
        return seen[0].status == "finished" or (mine.status == "playing" and bool(mine.race)
                                                 and mine.race not in played)

    while True:
        await eventually(paired_or_over, f"{name} paired again, or the arena over", timeout=60)
        if seen[0].status == "finished":
            return played
        race = next(line.race for line in seen[0].lines if line.account == name)
        assert race is not None
        played.append(race)
        c = await Client.connect(server)
        await c.hello(race, key=key)
        await c.expect(p.Countdown, timeout=30)
        for text in WIN["moves"][:moves]:
            assert isinstance(await c.move(text), p.Ack)
        await c.give_up()
        await c.close()


async def test_an_arena_of_8_pairs_again_at_once_and_scores_with_streaks(events_server: LiveServer) -> None:
    server = events_server
    names = [f"a{i}" for i in range(8)]
    keys = {n: await register(server, n) for n in names}
    event = await _create(server, format="arena", duration=10, group_size=2, deals=[WIN["deal"]], join_seconds=1,
                          time_limit=60)
    for n in names:
        await _enter(server, event.id, keys[n])
    status, answer = await server.http("POST", f"/events/{event.id}/start", headers=AUTH)
    assert status == 200 and answer["ends_at"] is not None
    # Bots of different strength: a0 draws only (never a card home), a7 plays far.
    played = await asyncio.gather(*(_arena_bot(server, event.id, n, keys[n], [0, 2, 2, 2, 20, 20, 20, 40][i])
                                    for i, n in enumerate(names)))
    assert all(len(p_) >= 2 for p_ in played), "everyone was paired again after a race"
    info = await _info(server, event.id)
    assert info.status == "finished" and info.schedule
    # An arena has no rounds: it counts its pairings (each made one race or more), apart from ``round``.
    assert (info.round, info.rounds, info.pairing) == (0, 0, True) and 1 <= info.pairings <= len(info.schedule)
    assert info.summary == "an arena of 10 s, races of 2" and info.score_field == "points"
    # Points recomputed here from the races' results alone, race by race in pairing order.
    points = {n: 0 for n in names}
    streak = {n: 0 for n in names}
    for rnd in info.schedule:
        race = rnd.heats[0]
        assert len(race.entrants) == 2
        status, res = await server.http("GET", f"/races/{race.race}/results")
        results = msgspec.convert(res, p.Results)
        a, b = results.standings
        verdict = _beats(a, b, results.starts_at or 0, results.starts_at or 0)
        for s, other in ((a, b), (b, a)):
            base = 2 if (s is a and verdict == 1) or (s is b and verdict == -1) else 1 if verdict == 0 else 0
            points[s.name] += base * (2 if streak[s.name] >= 2 else 1)
            streak[s.name] = streak[s.name] + 1 if base == 2 else 0
    status, answer = await server.http("GET", f"/events/{event.id}/standings")
    standings = msgspec.convert(answer, p.EventStandings)
    assert {line.name: line.points for line in standings.lines} == points
    assert [line.points for line in standings.lines] == sorted(points.values(), reverse=True)
    assert standings.lines[0].name == "a7" and standings.lines[-1].name == "a0"
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "client_cli.main", "verify", event.id, "--server", server.url,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, cwd=Path(__file__).parent.parent)
    out, _ = await proc.communicate()
    assert proc.returncode == 0 and out.decode().startswith(f"agree: {len(info.schedule)} races, 8 entrants"), out


async def test_thieves_verify_agrees_on_a_finished_event_and_finds_a_tampered_total_or_round(
        events_server: LiveServer, redis_url: str) -> None:
    import redis.asyncio as aioredis

    server = events_server
    keys = {n: await register(server, n) for n in ("ann", "bob", "cy", "dan", "eve")}
    event = await _create(server, rounds=2, heat_size=3, deals=[WIN["deal"], WIN["deal"]])
    for key in keys.values():
        await _enter(server, event.id, key)
    await server.http("POST", f"/events/{event.id}/start", headers=AUTH)
    for number in (1, 2):
        drawn = await _round_open(server, event.id, number)
        await asyncio.gather(*(_play(server, h.code, keys[a], (i * 7 + number * 3) % 25)
                               for h in drawn.heats for i, a in enumerate(h.entrants)))
        await _scored(server, event.id, number)

    code, out = await _verify(server, event.id)
    assert code == 0 and out.startswith("agree: 2 rounds, 4 heats, 5 entrants"), out
    client = aioredis.from_url(redis_url)
    results = f"event:{{{event.id}}}:results"
    try:
        # A round's status changed where no total shows it (gave up and played on both count the time
        # limit): verify compares every round line too.
        field = "1|ann"
        honest = await client.hget(results, field)
        assert isinstance(honest, bytes) and json.loads(honest)["status"] == "gave_up", honest
        await client.hset(results, field, honest.replace(b'"gave_up"', b'"racing"'))
        code, out = await _verify(server, event.id)
        assert code == 1 and out.startswith("differ: ann: round 1 status 'racing' on the server, 'gave_up'"), out
        # One stored round's matchpoints: the server's totals now disagree with the races.
        stored = json.loads(honest)
        stored["points2"] += 2
        await client.hset(results, field, json.dumps(stored))
    finally:
        await client.aclose()
    code, out = await _verify(server, event.id)
    assert code == 1 and out.startswith("differ: ann: matchpoints"), out


async def test_the_event_stream_sends_live_standings_of_the_round_and_the_end(events_server: LiveServer) -> None:
    import httpx

    server = events_server
    keys = {n: await register(server, n) for n in ("ann", "bob", "cy")}
    event = await _create(server, rounds=1, heat_size=2, deals=[WIN["deal"]], join_seconds=1)
    for key in keys.values():
        await _enter(server, event.id, key)
    frames: list[p.EventLive] = []

    async def listen() -> None:
        async with httpx.AsyncClient(timeout=30) as http:
            async with http.stream("GET", f"{server.url}/events/{event.id}/stream") as answer:
                assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/event-stream")
                name = None
                async for line in answer.aiter_lines():
                    if line.startswith("event:"):
                        name = line.split(":", 1)[1].strip()
                    elif line.startswith("data:") and name == "event":
                        frames.append(msgspec.json.decode(line[5:].strip(), type=p.EventLive))
                        if frames[-1].event.status == "finished":
                            return

    listener = asyncio.create_task(listen())
    await eventually(lambda: bool(frames), "the first frame at once")
    assert frames[0].event.status == "registration" and frames[0].live == []
    await server.http("POST", f"/events/{event.id}/start", headers=AUTH)
    drawn = await _round_open(server, event.id, 1)
    clients = {}
    for h in drawn.heats:
        for a in h.entrants:
            clients[a] = await Client.connect(server)
            await clients[a].hello(h.code, key=keys[a])
    for c in clients.values():
        await c.expect(p.Countdown, timeout=30)
    for text in WIN["moves"][:20]:
        assert isinstance(await clients["ann"].move(text), p.Ack)

    def ann_live() -> bool:
        live = {line.account: line for line in frames[-1].live}
        return "ann" in live and live["ann"].home == 2 and live["ann"].matchpoints == 2
    await eventually(ann_live, "ann's two cards home and her provisional matchpoints in a live frame")
    for c in clients.values():
        await c.give_up()
    await asyncio.wait_for(listener, 30)
    last = frames[-1]
    assert last.event.status == "finished" and last.standings.lines[0].name == "ann"
    # The frame carries the event and its standings as their own endpoints give them (the feed encodes
    # them once a change, not once a frame).
    _, info = await server.http("GET", f"/events/{event.id}")
    _, table = await server.http("GET", f"/events/{event.id}/standings")
    assert last.event == msgspec.convert(info, p.EventInfo) and last.standings == msgspec.convert(table, p.EventStandings)
    for c in clients.values():
        await c.close()


async def test_check_in_entrants_who_did_not_are_withdrawn_at_the_start(events_server: LiveServer) -> None:
    server = events_server
    keys = {n: await register(server, n) for n in ("ann", "bob", "cy")}
    event = await _create(server, rounds=2, heat_size=4, deals=[WIN["deal"]] * 2, check_in=True)
    assert event.check_in
    for key in keys.values():
        entry = await _enter(server, event.id, key)
        assert not entry.checked_in
    for n in ("ann", "cy"):
        status, answer = await server.http("POST", f"/events/{event.id}/check-in",
                                           headers={"authorization": f"Bearer {keys[n]}"})
        assert status == 200 and answer["checked_in"]
    outsider = await register(server, "dan")
    status, answer = await server.http("POST", f"/events/{event.id}/check-in", headers={"authorization": f"Bearer {outsider}"})
    assert (status, answer["code"]) == (409, "not_entered")
    await server.http("POST", f"/events/{event.id}/start", headers=AUTH)
    drawn = await _round_open(server, event.id, 1)
    assert sorted(a for h in drawn.heats for a in h.entrants) == ["ann", "cy"]
    status, answer = await server.http("POST", f"/events/{event.id}/check-in", headers={"authorization": f"Bearer {keys['bob']}"})
    assert (status, answer["code"]) == (409, "not_entered"), "bob was withdrawn for not checking in"
    late = await _enter(server, event.id, outsider)
    assert late.checked_in, "a late entrant is there by entering"


async def test_a_rated_events_heats_feed_the_ratings(events_server: LiveServer) -> None:
    server = events_server
    keys = {n: await register(server, n) for n in ("ann", "bob")}
    event = await _create(server, rounds=1, heat_size=2, deals=[WIN["deal"]], rated=True)
    for key in keys.values():
        await _enter(server, event.id, key)
    await server.http("POST", f"/events/{event.id}/start", headers=AUTH)
    drawn = await _round_open(server, event.id, 1)
    heat = drawn.heats[0]
    status, race = await server.http("GET", f"/races/{heat.race}")
    assert race["race"]["rated"], "the heats of a rated event are rated races"
    await asyncio.gather(_play(server, heat.code, keys["ann"], 20), _play(server, heat.code, keys["bob"], 2))
    await _scored(server, event.id, 1)

    async def rated() -> bool:
        _, ann = await server.http("GET", "/players/ann")
        _, bob = await server.http("GET", "/players/bob")
        a, b = ann["variants"].get("forty-thieves", {}), bob["variants"].get("forty-thieves", {})
        return a.get("rated_races") == 1 and b.get("rated_races") == 1 and a["rating"] > b["rating"]
    await eventually(rated, "both ratings updated once, the heat's winner above")


async def test_verify_takes_who_came_to_a_rated_heat_that_could_not_start_from_the_server(
        events_server: LiveServer, redis_url: str) -> None:
    """A rated heat one entrant came to cannot start (a rated race needs two): the one who came played on
    with the starting cards, the other is a no-show (docs/events.md). No race shows who came, so verify
    takes it from the server's round lines (it said every drawn entrant was a no-show, and differed), and
    still finds a round line that no race nobody played could give."""
    import redis.asyncio as aioredis

    server = events_server
    keys = {n: await register(server, n) for n in ("ann", "bob", "cy", "dan")}
    event = await _create(server, rounds=1, heat_size=2, deals=[WIN["deal"]], rated=True)
    for key in keys.values():
        await _enter(server, event.id, key)
    await server.http("POST", f"/events/{event.id}/start", headers=AUTH)
    drawn = await _round_open(server, event.id, 1)
    played, lone = drawn.heats
    came, absent = lone.entrants
    waiting = await Client.connect(server)
    await waiting.hello(lone.code, key=keys[came])  # joins, and waits in a lobby that never starts
    await asyncio.gather(*(_play(server, played.code, keys[a], 5 + 10 * i) for i, a in enumerate(played.entrants)))
    await _scored(server, event.id, 1)
    status, answer = await server.http("GET", f"/events/{event.id}/standings")
    rounds = {line.account: line.rounds[0] for line in msgspec.convert(answer, p.EventStandings).lines}
    assert (rounds[came].status, rounds[came].home) == ("racing", 0) and rounds[absent].status == "no_show"
    assert rounds[came].matchpoints > rounds[absent].matchpoints
    await waiting.close()

    code, out = await _verify(server, event.id)
    assert code == 0 and out.startswith("agree: 1 rounds, 2 heats, 4 entrants"), out
    client = aioredis.from_url(redis_url)
    try:  # the one who came said to have won a race nobody played
        field = f"1|{came}"
        honest = await client.hget(f"event:{{{event.id}}}:results", field)
        assert isinstance(honest, bytes)
        await client.hset(f"event:{{{event.id}}}:results", field, honest.replace(b'"racing"', b'"finished"'))
    finally:
        await client.aclose()
    code, out = await _verify(server, event.id)
    assert code == 1 and out.startswith(f"differ: {came}: round 1: heat 2 (race {lone.race}) never started"), out


async def test_an_event_of_a_format_this_process_does_not_know_is_a_typed_503_and_left_off_the_lists(
        events_server: LiveServer, redis_url: str) -> None:
    """Processes of two versions share a Redis while one is deployed: an event of a format only the newer
    knows is answered 503 ``unavailable`` (try again shortly, on another process) by the older, and left
    off its lists and front page, rather than a 500 (it was)."""
    import httpx
    import redis.asyncio as aioredis

    server = events_server
    known = await _create(server, name="Known Cup")
    newer = await _create(server, name="Newer Cup")
    client = aioredis.from_url(redis_url)
    try:
        await client.hset(f"event:{{{newer.id}}}", "format", "knockout")
    finally:
        await client.aclose()
    status, answer = await server.http("GET", "/events")
    assert status == 200 and [e["id"] for e in answer["events"]] == [known.id]
    for path in (f"/events/{newer.id}", f"/events/{newer.id}/standings", f"/events/{newer.id}/stream"):
        status, answer = await server.http("GET", path)
        assert (status, answer["code"]) == (503, "unavailable"), (path, answer)
        assert "does not know the format 'knockout'" in answer["message"]
    async with httpx.AsyncClient(base_url=server.url, headers={"accept": "text/html"}) as http:
        front = await http.get("/")
        page = await http.get(f"/event/{newer.id}")
    assert front.status_code == 200 and "Known Cup" in front.text and "Newer Cup" not in front.text
    assert page.status_code == 503 and 'data-code="unavailable"' in page.text and "knockout" in page.text
