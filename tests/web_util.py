"""Test helpers for the web pages: an SSE reader over a real HTTP stream, and a race of scripted players.

The reader parses ``text/event-stream`` itself (the format is four line
kinds) so the tests check the bytes a browser gets, not a library's view
of them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator

import httpx

from redis_util import DEADLINE, Client, LiveServer, create_race, eventually, register, start_race
from shared import protocol as p

WIN = json.loads((Path(__file__).parent / "data" / "race_win_line.json").read_text())
"""Forty Thieves deal 2 and a line that wins it: every player's moves are legal prefixes of it."""


@dataclass
class SseEvent:
    event: str
    id: str | None
    data: Any
    raw: str
    retry: int | None = None


@dataclass
class SseTable:
    """A spectator's table folded from SSE events as docs/protocol.md says (the browser's fold)."""

    version: int = 0
    lines: dict[int, dict[str, Any]] = field(default_factory=dict)
    last_id: str | None = None

    def apply(self, ev: SseEvent) -> None:
        if ev.id is not None:
            self.last_id = ev.id
        if ev.event == "welcome":
            self.version = ev.data["version"]
            if not ev.data["resumed"]:
                self.lines = {e["seat"]: e for e in ev.data["progress"]}
        elif ev.event == "progress":
            if ev.data["full"]:
                self.lines = {}
            self.lines.update({e["seat"]: e for e in ev.data["players"]})
            self.version = max(self.version, ev.data["version"])


class SseStream:
    """One open ``GET /races/{race}/events``, read event by event."""

    def __init__(self, response: httpx.Response, table: SseTable) -> None:
        self.response = response
        self.table = table
        self._lines = response.aiter_lines()
        self.ended = False

    async def next(self, timeout: float = DEADLINE) -> SseEvent:
        """The next event (comments such as pings skipped); raises EOFError when the stream ends."""
        return await asyncio.wait_for(self._next(), timeout)

    async def _next(self) -> SseEvent:
        fields: dict[str, list[str]] = {}
        raw: list[str] = []
        async for line in self._lines:
            if line == "":
                if "data" in fields or "event" in fields:
                    data = "\n".join(fields.get("data", []))
                    ev = SseEvent(fields.get("event", ["message"])[0], fields.get("id", [None])[0],
                                  json.loads(data) if data else None, "\n".join(raw),
                                  int(fields["retry"][0]) if "retry" in fields else None)
                    self.table.apply(ev)
                    return ev
                fields, raw = {}, []
                continue
            if line.startswith(":"):
                continue
            raw.append(line)
            name, _, value = line.partition(":")
            fields.setdefault(name, []).append(value[1:] if value.startswith(" ") else value)
        self.ended = True
        raise EOFError("the stream ended")

    async def until(self, kind: str, timeout: float = DEADLINE) -> SseEvent:
        """Read up to and including the next event named ``kind``."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            ev = await self.next(max(0.01, deadline - loop.time()))
            if ev.event == kind:
                return ev

    async def until_version(self, version: int, timeout: float = DEADLINE) -> list[SseEvent]:
        """Read until the table is at ``version``; the events read."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        out = []
        while self.table.version < version:
            left = deadline - loop.time()
            if left <= 0:
                raise AssertionError(f"the SSE table stayed at version {self.table.version}, not {version}")
            out.append(await self.next(left))
        return out


@contextlib.asynccontextmanager
async def sse(server: LiveServer, race: str, last_event_id: str | None = None, table: SseTable | None = None,
              query: str = "") -> AsyncIterator[SseStream]:
    """Open the race's event stream (``Last-Event-ID`` as a reconnecting browser sends it)."""
    headers = {"accept": "text/event-stream"}
    if last_event_id is not None:
        headers["last-event-id"] = last_event_id
    async with httpx.AsyncClient(base_url=server.url, timeout=httpx.Timeout(DEADLINE, read=None)) as http:
        async with http.stream("GET", f"/races/{race}/events{query}", headers=headers) as response:
            yield SseStream(response, table or SseTable())


async def server_lines(server: LiveServer, race: str) -> dict[int, dict[str, Any]]:
    """The table ``GET /races/{race}`` shows now (the truth a spectator's fold must reach)."""
    status, body = await server.http("GET", f"/races/{race}")
    assert status == 200, body
    return {e["seat"]: e for e in body["progress"]}


async def race_version(server: LiveServer, race: str) -> int:
    meta = await server.service.store.meta(race)
    assert meta is not None
    return int(meta.version)


