"""A request's way to the events side (server/compose.py builds it; the app's lifespan sets it). Here,
in the events layer, so the event handlers do not import server/answers.py."""

from __future__ import annotations

from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.websockets import WebSocket

if TYPE_CHECKING:
    from .tournaments import Tournaments


def tournaments_of(request: Request | WebSocket) -> "Tournaments":
    """The process's events side (server/compose.py; set on the app by its lifespan)."""
    return request.app.state.tournaments  # type: ignore[no-any-return]
