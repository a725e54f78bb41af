"""What a race connection may ask of its WebSocket below Starlette, as an interface: the transport
(server/transport/websocket.py) puts a :class:`Backlog` in the ASGI scope's extensions under :data:`BACKLOG`.

Why apart from the transport: the race layer uses it (a slow reader is measured by what its TCP has not
acknowledged; frames are read and sent without the ASGI round trips), and the race layer sits below the
transport, which subclasses uvicorn's protocol (docs in websocket.py).
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable, Protocol

BACKLOG = "thieves.backlog"
"""Key of the connection's :class:`Backlog` in ``scope["extensions"]``."""


class Backlog(Protocol):
    """Bytes a connection wrote that its client has not taken yet, a way to drop it, and a direct send
    (server/transport/websocket.py's ``Backlog`` says how)."""

    def wrote(self, n: int) -> None: ...
    def send_now(self, data: bytes) -> bool: ...
    def send_all_now(self, frames: list[bytes]) -> bool: ...
    def read_frames(self, take: Callable[[bytes], bool] | None = None) -> None: ...
    def receive(self) -> Awaitable[Any]: ...
    def at_most(self) -> int: ...
    def unacknowledged(self) -> int: ...
    def drop_after(self, seconds: float) -> None: ...
