"""An event's deals stay secret until the event is over, from every reader (real server, real Redis).

Two heats of one duplicate round play one deal: once heat A is over and heat B still races, nothing
any reader gives out (results, replays, the race's SSE ``finished``, the WebSocket ``finished`` of a
spectator and of the players themselves, the watch page, ``thieves replay``, the event's own
endpoints) holds the deal, the salt, a move, a board or the winning line; an entrant of heat B who
gathers all of it finds no line to replay. Once the event is over, everything is there and matches
the commitment published with each heat. An arena's races are sealed the same way until it ends.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sys
from pathlib import Path
from typing import Any, AsyncIterator, Iterator

import httpx
import msgspec
import pytest
from browser_util import open_browser, skip_reason
from event_util import write_event_fields
from redis_util import Client, LiveServer, eventually, live_server, register, seed_checked
from web_util import sse

from server.store import SEALED, Keys
from server.store.keys import EVENTS_ACTIVE
from shared import protocol as p
from shared.moves import Move
from shared.record import GameRecord, replay

ORGANISER = "organiser-secret-for-tests"
AUTH = {"authorization": f"Bearer {ORGANISER}"}
ROOT = Path(__file__).parent.parent


@pytest.fixture
async def events_server(redis_url: str) -> AsyncIterator[LiveServer]:
    """An organiser's server with a few checked deals ready (a pool deal carries a winning line)."""
    async with live_server(redis_url, organiser_token=ORGANISER) as server:
        await seed_checked(server, variants=("forty-thieves",))
        yield server


async def _event(server: LiveServer, names: tuple[str, ...], **fields: Any) -> tuple[str, dict[str, str]]:
    keys = {n: await register(server, n) for n in names}
    body = {"name": "Secret Cup", "rounds": 1, "heat_size": 2, "join_seconds": 1, "break_seconds": 0,
            "time_limit": 120, "deal_source": "pool", **fields}
    status, event = await server.http("POST", "/events", body, headers=AUTH)
    assert status == 201, event
    for key in keys.values():
        status, answer = await server.http("POST", f"/events/{event['id']}/entrants",
                                           headers={"authorization": f"Bearer {key}"})
        assert status == 200, answer
    status, answer = await server.http("POST", f"/events/{event['id']}/start", headers=AUTH)
    assert status == 200, answer
    return event["id"], keys


async def _info(server: LiveServer, event: str) -> p.EventInfo:
    status, answer = await server.http("GET", f"/events/{event}")
    assert status == 200, answer
    return msgspec.convert(answer, p.EventInfo)


async def _heats(server: LiveServer, event: str) -> list[p.EventHeat]:
    found: list[p.EventHeat] = []

    async def drawn() -> bool:
        found[:] = [h for r in (await _info(server, event)).schedule for h in r.heats]
        return bool(found)

    await eventually(drawn, "the heats drawn")
    return found


async def _over(server: LiveServer, event: str) -> p.EventInfo:
    infos: list[p.EventInfo] = []

    async def finished() -> bool:
        infos[:] = [await _info(server, event)]
        return infos[0].status == "finished"

    await eventually(finished, "the event over", timeout=60)
    return infos[0]


async def _thieves(*args: str) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "client_cli.main", *args, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT, cwd=ROOT)
    out, _ = await proc.communicate()
    return proc.returncode or 0, out.decode()


