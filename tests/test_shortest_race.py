"""One shortest race, ``p.MIN_TIME_LIMIT`` seconds, whatever makes it: ``create --time-limit 5`` made a
5-second race while ``seek`` refused anything under 30 s. The server refuses a shorter clock on every
path that makes races (a typed error, nothing stored), and the client refuses it before sending."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from redis_util import Client, LiveServer, live_server, register
from server.config import parse_args
from shared import protocol as p
from shared.seeks import SEEK_TIME_LIMIT
from test_events import AUTH, ORGANISER

THIEVES = Path(sys.executable).with_name("thieves")
SHORT = p.MIN_TIME_LIMIT - 1


def test_the_minimum_is_one_constant_that_every_rule_reads() -> None:
    meta = p.TimeLimit.__metadata__[0]  # type: ignore[attr-defined]
    assert meta.ge == p.MIN_TIME_LIMIT == SEEK_TIME_LIMIT[0] == 30
    for struct in (p.Create, p.ChallengeCreate, p.EventCreate):
        with pytest.raises(msgspec.ValidationError):
            msgspec.convert({"name": "Cup", "to": "bob", "time_limit": SHORT}, struct)
        msgspec.convert({"name": "Cup", "to": "bob", "time_limit": p.MIN_TIME_LIMIT}, struct)
    with pytest.raises(ValueError, match=f"--daily-time-limit must be at least {p.MIN_TIME_LIMIT} seconds"):
        parse_args(["--daily-time-limit", str(SHORT)], environ={})


async def test_every_path_that_makes_a_race_refuses_a_shorter_one(redis_url: str) -> None:
    async with live_server(redis_url, organiser_token=ORGANISER) as server:
        status, body = await server.http("POST", "/races", {"time_limit": SHORT})
        assert (status, body["code"]) == (400, "bad_field"), body
        c = await Client.connect(server)
        await c.send(p.Create(time_limit=SHORT))
        assert (await c.error()).code == "bad_field"
        await c.close()
        assert (await server.http("GET", "/races"))[1]["races"] == [], "nothing was made"

        ann = await register(server, "ann")
        await register(server, "bob")
        status, body = await server.http("POST", "/challenges", {"to": "bob", "time_limit": SHORT},
                                         headers={"authorization": f"Bearer {ann}"})
        assert (status, body["code"]) == (400, "bad_field"), body
        status, body = await server.http("POST", "/events", {"name": "Cup", "time_limit": SHORT}, headers=AUTH)
        assert (status, body["code"]) == (400, "bad_field"), body
        assert (await server.http("GET", "/events"))[1]["events"] == [], "no event was made"

        c = await Client.connect(server)
        await c.send(p.Seek(name="cy", time_limit=SHORT))
        err = await c.error()
        assert err.code == "seek_out_of_range" and f"{p.MIN_TIME_LIMIT} to 3600 seconds" in err.message
        await c.close()
        assert (await server.http("GET", "/seeks"))[1]["pools"] == []


async def run(*argv: str) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(str(THIEVES), *argv, stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.PIPE, env=dict(os.environ))
    _, err = await asyncio.wait_for(proc.communicate(), 60)
    return proc.returncode or 0, err.decode()


async def test_the_client_refuses_a_shorter_race_before_sending(server: LiveServer) -> None:
    code, err = await run("create", "--time-limit", "5", "--server", server.url)
    assert (code, err) == (2, f"thieves create: --time-limit must be from {p.MIN_TIME_LIMIT} to 86400, not 5\n")
    code, err = await run("seek", "--name", "dee", "--time-limit", "5", "--server", server.url)
    assert (code, err) == (2, f"thieves seek: a race from a seek lasts {p.MIN_TIME_LIMIT} to 3600 seconds, not 5\n")
    code, err = await run("seek", "--name", "dee", "--seats", "12", "--server", server.url)
    assert (code, err) == (2, "thieves seek: a race from a seek has 2 to 8 players, not 12\n")
    assert (await server.http("GET", "/races"))[1]["races"] == []
    assert (await server.http("GET", "/seeks"))[1]["pools"] == []
