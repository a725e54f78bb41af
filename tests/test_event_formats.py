"""The formats' seam (server/events/format.py): a format written here, in the test tree, and handed to
a server with the shipped list (server/events/formats/__init__.py) without touching the runner, runs end
to end on a real server and Redis; an unknown format
is refused; an event writes nothing nobody reads (no pub/sub, no key beyond those read)."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
import msgspec
import redis.asyncio as aioredis
from redis_util import LiveServer, eventually, live_server, register
from test_events import AUTH, ORGANISER, WIN, _create, _enter, _info, _play, _round_open
from test_swiss_events import _verify

from server.events.formats import ALL
from server.events.rounds import Drawn, RoundsFormat
from server.store.events import EventMeta
from shared import protocol as p
from shared import scoring


class FirstWins(RoundsFormat):
    """A toy: one round, the whole field in one heat, and the first to win gets 1."""

    name = "first-wins"
    score_rule = "1 to the first to win"

    def refusal(self, req: p.EventCreate) -> tuple[p.ErrorCode, str] | None:
        return None if req.rounds == 1 else (p.ErrorCode.BAD_FIELD, "rounds: a first-wins event has one")

    def draw(self, meta: EventMeta, field: list[str], results: scoring.Scores) -> Drawn:
        return Drawn([field])

    def score(self, field: list[scoring.RoundResult]) -> dict[str, int]:
        wins = sorted((r.finish_ms, r.account) for r in field if r.status == "finished" and r.finish_ms is not None)
        return {r.account: 2 if wins and r.account == wins[0][1] else 0 for r in field}

    def summary(self, meta: EventMeta) -> str:
        return "one heat, the first to win takes it"


@pytest.fixture
async def events_server(redis_url: str) -> Any:
    """A server playing the shipped formats and the toy."""
    async with live_server(redis_url, formats=[*ALL, FirstWins()], organiser_token=ORGANISER) as server:
        yield server


async def test_a_format_from_the_test_tree_runs_end_to_end(events_server: LiveServer, redis_url: str) -> None:
    server = events_server
    keys = {n: await register(server, n) for n in ("ann", "bob", "cy")}
    status, answer = await server.http("POST", "/events", {"name": "Toy", "format": "first-wins", "rounds": 2},
                                       headers=AUTH)
    assert (status, answer["code"]) == (400, "bad_field") and "one" in answer["message"], "the format's own check"
    event = await _create(server, format="first-wins", rounds=1, deals=[WIN["deal"]])
    assert (event.format, event.summary, event.pairing, event.score_rule) == (
        "first-wins", "one heat, the first to win takes it", False, "1 to the first to win")
    watcher = aioredis.from_url(redis_url)
    pubsub = watcher.pubsub()
    await pubsub.psubscribe("event:*")
    try:
        for key in keys.values():
            await _enter(server, event.id, key)
        await server.http("POST", f"/events/{event.id}/start", headers=AUTH)
        drawn = await _round_open(server, event.id, 1)
        assert [sorted(h.entrants) for h in drawn.heats] == [["ann", "bob", "cy"]], "the field in one heat"
        heat = drawn.heats[0]
        # ann and bob both win, one of them first; cy gives up.
        await asyncio.gather(*(_play(server, heat.code, keys[n], m)
                               for n, m in (("ann", len(WIN["moves"])), ("bob", len(WIN["moves"])), ("cy", 3))))

        async def finished() -> bool:
            return (await _info(server, event.id)).status == "finished"
        await eventually(finished, "the toy event scored and finished")
        status, answer = await server.http("GET", f"/events/{event.id}/standings")
        standings = msgspec.convert(answer, p.EventStandings)
        _, res = await server.http("GET", f"/races/{heat.race}/results")
        first = min((s for s in msgspec.convert(res, p.Results).standings if s.status == "finished"),
                    key=lambda s: (s.finished_at or 0, s.name)).name  # (the toy's rule: equal times, by name)
        assert {line.name: line.matchpoints for line in standings.lines} == {
            n: 1.0 if n == first else 0.0 for n in keys}, "1 to the first to win, nothing to the second"
        assert standings.lines[0].name == first and standings.lines[0].rounds[0].status == "finished"
        async with httpx.AsyncClient(timeout=10) as http:
            page = await http.get(f"{server.url}/event/{event.id}")
        assert page.status_code == 200 and "1 to the first to win" in page.text, "the page shows the format's words"
        code, out = await _verify(server, event.id)
        assert code == 2 and "is a first-wins event, which this client cannot recompute (it knows arena" in out, out
        heard = []
        while (message := await pubsub.get_message(timeout=0.2)) is not None:  # (all arrived long ago)
            heard.append(message)
        assert [m for m in heard if m["type"] == "pmessage"] == [], "an event publishes nothing (nobody subscribes)"
        assert heard, "the subscription itself was heard"
        stored = {k.decode() async for k in watcher.scan_iter(f"event:{{{event.id}}}*")}
        assert stored == {f"event:{{{event.id}}}", f"event:{{{event.id}}}:entrants",
                          f"event:{{{event.id}}}:results"}, "no key that nothing reads"
    finally:
        await pubsub.aclose()
        await watcher.aclose()


async def test_an_unknown_format_is_refused_and_nothing_is_stored(events_server: LiveServer) -> None:
    status, answer = await events_server.http("POST", "/events", {"name": "x", "format": "knockout"}, headers=AUTH)
    assert (status, answer["code"]) == (400, "bad_field")
    assert "'knockout' is not one of" in answer["message"]
    assert "duplicate" in answer["message"] and "swiss" in answer["message"]
    assert (await events_server.http("GET", "/events"))[1]["events"] == []



async def test_an_event_of_a_format_this_server_does_not_play_holds_up_no_other(events_server: LiveServer) -> None:
    """An event stored with a format no module here registers (another process's, a removed one) is
    logged and skipped at each tick; the events after it in the runner's list still move on."""
    from test_event_states import _meta

    stray = _meta("stray", ("running", "done"))
    stray.format, stray.created_at = "gone", 1  # first in the runner's list
    await events_server.tournaments.events.create(stray)
    key = await register(events_server, "ann")
    event = await _create(events_server, format="first-wins", rounds=1, deals=[WIN["deal"]])
    await _enter(events_server, event.id, key)
    await events_server.http("POST", f"/events/{event.id}/start", headers=AUTH)
    drawn = await _round_open(events_server, event.id, 1)
    assert drawn.heats[0].entrants == ["ann"]
