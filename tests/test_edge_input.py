"""The public edge on a real server and Redis (issue 22, items 4, 5, 7 and 8): deep JSON, tokens and
keys of any characters, look-alike names, security headers, JSON-only bodies, organiser guesses."""

from __future__ import annotations

import asyncio
import json
import logging
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, AsyncIterator

import pytest
import websockets
from redis_util import Client, LiveServer, create_race, live_server, register

import redis.asyncio as aioredis
from server.app import SECURITY_HEADERS
from server.config import MIN_ORGANISER_TOKEN
from shared import protocol as p

ORGANISER = "organiser-token-of-the-edge-tests"
AUTH = {"authorization": f"Bearer {ORGANISER}"}
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
async def edge(redis_url: str) -> AsyncIterator[LiveServer]:
    async with live_server(redis_url, organiser_token=ORGANISER, organiser_burst=3, organiser_interval=60.0) as live:
        yield live


def _errors(log: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in log.records if r.levelno >= logging.ERROR]


async def _keys(redis_url: str) -> set[bytes]:
    client = aioredis.from_url(redis_url)
    try:
        return set(await client.keys("*"))
    finally:
        await client.aclose()


def _raw(url: str, method: str, body: bytes | None, headers: dict[str, str]) -> tuple[int, Any, dict[str, str]]:
    """One request with exactly these headers (urllib adds a form content type to a bare POST body)."""
    req = urllib.request.Request(url, data=body, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, resp.read(), dict(resp.headers)
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read()), dict(err.headers)


# ------------------------------------------------------------ item 4: deep JSON
@pytest.mark.parametrize("path, headers", [("/races", {}), ("/players", {}), ("/events", AUTH)])
async def test_json_nested_20000_deep_is_a_bad_frame_on_every_endpoint_that_takes_json(
        edge: LiveServer, redis_url: str, server_log: pytest.LogCaptureFixture, path: str,
        headers: dict[str, str]) -> None:
    before = await _keys(redis_url)
    # 20,000 deep in 40,000 bytes: under --max-body (64 KiB), so it is the depth that refuses it (the
    # issue's '{"a":' * 20_000 is 100,000 bytes, refused unread as body_too_large: tests/test_edge.py).
    body = b'[' * 20_000 + b']' * 20_000
    status, answer, _ = await asyncio.to_thread(_raw, edge.url + path, "POST", body,
                                                {"content-type": "application/json", **headers})
    assert (status, answer["code"]) == (400, "bad_frame") and "deeper than 32" in answer["message"]
    assert await _keys(redis_url) == before
    assert _errors(server_log) == []


# ---------------------------------------------------- item 5: tokens and keys of any text
async def test_a_hello_token_with_a_non_ascii_signature_is_bad_token_and_closes_4003(
        edge: LiveServer, server_log: pytest.LogCaptureFixture) -> None:
    created = await create_race(edge)
    ann = await Client.connect(edge)
    welcome = await ann.hello(created.race.id, "ann")
    for forged in (welcome.token[:-1] + "é", welcome.token.replace(".0.", ".٠.")):
        c = await Client.connect(edge)
        await c.send(p.Hello(protocol=p.PROTOCOL_VERSION, race=created.race.id, token=forged))
        assert (await c.error()).code == "bad_token"
        assert await c.closed() == p.CloseCode.BAD_TOKEN
    await ann.close()
    assert _errors(server_log) == []


async def test_a_start_with_a_non_ascii_creator_token_is_refused_never_internal(
        edge: LiveServer, server_log: pytest.LogCaptureFixture) -> None:
    created = await create_race(edge)
    forged = created.creator_token[:-1] + "é"
    stranger = await Client.connect(edge)
    await stranger.send(p.Start(creator_token=forged))
    assert (await stranger.error()).code == "bad_token"
    player = await Client.connect(edge)
    await player.hello(created.race.id, "ann")
    await player.send(p.Start(creator_token=forged))
    assert (await player.error()).code == "forbidden"  # a joined connection: only the creator may start it
    for c in (stranger, player):
        await c.send(p.Ping(nonce=7))
        assert (await c.expect(p.Pong)).nonce == 7  # the connection goes on
        await c.close()
    assert _errors(server_log) == []