@dataclass
class Race:
    created: p.Created
    players: list[Client]
    welcomes: list[p.Welcome]
    played: list[int]
    """How many moves of the winning line each player has played."""
    out: set[int] = field(default_factory=set)
    """Seats that gave up."""

    @property
    def id(self) -> str:
        return self.created.race.id

    async def move(self, seat: int, count: int = 1) -> None:
        """Play the next ``count`` moves of the winning line for ``seat``."""
        for _ in range(count):
            text = WIN["moves"][self.played[seat]]
            answer = await self.players[seat].move(text)
            assert isinstance(answer, p.Ack), answer
            self.played[seat] += 1

    async def give_up(self, seat: int) -> None:
        await self.players[seat].give_up()
        self.out.add(seat)

    async def end(self, server: LiveServer) -> None:
        """Everyone still racing gives up, and the race is over (its results stored)."""
        for seat in range(len(self.players)):
            if seat not in self.out:
                await self.give_up(seat)

        async def over() -> bool:
            return await server.service.store.results(self.id) is not None

        await eventually(over, "the race to end once everyone gave up")

    async def close(self) -> None:
        for player in self.players:
            await player.close()


async def new_race(server: LiveServer, names: tuple[str, ...] = ("ann", "bob", "cy"), start: bool = True,
                   **fields: Any) -> Race:
    """A race on deal 2 with a player per name, started unless ``start`` is False."""
    created = await create_race(server, seats=len(names), deal_source="number", deal=WIN["deal"], **fields)
    players, welcomes = [], []
    for name in names:
        client = await Client.connect(server)
        welcomes.append(await client.hello(created.race.id, name))
        players.append(client)
    race = Race(created, players, welcomes, [0] * len(names))
    if start:
        await start_race(server, created.creator_token, players)
    return race


async def enter_event(server: LiveServer, auth: dict[str, str], body: dict[str, Any],
                      names: tuple[str, ...]) -> tuple[str, dict[str, str]]:
    """An event made with ``body`` and each name registered and entered: its id and the accounts' keys."""
    status, event = await server.http("POST", "/events", body, headers=auth)
    assert status == 201, event
    keys = {}
    for name in names:
        keys[name] = await register(server, name)
        status, answer = await server.http("POST", f"/events/{event['id']}/entrants",
                                           headers={"authorization": f"Bearer {keys[name]}"})
        assert status == 200, answer
    return event["id"], keys


async def start_event(server: LiveServer, auth: dict[str, str], body: dict[str, Any],
                      names: tuple[str, ...]) -> tuple[str, dict[str, str], list[dict[str, Any]]]:
    """An event made with ``body``, each name registered and entered, started, and its first round's
    races (or an arena's first pairings) drawn: the event's id, the accounts' keys and those races."""
    event, keys = await enter_event(server, auth, body, names)
    status, info = await server.http("POST", f"/events/{event}/start", headers=auth)
    assert status == 200, info
    drawn: list[dict[str, Any]] = []

    async def heats_drawn() -> bool:
        _, info = await server.http("GET", f"/events/{event}")
        drawn[:] = info["schedule"][0]["heats"] if info["schedule"] else []
        return bool(drawn)

    await eventually(heats_drawn, "the first round's races")
    return event, keys, drawn


async def join_heats(server: LiveServer, heats: list[dict[str, Any]], keys: dict[str, str],
                     moves: dict[str, int]) -> list[Client]:
    """Each entrant of ``heats`` joins its race with its key, waits for the start and plays its count
    of ``moves`` along the winning line (``WIN``: the event's deal must be its deal)."""
    clients = []
    for heat in heats:
        for account in heat["entrants"]:
            client = await Client.connect(server)
            await client.hello(heat["code"], key=keys[account])
            clients.append((client, moves.get(account, 0)))
    for client, count in clients:
        await client.expect(p.Countdown, timeout=30)
    for client, count in clients:
        for text in WIN["moves"][:count]:
            assert isinstance(await client.move(text), p.Ack)
    return [client for client, _ in clients]


async def event_round(server: LiveServer, auth: dict[str, str]) -> tuple[str, list[Client]]:
    """A one-round duplicate event of four in heats of two, its round running with cards home."""
    event, keys, heats = await start_event(server, auth, {
        "name": "Layout Cup", "rounds": 1, "heat_size": 2, "join_seconds": 1, "break_seconds": 0,
        "time_limit": 120, "deals": [WIN["deal"]]}, ("ann", "bob", "cy", "dee"))
    return event, await join_heats(server, heats, keys, {"ann": 12, "bob": 0, "cy": 19, "dee": 1})


async def daily_play(server: LiveServer, name: str) -> tuple[dict[str, Any], Client]:
    """A new account's play of today's Forty Thieves deal, joined and started: ``POST /daily``'s answer
    and the player's client, at the start of its game."""
    key = await register(server, name)
    status, body = await server.http("POST", "/daily/forty-thieves", headers={"authorization": f"Bearer {key}"})
    assert status == 200, body
    client = await Client.connect(server)
    await client.hello(body["code"], key=key)
    await client.send(p.Ready(ready=True))
    await client.expect(p.Countdown)
    return body, client
