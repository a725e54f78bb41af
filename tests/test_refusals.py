"""The one exception tree for refusals (shared/protocol/errors.py) and its one mapping to HTTP answers
(server/ops/http.py): every refusal class is a ``Refusal``, each code's status is the one
docs/protocol.md gives, and a handler that raises one is answered with the documented JSON body.

In-process unit checks (a Starlette app driven through httpx's ASGI transport); the endpoints' own refusals are
checked over real sockets by the HTTP tests (test_players_http.py, test_challenges.py, test_daily.py...)."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from server.ops.http import json_body, json_response, refusal_answer
from server.deals.checked import RETRY_POOL_SECONDS, PoolUnavailable
from server.accounts.keys import BadKey
from server.race.rules import CreateError, CreateLimited
from server.race.session import Refused
from server.race.tokens import TokenError
from server.store.accounts import RegisterRefused
from server.store.challenges import ChallengeRefused
from server.store.limits import Limited
from server.store.records import HintRefused, StoreError
from shared import protocol as p
from shared.names import NameRefused

DOC = (Path(__file__).resolve().parent.parent / "docs" / "protocol.md").read_text()


def _documented_statuses() -> dict[str, set[int]]:
    """Each error code's HTTP statuses as the codes table of docs/protocol.md writes them ("HTTP 409")."""
    found: dict[str, set[int]] = {}
    for code, words in re.findall(r"^\| `([a-z_]+)` \| (.*)\|$", DOC, re.M):
        if code in {c.value for c in p.ErrorCode}:
            found.setdefault(code, set()).update(int(s) for s in re.findall(r"HTTP (\d{3})", words))
    return found


def test_each_code_is_answered_with_the_status_the_doc_gives() -> None:
    documented = _documented_statuses()
    assert len(documented) > 50, "the codes table was found"
    for code, statuses in documented.items():
        if statuses:
            assert p.http_status(code) in statuses, code
    for code in p.HTTP_STATUS:
        assert code.value in documented, f"{code.value} has a status but no line in the codes table"


@pytest.mark.parametrize("kind", [StoreError, HintRefused, ChallengeRefused, Limited, RegisterRefused, Refused,
                                  p.CodedError, p.ProtocolError, CreateError, CreateLimited, PoolUnavailable,
                                  BadKey, NameRefused, TokenError])
def test_every_refusal_is_one_of_the_tree(kind: type) -> None:
    assert issubclass(kind, p.Refusal)


def test_a_refusal_says_its_code_its_words_and_its_status() -> None:
    plain = p.Refusal(p.ErrorCode.RACE_NOT_FOUND)
    assert (plain.value, plain.message, plain.status, plain.retry_after) == (
        "race_not_found", p.explain("race_not_found"), 404, None)
    assert str(plain) == plain.message and plain.body() == {"code": "race_not_found", "message": plain.message}
    told = p.Refusal(p.ErrorCode.BAD_VARIANT, "no game is named 'x'", status=404)
    assert (told.message, told.status) == ("no game is named 'x'", 404)
    store = StoreError("race_closed")
    assert (store.code, store.value, store.status, store.message) == (
        "race_closed", "race_closed", 400, p.explain("race_closed"))
    assert Refused(p.ErrorCode.HELLO_REQUIRED).code == "hello_required", "a Refused's code stays text"
    assert p.Refusal("no_such_word").status == 400, "a word that is no ErrorCode is a plain 400"


def test_limits_and_an_empty_pool_say_when_to_come_back() -> None:
    assert Limited("create_rate_limited", 2_100).retry_after == 3
    assert Limited("lobbies_full", 0).status == 503
    assert PoolUnavailable(p.ErrorCode.POOL_EMPTY, "none").retry_after == RETRY_POOL_SECONDS
    assert PoolUnavailable(p.ErrorCode.NO_POOL, "cannot").retry_after is None
    limited = CreateLimited(p.ErrorCode.TOO_MANY_LOBBIES, "wait", 7)
    assert (limited.status, limited.retry_after, limited.code) == (429, 7, p.ErrorCode.TOO_MANY_LOBBIES)


async def _raising(request: Request) -> Response:
    kind = request.query_params["kind"]
    if kind == "limited":
        raise CreateLimited(p.ErrorCode.CREATE_RATE_LIMITED, "the next in 2.0 s", 2)
    if kind == "store":
        raise StoreError("event_closed")
    if kind == "body":
        await json_body(request, p.Register)
    return json_response({"ok": True})


def _client() -> httpx.AsyncClient:
    app = Starlette(routes=[Route("/", _raising, methods=["GET", "POST"])],
                    exception_handlers={p.Refusal: refusal_answer})
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test")


async def test_a_raised_refusal_is_answered_with_the_documented_body() -> None:
    async with _client() as client:
        await _check_raised(client)


async def _check_raised(client: httpx.AsyncClient) -> None:
    answer = await client.get("/?kind=limited")
    assert answer.status_code == 429 and answer.headers["retry-after"] == "2"
    assert answer.headers["content-type"] == "application/json"
    assert answer.content == b'{"code":"create_rate_limited","message":"the next in 2.0 s"}'
    answer = await client.get("/?kind=store")
    assert answer.status_code == 409 and "retry-after" not in answer.headers
    assert answer.json() == {"code": "event_closed", "message": p.explain("event_closed")}
    assert (await client.get("/?kind=none")).json() == {"ok": True}


async def test_a_bad_body_is_refused_by_the_same_mapping() -> None:
    async with _client() as client:
        for body, code in ((b"{nope", "bad_frame"), (b'{"name": 7}', "bad_field"), (b"[" * 40 + b"]" * 40, "bad_frame")):
            answer = await client.post("/?kind=body", content=body)
            assert answer.status_code == 400 and answer.json()["code"] == code, body