async def _read_everything(server: LiveServer, event: str, heat: p.EventHeat, players: dict[str, str],
                           finished: dict[str, p.Finished]) -> dict[str, Any]:
    """What every reader gives anyone about the race of ``heat`` now, by reader: the parsed answers
    (JSON-like) and, under ``text``, the raw texts (pages, streams, the command's output)."""
    got: dict[str, Any] = {"text": {}}
    status, got["results"] = await server.http("GET", f"/races/{heat.race}/results")
    assert status == 200, got["results"]
    for seat in range(len(heat.entrants)):
        status, got[f"replay {seat}"] = await server.http("GET", f"/races/{heat.race}/replay/{seat}")
    status, got["race"] = await server.http("GET", f"/races/{heat.race}")
    status, got["event"] = await server.http("GET", f"/events/{event}")
    status, got["standings"] = await server.http("GET", f"/events/{event}/standings")
    async with sse(server, heat.race) as stream:
        frame = await stream.until("finished")
        got["sse finished"], got["text"]["sse"] = frame.data, frame.raw
    async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
        page = await http.get(f"/watch/{heat.code}")
        got["text"]["watch page"] = page.text
        got["watch page state"] = json.loads(page.text.split('id="state">')[1].split("</script>")[0])
        got["text"]["event page"] = (await http.get(f"/event/{event}")).text
        got["text"]["front page"] = (await http.get("/")).text
        for name in players:
            got["text"][f"{name}'s page"] = (await http.get(f"/player/{name}")).text
            got[f"{name}'s races"] = (await http.get(f"/players/{name}/races")).json()
        async with http.stream("GET", f"/events/{event}/stream") as answer:
            async for line in answer.aiter_lines():
                if line.startswith("data:"):
                    got["event stream"] = json.loads(line[5:])
                    break
    spectator = await Client.connect(server)
    await spectator.hello(heat.code, role="spectator")
    got["spectator finished"] = msgspec.to_builtins(await spectator.expect(p.Finished))
    await spectator.close()
    for name, key in players.items():  # each player back at the race: its end screen again
        back = await Client.connect(server)
        await back.hello(heat.code, key=key)
        got[f"{name} back"] = msgspec.to_builtins(await back.expect(p.Finished))
        await back.close()
    for name, end in finished.items():
        got[f"{name} finished"] = msgspec.to_builtins(end)
    for ref in (heat.code, heat.race):
        code, out = await _thieves("replay", ref, "--server", server.url)
        got["text"][f"thieves replay {ref}"] = out
        got[f"thieves replay {ref} exit"] = code
    return got


