"""The public edge (issue #22): read deadlines, the body limit and the per-address cap, on a real server.

Each test is an attacker's client over real sockets: a request head or body
trickled in, a 64 MB body, one address holding more connections than its
share, directly or through a trusted proxy. The server must cut it with a
typed answer, count it in ``/metrics``, and keep serving everyone else. (The
global cap under a low open-file limit is tests/test_connection_limits.py.)
"""

from __future__ import annotations

import asyncio
import re
import urllib.request
from typing import AsyncIterator

import pytest

from edge_util import RawClient, head, spectate
from redis_util import LiveServer, create_race, eventually, live_server
from server.answers import SECURITY_HEADERS
from server.transport import edge

DEADLINE = 1.0
MAX_BODY = 4096
PER_ADDRESS = 3
PROXY = "127.0.0.9"


@pytest.fixture
async def server(redis_url: str) -> AsyncIterator[LiveServer]:
    async with live_server(redis_url, header_timeout=DEADLINE, body_timeout=DEADLINE, max_body=MAX_BODY,
                           connections_per_address=PER_ADDRESS, trusted_proxies=PROXY) as live:
        yield live


async def refusals(server: LiveServer) -> dict[str, float]:
    """The edge's refusals by kind, from ``/metrics`` (read in a thread: the server is in this loop)."""

    def scrape() -> str:
        with urllib.request.urlopen(server.url + "/metrics", timeout=10) as resp:
            return resp.read().decode()

    text = await asyncio.to_thread(scrape)
    return {m.group(1): float(m.group(2))
            for m in re.finditer(r'^thieves_connections_refused_total\{kind="(\w+)"\} (\S+)$', text, re.M)}


async def trickle(client: RawClient, pieces: list[bytes], every: float = 0.2) -> int:
    """Send one piece every ``every`` seconds until done or the server closes; how many went."""
    sent = 0
    try:
        for piece in pieces:
            await client.send(piece)
            sent += 1
            await asyncio.sleep(every)
    except ConnectionError:
        pass
    return sent


async def test_a_request_head_trickled_in_is_cut_at_the_header_deadline(server: LiveServer) -> None:
    lines = [b"x-slow: %d\r\n" % n for n in range(100)]  # 20 s of header lines, one every 0.2 s
    client = await RawClient.open(server.url)
    sending = asyncio.create_task(trickle(client, [b"GET /races HTTP/1.1\r\nhost: test\r\n", *lines]))
    answer = await client.answer()
    assert (answer.status, answer.code) == (408, "request_timeout"), answer
    assert "request head" in answer.json["message"] and answer.headers["connection"] == "close"
    # Written to the socket by the edge itself, it carries the headers of every other answer too.
    assert all(answer.headers[name.decode()] == value.decode() for name, value in SECURITY_HEADERS)
    assert await client.closed()
    client.close()
    assert await sending < len(lines), "cut while it was still trickling"

    # On a keep-alive connection the deadline starts again with each request: the first is answered,
    # the second's head trickles and is cut.
    client = await RawClient.open(server.url)
    assert (await client.request("GET", "/races")).status == 200
    sending = asyncio.create_task(trickle(client, [b"GET /races HTTP/1.1\r\n", *lines]))
    assert (await client.answer()).status == 408
    assert await client.closed()
    client.close()
    assert await sending < len(lines)

    # A connection that sends nothing is closed too, without a 408 (it may be an idle keep-alive one
    # whose client would take the 408 for the answer to the request it is about to send).
    client = await RawClient.open(server.url)
    assert await asyncio.wait_for(client.reader.read(), 30) == b""
    client.close()
    assert (await refusals(server))["header_timeout"] == 3


async def test_a_request_body_trickled_in_is_answered_408_at_the_body_deadline(server: LiveServer) -> None:
    client = await RawClient.open(server.url)
    await client.send(b"POST /races HTTP/1.1\r\nhost: test\r\ncontent-type: application/json\r\n"
                      b"content-length: 100\r\n\r\n")
    sending = asyncio.create_task(trickle(client, [b" "] * 100))  # 1 byte every 0.2 s: 20 s
    answer = await client.answer()
    assert (answer.status, answer.code) == (408, "request_timeout"), answer
    assert "request body" in answer.json["message"]
    assert await client.closed()
    client.close()
    assert await sending < 100
    assert (await refusals(server))["body_timeout"] == 1
    status, _ = await server.http("GET", "/races")  # the application is still there for everyone else
    assert status == 200


@pytest.mark.parametrize("request_head, status, words", [
    (b"GET /races HTTP/1.1\r\nhost: test\r\nx-name: a\x00b\r\n\r\n", 400, "NUL in a header"),
    (b"GET /races HTTP/1.1\r\nhost: test\r\nno colon here\r\n\r\n", 400, "without a colon"),
    # A head still unfinished past the limit (the rest never needs to come).
    (b"GET /races HTTP/1.1\r\nhost: test\r\nx-big: " + b"a" * (edge.HEAD_BYTES + 100), 431, "16 KiB")])
