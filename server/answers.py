"""What every HTTP handler shares: JSON answers in the wire's own types, typed errors, the service."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

import msgspec
from starlette.requests import Request
from starlette.responses import Response
from starlette.websockets import WebSocket

from shared import protocol as p

from .race.rules import CreateError, CreateLimited

if TYPE_CHECKING:
    from .events.tournaments import Tournaments
    from .race.service import Service

_json = msgspec.json.Encoder()
_T = TypeVar("_T")

RETRY_POOL_SECONDS = 5
"""Retry-After of a ``pool_empty`` answer: the filler adds a deal every few seconds."""


def json_response(data: Any, status: int = 200) -> Response:
    return Response(_json.encode(data), status_code=status, media_type="application/json")


def error_response(code: p.ErrorCode, status: int, message: str | None = None) -> Response:
    return json_response({"code": code.value, "message": message or code.explanation}, status)


async def json_body(request: Request, into: type[_T]) -> _T | Response:
    """The request's JSON body as ``into``, or the 400 that says why not (``bad_frame``: not JSON, or
    nested deeper than the WebSocket allows; ``bad_field``). Every handler that takes a body reads it
    here, so none meets a body the frame rules would refuse (nor recurses on a deep one)."""
    try:
        return p.decode_json(await request.body(), into)
    except p.ProtocolError as exc:
        return error_response(exc.code, 400, str(exc))


def bearer(request: Request) -> str | None:
    """The request's ``Authorization: Bearer`` token (an account key or the organiser token), if any."""
    scheme, _, value = request.headers.get("authorization", "").partition(" ")
    return value.strip() if scheme.lower() == "bearer" and value.strip() else None


def client_of(request: Request) -> str:
    """The client address a request's limits count against (the socket peer, or behind a trusted
    proxy the address it names: see ``server/ops/limits.py``)."""
    return service_of(request).client_of(request.client.host if request.client else None, request.headers)


def service_of(request: Request | WebSocket) -> "Service":
    """The process's service (set on the app by its lifespan)."""
    return request.app.state.service  # type: ignore[no-any-return]


def tournaments_of(request: Request | WebSocket) -> "Tournaments":
    """The process's events side (server/compose.py; set on the app by its lifespan)."""
    return request.app.state.tournaments  # type: ignore[no-any-return]


def creation_refused(exc: CreateError) -> Response:
    """The HTTP answer to a refused creation (``POST /races``, ``POST /daily/{variant}``): the retryable
    refusals (a limit, an empty pool) say when to come back."""
    if isinstance(exc, CreateLimited):
        retry, status = exc.retry_after, 503 if exc.code is p.ErrorCode.LOBBIES_FULL else 429
    elif exc.code is p.ErrorCode.POOL_EMPTY:
        retry, status = RETRY_POOL_SECONDS, 503
    else:
        return error_response(exc.code, 400, str(exc))
    response = error_response(exc.code, status, str(exc))
    response.headers["Retry-After"] = str(retry)
    return response


SECURITY_HEADERS: list[tuple[bytes, bytes]] = [
    (b"content-security-policy", b"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                                 b"object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
]
"""On every answer (OWASP's secure headers): the pages run only their own scripts and styles (no
inline ones, nothing from elsewhere), no answer is sniffed into another type, no page is framed,
and no address of ours leaks to a site a page links to."""
