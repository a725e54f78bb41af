"""Presence leases: this process renews its place in the listening sets of the races it serves and the
leases of its players, and frees a lobby seat once its player's last connection has been gone a lease.

Why its own part: a seat is freed, and a dead process's players stop counting as connected, by these
leases alone (docs/protocol.md, "Seats"); they need the hubs here, the store and the lease's length.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from ..ops.log import log
from ..store import UNAVAILABLE, Store, StoreError
from .clock import now_ms
from .ending import Background
from .keyholders import KeyHolders
from .listening import Hubs

FREE_SLACK_SECONDS = 0.05
"""How long after a lobby seat's lease has run out its process looks (the lease is measured from the
close, on the same clock): the seat is freed that much past the lease."""


class Leases:
    """This process's presence leases and the timers that free its lobby seats."""

    def __init__(self, lease: float, store: Store, hubs: Hubs[Any], keys: KeyHolders, background: Background) -> None:
        self.lease = lease
        """Seconds (``--presence-lease``)."""
        self._store = store
        self._hubs = hubs
        self._keys = keys
        self._background = background
        self._freeing: dict[str, asyncio.TimerHandle] = {}
        """Lobbies where a player's last connection here closed: when to look at their seats again."""
        self.stopping = False

    @property
    def lease_ms(self) -> int:
        return int(self.lease * 1000)

    def expiry(self) -> int:
        """When a lease renewed now runs out (server clock, ms)."""
        return now_ms() + self.lease_ms

    async def heartbeat(self) -> None:
        """Renew this process's place in the listening sets of the races it listens to, and the presence
        leases of its players; expire those of dead processes;
        free the lobby seats whose connections have been gone for the lease; close the connections
        whose account key was replaced (should the pub/sub news have been lost)."""
        expiry, now = self.expiry(), now_ms()
        await self._hubs.subscriber.renew(now)
        # Every race at once: their calls go to Redis in one round trip (the store's batcher), not one each.
        beats = await asyncio.gather(*(
            self._store.heartbeat(race, [(c.seat, c.gen, c.member) for c in hub.conns if c.seat is not None
                                         and c.member], expiry, now, self.lease_ms)
            for race, hub in list(self._hubs.by_race.items())), return_exceptions=True)
        failed = next((beat for beat in beats if isinstance(beat, BaseException)), None)
        if failed is not None:
            raise failed
        await self._keys.check()

    def free_after_lease(self, race: str) -> None:
        """A player's connection to the lobby ``race`` closed here: once the presence lease has run out
        from now, free its seat if no connection came back (docs/protocol.md, "Seats").

        Why a timer: the heartbeat frees only seats of races this process still serves, and with the
        last connection gone the hub is gone too; the janitor's sweep (every lobby TTL/4, up to 30 s)
        then freed a 3 s lease 23-25 s late (issue 22). The janitor stays the fallback when this
        process dies before its timer fires."""
        if self.stopping:
            return
        old = self._freeing.pop(race, None)
        if old is not None:
            old.cancel()
        self._freeing[race] = asyncio.get_running_loop().call_later(
            self.lease + FREE_SLACK_SECONDS, self._free_now, race)

    def _free_now(self, race: str) -> None:
        self._freeing.pop(race, None)
        self._background.spawn(self._free_stale(race))

    async def _free_stale(self, race: str) -> None:
        try:
            if freed := await self._store.free_stale(race, now_ms(), self.lease_ms):
                log("seats_freed", race=race, seats=freed, why="lease")
        except StoreError:
            pass  # the race is gone
        except UNAVAILABLE as exc:  # the janitor sweeps later
            log("seats_free_failed", logging.WARNING, race=race, error=exc)

    def stop(self) -> None:
        self.stopping = True
        for handle in self._freeing.values():
            handle.cancel()