def _walk(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """Every (path, value) inside a JSON-like value."""
    yield path, value
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _walk(v, f"{path}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _walk(v, f"{path}[{i}]")


def _is_move(text: Any) -> bool:
    if not isinstance(text, str):
        return False
    try:
        Move.parse(text)
    except ValueError:
        return False
    return True


def _loot(got: dict[str, Any]) -> tuple[list[tuple[str, list[str]]], list[tuple[str, Any]]]:
    """What an outsider can take from the readers' answers: lines of moves (any list of five or more
    moves: a game's record, a winning line, a replay's steps) and anything that names the deal (a deal
    number, a salt, a deal text, a board)."""
    lines, deal = [], []
    for reader, answer in got.items():
        if reader == "text":
            continue
        for path, value in _walk(answer, reader):
            key = path.rsplit(".", 1)[-1]
            if isinstance(value, list) and len(value) >= 5 and all(_is_move(m) for m in value):
                lines.append((path, value))
            elif key in ("deal", "deal_text") and value not in (0, None):
                deal.append((path, value))
            elif key == "salt" and value:
                deal.append((path, value))
            elif key in ("views", "view", "position") and value:
                deal.append((path, value))
    return lines, deal


async def test_a_heat_that_is_over_gives_nothing_away_while_another_heat_races_it(events_server: LiveServer) -> None:
    server = events_server
    event, keys = await _event(server, ("ann", "bob", "cy", "dan"))
    heat_a, heat_b = await _heats(server, event)
    clients: dict[str, Client] = {}
    for heat in (heat_a, heat_b):
        for name in heat.entrants:
            clients[name] = await Client.connect(server)
            await clients[name].hello(heat.code, key=keys[name])
    for c in clients.values():
        await c.expect(p.Countdown, timeout=30)
    meta = await server.service.store.meta(heat_a.race)  # the harness knows the line: heat A's winner plays it
    winner, loser = heat_a.entrants
    line = meta.line.split()
    for text in line:
        assert isinstance(await clients[winner].move(text), p.Ack)
    await clients[loser].give_up()
    finished = {name: await clients[name].expect(p.Finished) for name in heat_a.entrants}
    # heat A is over, heat B races the same deal.
    assert meta.deal == (await server.service.store.meta(heat_b.race)).deal
    assert (await server.service.store.meta(heat_b.race)).status == "started"

    got = await _read_everything(server, event, heat_a, {n: keys[n] for n in heat_a.entrants}, finished)
    lines, deal = _loot(got)
    # The outsider, an entrant of heat B, replays each line it found until it wins or one is refused.
    outsider, other = heat_b.entrants
    for _, moves in lines:
        answers = [await clients[outsider].move(text) for text in moves[:1]]
        for text in moves[1:]:
            if not isinstance(answers[-1], p.Ack):
                break
            answers.append(await clients[outsider].move(text))
        if all(isinstance(a, p.Ack) for a in answers):
            break
    status, race = await server.http("GET", f"/races/{heat_b.race}")
    mine = next(e for e in race["progress"] if e["name"] == outsider)
    assert mine["status"] != "finished" and mine["home"] < 104, f"{outsider} won heat B with {lines[:1]}"
    assert lines == [] and deal == [], (lines, deal)
    for reader, text in got["text"].items():
        assert meta.salt not in text and " ".join(line) not in text and json.dumps(line) not in text, reader
    # The finished racers still see the standings: the winner first, 104 home.
    for who in ("results", *(f"{n} finished" for n in heat_a.entrants)):
        answer = got[who] if who == "results" else got[who]["results"]
        assert answer["standings"][0]["name"] == winner and answer["standings"][0]["home"] == 104, who
        assert answer["revealed"] is False and answer["reveal_at"] is None, who
    for seat in range(2):
        assert got[f"replay {seat}"]["code"] == "deal_secret", got[f"replay {seat}"]
        assert "until the event is over" in got[f"replay {seat}"]["message"]
    assert got["sse finished"]["deal_text"] is None and "until the event is over" in got["sse finished"]["secret_text"]
    assert "until the event is over" in got["text"]["watch page"]
    for ref in (heat_a.code, heat_a.race):
        out = got["text"][f"thieves replay {ref}"]
        assert got[f"thieves replay {ref} exit"] == 2 and "secret until the event is over" in out, out
        assert "playing" not in out and "Traceback" not in out, out
    assert all(r["deal"] is None for r in got["event"]["schedule"])

    # The event ends (heat B gives up): now every reader tells all, and it matches the commitment.
    await clients[outsider].give_up()
    await clients[other].give_up()
    info = await _over(server, event)
    assert info.schedule[0].deal == meta.deal
    got = await _read_everything(server, event, heat_a, {n: keys[n] for n in heat_a.entrants}, finished={})
    lines, _ = _loot(got)
    results = msgspec.convert(got["results"], p.Results)
    assert results.revealed and results.deal == meta.deal and results.salt == meta.salt
    assert hashlib.sha256(f"{results.variant}|{results.deal}|{results.salt}".encode()).hexdigest() == results.commitment
    assert results.commitment == meta.commitment and results.winning_line == line
    assert any(moves == line for _, moves in lines), "the gatherer does find a line once there is one"
    assert replay(GameRecord(results.variant, results.deal, tuple(line))).game.is_won()
    assert got["replay 0"]["moves"] and got["sse finished"]["deal_text"] == str(meta.deal)
    assert got["spectator finished"]["results"]["salt"] == meta.salt
    assert all(got[f"{n} back"]["results"]["deal"] == meta.deal for n in heat_a.entrants)
    assert f"deal {meta.deal}</strong>" in got["text"]["watch page"]
    for ref in (heat_a.code, heat_a.race):
        assert got[f"thieves replay {ref} exit"] == 0, got["text"][f"thieves replay {ref}"]
    for c in clients.values():
        await c.close()


async def test_an_arenas_race_stays_sealed_until_the_arena_is_over(events_server: LiveServer, redis_url: str) -> None:
    import redis.asyncio as aioredis

    server = events_server
    event, keys = await _event(server, ("ann", "bob"), format="arena", duration=10, group_size=2)
    race = (await _heats(server, event))[0]
    clients = {}
    for name in race.entrants:
        clients[name] = await Client.connect(server)
        await clients[name].hello(race.code, key=keys[name])
    for c in clients.values():
        await c.expect(p.Countdown, timeout=30)
    meta = await server.service.store.meta(race.race)
    assert isinstance(await clients["ann"].move(meta.line.split()[0]), p.Ack)
    for c in clients.values():
        await c.give_up()
    finished = await clients["ann"].expect(p.Finished)
    assert not finished.results.revealed and finished.results.records == [] and finished.results.salt == ""
    status, results = await server.http("GET", f"/races/{race.race}/results")
    assert status == 200 and results["deal"] == 0 and results["winning_line"] is None
    assert sorted(s["name"] for s in results["standings"]) == ["ann", "bob"], "the standings are there"
    status, answer = await server.http("GET", f"/races/{race.race}/replay/0")
    assert (status, answer["code"]) == (409, "deal_secret")
    assert (await _info(server, event)).status == "running"
    redis = aioredis.from_url(redis_url)
    try:  # the arena's clock runs out now rather than in 10 s (ann and bob, if paired again, do not come)
        await write_event_fields(redis, event, ends_at=1)
    finally:
        await redis.aclose()
    await _over(server, event)
    status, results = await server.http("GET", f"/races/{race.race}/results")
    assert status == 200 and results["revealed"] and results["deal"] == meta.deal and results["salt"] == meta.salt
    assert [r["moves"] for r in results["records"] if r["name"] == "ann"] == [[meta.line.split()[0]]]
    status, answer = await server.http("GET", f"/races/{race.race}/replay/0")
    assert status == 200 and answer["moves"]
    for c in clients.values():
        await c.close()


async def test_an_event_left_over_but_sealed_by_a_dead_process_is_unsealed_by_the_next_tick(
        events_server: LiveServer, redis_url: str) -> None:
    """A process that died after the event was marked over, before its races were unsealed and the event
    taken off the runner's list, leaves both to the next tick of any process."""
    import redis.asyncio as aioredis

    server = events_server
    event, keys = await _event(server, ("ann", "bob"))
    heat = (await _heats(server, event))[0]
    clients = [await Client.connect(server) for _ in heat.entrants]
    for c, name in zip(clients, heat.entrants):
        await c.hello(heat.code, key=keys[name])
    for c in clients:
        await c.expect(p.Countdown, timeout=30)
        await c.give_up()
    await _over(server, event)

    async def off_the_list() -> bool:
        return event not in await server.tournaments.events.active_ids()

    await eventually(off_the_list, "the event off the runner's list")
    redis = aioredis.from_url(redis_url)
    try:
        await redis.hset(Keys(heat.race).meta, "reveal_at", SEALED)  # as the dead process left it
        status, results = await server.http("GET", f"/races/{heat.race}/results")
        assert status == 200 and not results["revealed"] and results["salt"] == ""
        await redis.zadd(EVENTS_ACTIVE, {event: 1})

        async def unsealed() -> bool:
            _, results = await server.http("GET", f"/races/{heat.race}/results")
            return bool(results["revealed"]) and await off_the_list()

        await eventually(unsealed, "the race unsealed and the event off the list again")
        assert await server.service.store.unseal([heat.race, "nosuchrace"]) == 0, "once is enough"
        assert not await redis.exists(Keys("nosuchrace").meta), "a race that is not there stays so"
        assert (await server.service.store.meta(heat.race)).reveal_at == 0, "revealed as any race at its end"
    finally:
        await redis.aclose()
    for c in clients:
        await c.close()


@pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")
async def test_a_heats_watch_page_in_a_browser_says_the_deal_is_secret_until_the_event_is_over(
        events_server: LiveServer) -> None:
    """The page's script shows the server's words, live (the SSE ``finished``) and rendered again."""
    server = events_server
    event, keys = await _event(server, ("ann", "bob"), rounds=2)
    heat = (await _heats(server, event))[0]
    clients = [await Client.connect(server) for _ in heat.entrants]
    for c, name in zip(clients, heat.entrants):
        await c.hello(heat.code, key=keys[name])  # (before the heat starts: a browser takes a while to open)
    async for context in open_browser():
        page: Any = await context.new_page()
        await page.goto(f"{server.url}/watch/{heat.code}")
        await page.wait_for_selector("#conn[data-state=live]")
        for c in clients:
            await c.expect(p.Countdown, timeout=30)
            await c.give_up()
        for again in (False, True):  # live, then the page as rendered once over
            if again:
                await page.reload()
            await page.wait_for_selector("#final:not([hidden])")
            words = await page.text_content("#deal") or ""
            assert "stay secret until the event is over" in words, words
            assert len(await page.query_selector_all("#standings tbody tr")) == 2
            assert await page.query_selector_all(".replay-button") == []
        assert (await _info(server, event)).status == "running"
        for c in clients:
            await c.close()


async def test_a_heats_racer_sees_the_standings_and_why_the_deal_is_not_shown(events_server: LiveServer) -> None:
    """``thieves play``'s end screen over a sealed heat: the standings, and the secret's words where the
    deal number would be (never "deal #0")."""
    from client_cli.play_app import PlayApp
    from client_cli.race_screens import StandingsScreen
    from client_cli.table import MessageLine
    from client_cli.textshot import screen_text
    from client_cli.watch_app import WatchApp

    server = events_server
    event, keys = await _event(server, ("ann", "bob"), rounds=2)
    heat = (await _heats(server, event))[0]
    bob = await Client.connect(server)
    await bob.hello(heat.code, key=keys["bob"])
    ann = PlayApp(server.url, heat.code, None, key=keys["ann"])
    async with ann.run_test(size=(80, 24)) as pilot:
        await eventually(lambda: ann.state.can_move() is None, "ann racing", timeout=30)
        await bob.expect(p.Countdown, timeout=30)
        await bob.give_up()
        await pilot.press("g")
        await pilot.press("g")
        await eventually(lambda: isinstance(ann.screen, StandingsScreen), "ann's end screen")
        await pilot.pause()
        shown = screen_text(ann)
        assert "The race is over — Forty Thieves" in shown and "deal #" not in shown
        box = [line.split("█")[1].strip() for line in shown.splitlines() if line.count("█") == 2]
        words = " ".join(line for line in box if line)
        assert "The deal and every game stay secret until the event is over" in words, shown
        assert "1 bob" in " ".join(words.split()) and "2▶ ann" in words, shown
    watcher = WatchApp(server.url, heat.code)  # ``thieves watch``: the same words, and no game to replay
    async with watcher.run_test(size=(80, 24)) as pilot:
        await eventually(lambda: isinstance(watcher.screen, StandingsScreen), "the watcher's standings")
        await pilot.pause()
        shown = screen_text(watcher)
        assert "stay secret until the event" in shown and "deal #" not in shown and "replay" not in shown, shown
        await pilot.press("1")
        await pilot.pause()
        assert "stay secret until the event is over" in watcher.query_one(MessageLine).text
    await bob.close()


@pytest.mark.parametrize("reveal_at, now, shown, until", [
    (0, 5, True, None),  # an ordinary race: at its end
    (1_000, 999, False, 1_000),  # a daily deal's play before the day is over
    (1_000, 1_000, True, None),
    (SEALED, 1 << 61, False, None),  # a race of an event: until it is unsealed (no time known)
])
def test_the_one_rule_of_what_a_finished_race_shows(reveal_at: int, now: int, shown: bool, until: int | None) -> None:
    from server.race import rules as races

    meta = races.new_race(p.Create(deal_source="number", deal=7, seats=2), 0)
    meta.status, meta.reveal_at = "finished", reveal_at
    full = races.results(meta, [], 1)
    results = races.shown_results(meta, p.encode(full), now)
    assert races.revealed(meta, now) is shown and results.revealed is shown
    if shown:
        assert results == full and results.secret_words() is None
    else:
        assert (results.deal, results.salt, results.records, results.winning_line) == (0, "", [], None)
        assert results.reveal_at == until and results.secret_words() is not None
        assert results.standings == full.standings