async def test_a_request_h11_cannot_read_is_answered_typed_with_every_answers_headers(
        server: LiveServer, request_head: bytes, status: int, words: str) -> None:
    client = await RawClient.open(server.url)
    await client.send(request_head)
    answer = await client.answer()
    assert (answer.status, answer.code) == (status, "bad_request"), answer
    assert words in answer.json["message"] and answer.headers["connection"] == "close"
    assert all(answer.headers[name.decode()] == value.decode() for name, value in SECURITY_HEADERS)
    assert await client.closed()
    client.close()
    assert (await refusals(server))["bad_request"] == 1
    status_now, _ = await server.http("GET", "/races")  # the application is still there for everyone else
    assert status_now == 200


async def test_requests_h11_cannot_read_are_logged_summed_up_not_one_line_each(
        server: LiveServer, server_log: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    """A client sending bad requests in a loop must not fill the log: the first is logged at once, the
    rest of the window in one line at its end; uvicorn's warning of each is gone; /metrics counts all."""
    monkeypatch.setattr(edge, "BAD_REQUEST_LOG_SECONDS", 3.0)  # the five come well within it

    def lines() -> list[str]:
        records = {id(r): r for r in server_log.records}  # a record can reach the capture twice (root and own)
        return [r.getMessage() for r in records.values() if "bad_requests" in r.getMessage()]

    for _ in range(5):
        client = await RawClient.open(server.url)
        await client.send(b"GET /races HTTP/1.1\r\nhost: test\r\nno colon here\r\n\r\n")
        assert (await client.answer()).code == "bad_request"
        client.close()
    assert (await refusals(server))["bad_request"] == 5
    assert [line.split(" hint=")[0] for line in lines()][:1] == [
        "event=bad_requests count=1 last_from=127.0.0.1"]
    await eventually(lambda: len(lines()) == 2, what="the window's line")
    assert "event=bad_requests count=4 last_from=127.0.0.1" in lines()[1]
    assert not any(edge.UVICORN_BAD_REQUEST in r.getMessage() for r in server_log.records)


async def test_a_stopping_server_logs_the_bad_requests_its_window_still_held(
        redis_url: str, server_log: pytest.LogCaptureFixture) -> None:
    async with live_server(redis_url) as server:
        for _ in range(3):
            client = await RawClient.open(server.url)
            await client.send(b"GET /races HTTP/1.1\r\nhost: test\r\nno colon here\r\n\r\n")
            assert (await client.answer()).code == "bad_request"
            client.close()
    records = {id(r): r.getMessage() for r in server_log.records if "bad_requests" in r.getMessage()}
    assert [line.split(" last_from=")[0] for line in records.values()] == [
        "event=bad_requests count=1", "event=bad_requests count=2"]
    assert list(records.values())[1].endswith(" stopping=1")


async def test_a_request_to_upgrade_to_something_else_is_served_without_a_warning_each(
        server: LiveServer, server_log: pytest.LogCaptureFixture) -> None:
    client = await RawClient.open(server.url)
    for _ in range(3):  # one keep-alive connection, a request after another
        await client.send(b"GET /races HTTP/1.1\r\nhost: test\r\nconnection: upgrade\r\nupgrade: h2c\r\n\r\n")
        assert (await client.answer()).status == 200
    client.close()
    assert not any(edge.UVICORN_UPGRADE in r.getMessage() for r in server_log.records)


@pytest.mark.parametrize("content_type, status, code", [("application/json", 413, "body_too_large"),
                                                        ("text/plain", 415, "unsupported_media_type")])
async def test_a_64_mb_body_is_refused_without_being_read(server: LiveServer, content_type: str, status: int,
                                                          code: str) -> None:
    """Whichever check refuses it (the size, or the content type before it), the rest is not read."""
    total, chunk = 64 << 20, b"x" * 65536
    client = await RawClient.open(server.url)
    await client.send(head("POST", "/races", {"content-type": content_type, "content-length": str(total)}))
    sent = 0

    async def push() -> None:
        nonlocal sent
        try:
            while sent < total:
                client.writer.write(chunk)
                await client.writer.drain()
                sent += len(chunk)
        except ConnectionError:
            pass

    pushing = asyncio.create_task(push())
    answer = await client.answer()
    assert (answer.status, answer.code) == (status, code), answer
    assert await client.closed()
    await asyncio.wait_for(pushing, 30)  # the server closed: the writer stops
    client.close()
    assert sent < total // 4, f"{sent} bytes went before the server closed"
    if status == 413:
        assert str(MAX_BODY) in answer.json["message"]
        assert (await refusals(server))["body_too_large"] == 1


async def test_a_chunked_body_is_cut_once_it_passes_the_limit(server: LiveServer) -> None:
    piece = b"%x\r\n%s\r\n" % (1000, b" " * 1000)
    client = await RawClient.open(server.url)
    await client.send(head("POST", "/races", {"content-type": "application/json", "transfer-encoding": "chunked"}))
    sending = asyncio.create_task(trickle(client, [piece] * 50, every=0.01))
    answer = await client.answer()
    assert (answer.status, answer.code) == (413, "body_too_large"), answer
    assert await client.closed()
    client.close()
    assert await sending < 50


@pytest.mark.parametrize("path", ["/races", "/players", "/events", "/daily/forty-thieves"])
async def test_every_endpoint_refuses_a_body_over_the_limit(server: LiveServer, path: str) -> None:
    client = await RawClient.open(server.url)
    answer = await client.request("POST", path, {"content-type": "application/json"}, b" " * (MAX_BODY + 1))
    client.close()
    assert (answer.status, answer.code) == (413, "body_too_large"), answer


async def test_one_address_holds_at_most_its_share_of_connections(server: LiveServer) -> None:
    race = (await create_race(server, seats=2)).race.id
    greedy, honest = "127.0.0.2", "127.0.0.3"
    held = [await spectate(server.ws_url, race, greedy) for _ in range(PER_ADDRESS)]
    assert [kind for kind, _ in held] == ["welcome"] * PER_ADDRESS
    # One more of any kind from that address is refused, typed and distinguishable from server_full.
    assert (await spectate(server.ws_url, race, greedy))[0] == "refused too_many_connections"
    client = await RawClient.open(server.url, greedy)
    await client.send(head("GET", f"/races/{race}/events"))
    answer = await client.answer()
    client.close()
    assert (answer.status, answer.code) == (429, "too_many_connections"), answer
    assert answer.headers["retry-after"] == str(edge.RETRY_AFTER)
    assert all(answer.headers[name.decode()] == value.decode() for name, value in SECURITY_HEADERS)
    # ... while another address plays on, and /health answers the greedy one too (the reserve).
    kind, ws = await spectate(server.ws_url, race, honest)
    assert kind == "welcome" and ws is not None
    client = await RawClient.open(server.url, greedy)
    assert (await client.request("GET", "/health")).status == 200
    client.close()
    await ws.close()
    await held.pop()[1].close()  # type: ignore[union-attr]
    kind, ws = await spectate(server.ws_url, race, greedy)  # a place of its own came free
    assert kind == "welcome" and ws is not None
    held.append((kind, ws))

    # Keep-alive connections count as well.
    idle = []
    for _ in range(PER_ADDRESS):
        client = await RawClient.open(server.url, "127.0.0.4")
        assert (await client.request("GET", "/races")).status == 200
        idle.append(client)
    client = await RawClient.open(server.url, "127.0.0.4")
    assert (await client.request("GET", "/races")).code == "too_many_connections"
    client.close()
    for client in idle:
        client.close()
    for _, ws in held:
        await ws.close()  # type: ignore[union-attr]
    assert (await refusals(server))["too_many_connections"] == 3


async def test_behind_a_trusted_proxy_the_forwarded_client_is_counted(server: LiveServer) -> None:
    race = (await create_race(server, seats=2)).race.id
    streams = []

    async def stream(forwarded: str) -> tuple[int, str | None]:
        client = await RawClient.open(server.url, PROXY)
        await client.send(head("GET", f"/races/{race}/events", {"x-forwarded-for": forwarded}))
        answer = await client.answer(body=False)
        if answer.status == 200:
            streams.append(client)
        else:
            client.close()
        return answer.status, answer.code

    # The proxy's own sockets are not capped (it carries many clients): each client it names is.
    assert [await stream("198.51.100.7") for _ in range(PER_ADDRESS)] == [(200, None)] * PER_ADDRESS
    assert await stream("198.51.100.7") == (429, "too_many_connections")
    assert await stream("198.51.100.8") == (200, None)
    # A WebSocket through the proxy counts against the same forwarded address.
    outcome, _ = await spectate(server.ws_url, race, PROXY, headers={"x-forwarded-for": "198.51.100.7"})
    assert outcome == "refused too_many_connections"
    streams.pop(0).close()

    async def counted_out() -> bool:
        outcome, ws = await spectate(server.ws_url, race, PROXY, headers={"x-forwarded-for": "198.51.100.7"})
        if ws is not None:
            await ws.close()
        return outcome == "welcome"

    await eventually(counted_out, "the closed stream's place to come back to its client")
    for client in streams:
        client.close()
