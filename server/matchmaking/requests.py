"""A request's way to the seek pools (server/compose.py builds them; the app's lifespan sets them). Here, in
the matchmaking layer, so that the race service does not carry a part of the layer above it."""

from __future__ import annotations

from starlette.requests import Request

from .seeks import Seeks


def seeks_of(request: Request) -> Seeks:
    """The process's seek pools (``GET /seeks``, the front page, ``/metrics``)."""
    return request.app.state.seeks  # type: ignore[no-any-return]