async def test_keys_and_organiser_tokens_with_non_ascii_text_are_bad_key_and_organiser_required(
        edge: LiveServer, server_log: pytest.LogCaptureFixture) -> None:
    key = await register(edge, "ann")
    created = await create_race(edge)
    c = await Client.connect(edge)
    await c.send(p.Hello(protocol=p.PROTOCOL_VERSION, race=created.race.id, key=key[:-1] + "é"))
    assert (await c.error()).code == "bad_key"
    assert await c.closed() == p.CloseCode.HELLO_REFUSED
    raw = {"content-type": "application/json"}
    for header in (f"Bearer {key[:-1]}é", "Bearer année.sécret"):
        status, answer, _ = await asyncio.to_thread(
            _raw, edge.url + "/players/ann/key", "POST", b"{}", {**raw, "authorization": header})
        assert (status, answer["code"]) == (401, "bad_key")
    status, answer, _ = await asyncio.to_thread(
        _raw, edge.url + "/events", "POST", b'{"name": "x"}', {**raw, "authorization": f"Bearer {ORGANISER}é"})
    assert (status, answer["code"]) == (403, "organiser_required")
    assert _errors(server_log) == []


# ------------------------------------------------------------ item 7: look-alike names
async def _refused(server: LiveServer, race: str, **hello: Any) -> tuple[str, int]:
    c = await Client.connect(server)
    await c.send(p.Hello(protocol=p.PROTOCOL_VERSION, race=race, **hello))
    err = await c.error()
    return err.code, await c.closed()


LOOK_ALIKES = ["аnn", "ａnn", "ANN", "ann\u0301", "ánn"]
UNSEEN = ["ann\u200b", "ann\x00", "\u0301ann"]


async def test_no_casual_name_passes_for_an_account(edge: LiveServer, redis_url: str) -> None:
    await register(edge, "ann")
    created = await create_race(edge)
    before = await _keys(redis_url)
    for name in LOOK_ALIKES:
        assert await _refused(edge, created.race.id, name=name) == ("name_registered", 4000), name
    for name in UNSEEN:
        assert await _refused(edge, created.race.id, name=name) == ("bad_name", 4000), name
    assert await _keys(redis_url) == before
    status, race = await edge.http("GET", f"/races/{created.race.id}")
    assert race["progress"] == []


async def test_no_new_account_passes_for_an_existing_one(edge: LiveServer, redis_url: str) -> None:
    await register(edge, "ann")
    await register(edge, "bill")
    before = await _keys(redis_url)
    for name, code in [("ａnn", "account_name_taken"), ("ANN", "account_name_taken"), ("BiII", "account_name_taken"),
                       ("bi1l", "account_name_taken"), ("аnn", "bad_name"), ("ann\u200b", "bad_name"),
                       ("ann\x00", "bad_name"), ("ann\u0301", "bad_name"), ("ann\n", "bad_name")]:
        status, answer = await edge.http("POST", "/players", {"name": name})
        assert (status, answer["code"]) == ((409 if code == "account_name_taken" else 400), code), name
    assert await _keys(redis_url) == before
    status, answer = await edge.http("POST", "/players", {"name": "ann\u200b"})
    assert "U+200B ZERO WIDTH SPACE" in answer["message"]


async def test_of_two_look_alike_registrations_at_once_exactly_one_is_made(edge: LiveServer) -> None:
    for attempt in range(3):
        names = [f"rob{attempt}", f"r0b{attempt}", f"ROB{attempt}", f"R0B{attempt}"]
        answers = await asyncio.gather(*(edge.http("POST", "/players", {"name": n}) for n in names))
        assert sorted(status for status, _ in answers) == [201, 409, 409, 409], answers


async def test_two_players_of_a_race_may_not_have_look_alike_names(edge: LiveServer) -> None:
    created = await create_race(edge, seats=4)
    zoe = await Client.connect(edge)
    assert (await zoe.hello(created.race.id, "  Zoë ")).progress[0].name == "Zoë"
    for name in ("zoe", "ZОЕ", "ｚｏｅ"):
        assert await _refused(edge, created.race.id, name=name) == ("name_taken", 4000), name
    await zoe.close()


async def test_accounts_made_before_the_index_are_indexed_at_start(redis_url: str) -> None:
    client = aioredis.from_url(redis_url)
    try:
        await client.hset("account:{carol}", mapping={"name": "Carol", "key_hash": "0" * 64, "created_at": 1})
    finally:
        await client.aclose()
    async with live_server(redis_url) as server:
        created = await create_race(server)
        assert await _refused(server, created.race.id, name="Саrol") == ("name_registered", 4000)
        status, answer = await server.http("POST", "/players", {"name": "caro1"})
        assert (status, answer["code"]) == (409, "account_name_taken")


