"""A race an event made that did not start at its time (too few of its entrants came) and that the event
has scored as missed, on a real server: it takes nobody any more (a typed ``race_closed``) and the
front page does not list it as waiting to start (server/events/format.py, EventContext.outcome)."""

from __future__ import annotations

import asyncio
import urllib.request

import msgspec
from redis_util import Client, LiveServer, eventually, register
from test_events import AUTH, _create, _enter, events_server  # noqa: F401 (a fixture)

from shared import protocol as p


def _lobby_section(url: str) -> str:
    """The front page's "Waiting to start" section."""
    with urllib.request.urlopen(url + "/", timeout=10) as resp:
        page = resp.read().decode()
    return page.split('id="lobby-title"', 1)[1].split("</section>", 1)[0]


async def test_an_arena_race_scored_as_missed_takes_nobody_and_is_not_listed_as_waiting(
        events_server: LiveServer) -> None:
    server = events_server
    event = (await _create(server, name="Blitz", format="arena", duration=600, deal_source="random")).id
    keys = {name: await register(server, name) for name in ("ann", "bob")}
    for key in keys.values():
        await _enter(server, event, key)
    status, answer = await server.http("POST", f"/events/{event}/start", headers=AUTH)
    assert status == 200, answer

    async def missed() -> bool:
        status, answer = await server.http("GET", f"/events/{event}/standings")
        lines = msgspec.convert(answer, p.EventStandings).lines
        return {line.status for line in lines} == {"paused"}
    await eventually(missed, "the race nobody joined scored as missed (both paused)")
    status, answer = await server.http("GET", f"/events/{event}")
    race = msgspec.convert(answer, p.EventInfo).schedule[0].heats[0]

    client = await Client.connect(server)
    try:
        await client.send(p.Hello(protocol=p.PROTOCOL_VERSION, race=race.code, role="player", key=keys["ann"]))
        error = await client.error()
        assert error.code == "race_closed", error
    finally:
        await client.close()
    assert f'data-code="{race.code}"' not in await asyncio.to_thread(_lobby_section, server.url), \
        "not waiting to start"
    status, answer = await server.http("GET", f"/events/{event}/standings")
    assert {line.account: (line.status, line.races) for line in msgspec.convert(answer, p.EventStandings).lines} \
        == {"ann": ("paused", 0), "bob": ("paused", 0)}, "the refused join changed nothing"
