"""What every HTTP handler shares: JSON answers in the wire's own types, the one answer to a refusal, the
service.

A handler returns its answer or raises a :class:`shared.protocol.Refusal` (as Starlette's own handlers
raise ``HTTPException``); :func:`refusal_answer`, registered on the app, turns every refusal into the JSON
error body docs/protocol.md documents, with its status and ``Retry-After``. So no handler checks whether
a helper gave it a value or an answer, and no layer below translates one error class into another."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

import msgspec
from starlette.requests import Request
from starlette.responses import Response
from starlette.websockets import WebSocket

from shared import protocol as p

if TYPE_CHECKING:
    from .compose import Tournaments
    from .race.service import Service

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