# ------------------------------------------------- item 8: headers, JSON only, organiser guesses
def _has_security_headers(headers: dict[str, str]) -> None:
    lower = {k.lower(): v for k, v in headers.items()}
    for name, value in SECURITY_HEADERS:
        assert lower.get(name.decode()) == value.decode(), name
    assert "frame-ancestors 'none'" in lower["content-security-policy"]
    assert "script-src 'self'" in lower["content-security-policy"]


async def test_every_answer_carries_the_security_headers(edge: LiveServer) -> None:
    created = await create_race(edge)
    for path in ("/health", "/races", "/", f"/watch/{created.race.code}", "/static/watch.js", "/races/nope",
                 "/metrics"):
        status, _, headers = await asyncio.to_thread(_raw, edge.url + path, "GET", None, {"accept": "text/html"})
        assert status in (200, 404), path
        _has_security_headers(headers)
    req = urllib.request.Request(edge.url + f"/races/{created.race.id}/events")

    def first_headers() -> dict[str, str]:
        with urllib.request.urlopen(req, timeout=10) as resp:
            assert resp.headers["content-type"].startswith("text/event-stream")
            return dict(resp.headers)

    _has_security_headers(await asyncio.to_thread(first_headers))
    async with websockets.connect(edge.ws_url) as ws:
        assert ws.response is not None
        _has_security_headers(dict(ws.response.headers))


async def test_a_handler_that_fails_answers_a_typed_500_with_the_security_headers(
        edge: LiveServer, monkeypatch: pytest.MonkeyPatch, server_log: pytest.LogCaptureFixture) -> None:
    """Starlette answers an exception outside every middleware: the headers must be there all the same
    (and the failure is still logged, with its traceback)."""
    async def broken() -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(edge.service.store, "active_races", broken)
    status, answer, headers = await asyncio.to_thread(_raw, edge.url + "/races", "GET", None, {})
    assert (status, answer["code"]) == (500, "internal")
    _has_security_headers(headers)
    assert any("RuntimeError: a bug" in (r.exc_text or "") for r in server_log.records)


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data",
                                          None])
async def test_a_post_that_is_not_json_is_415_and_creates_nothing(edge: LiveServer, redis_url: str,
                                                                  content_type: str | None) -> None:
    """What a web page may send to another site without asking first: refused before any handler."""
    before = await _keys(redis_url)
    headers = {"content-type": content_type} if content_type else {}
    for path, body in (("/races", b"{}"), ("/players", b'{"name": "mallory"}'), ("/players/ann/key", None)):
        status, answer, got = await asyncio.to_thread(_raw, edge.url + path, "POST", body, headers)
        assert (status, answer["code"]) == (415, "unsupported_media_type"), path
        _has_security_headers(got)
    assert await _keys(redis_url) == before
    status, _, _ = await asyncio.to_thread(_raw, edge.url + "/races", "POST", b"{}",
                                           {"content-type": "Application/JSON; charset=utf-8"})
    assert status == 201


async def test_wrong_organiser_tokens_are_limited_per_address_and_a_right_one_costs_nothing(
        edge: LiveServer) -> None:
    """Burst 3: right tokens spend nothing; three wrong ones use the bucket up; then every attempt is 429,
    the right token too (the answer must not tell a guess that is right)."""
    for _ in range(4):
        status, _ = await edge.http("POST", "/events", {"name": "Cup"}, headers=AUTH)
        assert status == 201
    for guess in ("a", "b", "c"):
        status, answer = await edge.http("POST", "/events", {"name": "Cup"}, headers={"authorization": f"Bearer {guess}"})
        assert (status, answer["code"]) == (403, "organiser_required")
    for headers in ({"authorization": "Bearer d"}, AUTH):
        status, answer = await edge.http("POST", "/events", {"name": "Cup"}, headers=headers)
        assert (status, answer["code"]) == (429, "organiser_rate_limited")
        assert 1 <= int(edge.last_headers["retry-after"]) <= 60
    status, answer = await edge.http("POST", "/events/nope/start", headers=AUTH)
    assert status == 429


def test_the_server_refuses_to_start_with_a_short_organiser_token() -> None:
    out = subprocess.run([sys.executable, "-m", "server.main", "--organiser-token", "x" * (MIN_ORGANISER_TOKEN - 1)],
                         cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and f"at least {MIN_ORGANISER_TOKEN} characters" in out.stderr
