"""A request's way to the race service: the service the app's lifespan set, and the client address a
request's limits count against. Here, in the race layer, so handlers above it (accounts, matchmaking,
events) reach the service without importing server/answers.py."""

from __future__ import annotations

from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.websockets import WebSocket

if TYPE_CHECKING:
    from .service import Service


def service_of(request: Request | WebSocket) -> "Service":
    """The process's service (set on the app by its lifespan)."""
    return request.app.state.service  # type: ignore[no-any-return]


def client_of(request: Request) -> str:
    """The client address a request's limits count against (the socket peer, or behind a trusted
    proxy the address it names: see ``server/ops/limits.py``)."""
    return service_of(request).client_of(request.client.host if request.client else None, request.headers)
