"""The lobby's frames (``seek``, ``seek_cancel``) as the race connection hands them on.

Why a handler of their own: matchmaking sits above races (server/players/seeks.py imports the race
layer, never the other way), and a connection that waits on a seek is a lobby socket, not a race's
(lila-ws keeps the two apart too). The composition root (server/compose.py) gives the connection
something that answers these frames; the connection knows only this protocol.
"""

from __future__ import annotations

from typing import Protocol

import msgspec

from shared import protocol as p

from .hub import Listener


class LobbyConnection(Listener, Protocol):
    """What the lobby needs of a connection: a hub's listener (it shares a key's fate: KeyHolders) that
    also sends messages."""

    def send_msg(self, msg: msgspec.Struct) -> None: ...


class LobbyFrames(Protocol):
    """Handles a race connection's lobby frames; refusals are raised as ``session.Refused``."""

    async def seek(self, conn: LobbyConnection, msg: p.Seek, client: str) -> None:
        """Wait in a seek pool on ``conn`` (refused if it waits already)."""

    async def cancel(self, conn: LobbyConnection, msg: p.SeekCancel) -> bool:
        """Answer ``seek_cancelled``; True if ``conn`` no longer waits on a seek."""

    async def gone(self, conn: LobbyConnection) -> None:
        """``conn`` closed: its seek, if any, is dropped (never raises)."""
