"""The HTTP plumbing every handler shares, below every layer that has handlers: JSON answers in the
wire's own types, the request body read by the frame rules, the bearer token, and the one answer to a
refusal.

A handler returns its answer or raises a :class:`shared.protocol.Refusal` (as Starlette's own handlers
raise ``HTTPException``); :func:`refusal_answer`, registered on the app, turns every refusal into the JSON
error body docs/protocol.md documents, with its status and ``Retry-After``. So no handler checks whether
a helper gave it a value or an answer, and no layer below translates one error class into another.
Here, not in server/answers.py, so the handlers of accounts, matchmaking and events import nothing above
their layer."""

from __future__ import annotations

from typing import Any, TypeVar

import msgspec
from starlette.requests import Request
from starlette.responses import Response

from shared import protocol as p

_json = msgspec.json.Encoder()
_T = TypeVar("_T")


def json_response(data: Any, status: int = 200) -> Response:
    return Response(_json.encode(data), status_code=status, media_type="application/json")


def refusal_response(refusal: p.Refusal) -> Response:
    """The answer to a refusal: its JSON error body, its status, and ``Retry-After`` when it has one."""
    response = json_response(refusal.body(), refusal.status)
    if refusal.retry_after is not None:
        response.headers["Retry-After"] = str(refusal.retry_after)
    return response


async def refusal_answer(request: Request, exc: Exception) -> Response:
    """The app's exception handler for :class:`shared.protocol.Refusal`: the one mapping to answers."""
    assert isinstance(exc, p.Refusal)
    return refusal_response(exc)


def error_response(code: p.ErrorCode, status: int, message: str | None = None) -> Response:
    """A refusal's answer built in place, for the code outside any handler (the edge, a middleware)."""
    return refusal_response(p.Refusal(code, message, status=status))


async def json_body(request: Request, into: type[_T]) -> _T:
    """The request's JSON body as ``into``; raises :class:`shared.protocol.ProtocolError` (400:
    ``bad_frame``, not JSON or nested deeper than the WebSocket allows; ``bad_field``). Every handler that
    takes a body reads it here, so none meets a body the frame rules would refuse (nor recurses on a deep
    one)."""
    return p.decode_json(await request.body(), into)


def bearer(request: Request) -> str | None:
    """The request's ``Authorization: Bearer`` token (an account key or the organiser token), if any."""
    scheme, _, value = request.headers.get("authorization", "").partition(" ")
    return value.strip() if scheme.lower() == "bearer" and value.strip() else None
