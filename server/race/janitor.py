"""The janitor: what no connection is there to do. Lobbies nobody started in time are removed, races
whose end is due unattended are ended (or their end, stopped partway, finished), lobby seats of races no
hub here serves are freed, and the open-lobby set is repaired; and after each outage of Redis this
process saw, the races whose end is due are looked for at once (:meth:`Janitor.after_outage`).

Why its own part: it is the fallback for every timer a dead process took with it, and needs only the
store, the lobby settings, which races have a hub here, and how to end a race.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Awaitable, Callable, Container

from ..ops.log import log
from ..store import CreationLimits, RaceMeta, Store
from .clock import now_ms


@dataclass(eq=False)
class Janitor:
    """Sweeps the active races every :attr:`interval` seconds."""

    store: Store
    creations: CreationLimits
    lobby_ttl: int
    lease_ms: int
    served: Container[str]
    """The races this process has a hub for (a hub's heartbeat frees its own seats)."""
    end_race: Callable[[str], Awaitable[bool]]
    _outages_seen: int = field(default=0, init=False)

    @property
    def interval(self) -> float:
        """How often stale races are looked for: a few times per lobby TTL, at most every 30 s."""
        return max(0.2, min(30.0, self.lobby_ttl / 4))

    async def sweep(self) -> None:
        """Remove lobby races nobody started in time; end races whose end is due unattended (their time
        ran out, or every player is done and the process that stored the last of them failed to end
        it: ``Endings.end_soon``); drop open-lobby entries of races that are no longer lobbies (store/limits.py)."""
        ids = await self.store.active_ids()
        now = now_ms()
        ttl_ms = self.lobby_ttl * 1000
        metas = await self.store.metas(ids)
        for rid, meta in zip(ids, metas):
            if meta is None:
                await self.store.forget(rid)
            elif meta.status == "lobby" and now >= meta.created_at + ttl_ms:
                if await self.store.abandon(meta, now, ttl_ms):
                    log("race_abandoned", race=rid, players=meta.players, lobby_ttl=self.lobby_ttl)
            elif meta.status == "lobby" and rid not in self.served:  # (a hub's heartbeat frees its own)
                if freed := await self.store.free_stale(rid, now, self.lease_ms):
                    log("seats_freed", race=rid, seats=freed, why="lease")
            elif _end_owed(meta, now):
                await self.end_race(rid)
        # Lobbies still young enough to stay; the open-lobby set may keep only those (and new ones).
        lobbies = [rid for rid, meta in zip(ids, metas) if meta and meta.status == "lobby"
                   and now < meta.created_at + ttl_ms]
        if await self.creations.repair(lobbies, now):
            log("open_lobbies_repaired", lobbies=len(lobbies))

    async def after_outage(self) -> None:
        """Once Redis answers again after an outage this process saw (:attr:`Store.outages`), end every
        race whose end is due, or finish an end that stopped partway: the ends an outage left undone.

        Why not wait for :meth:`sweep`: it runs every lobby TTL/4, up to 30 s, and a race whose last
        player finished while Redis was away (the process never heard ``race_done``), or whose end
        stopped after its script, must end within seconds of Redis's return. Why only after an
        outage: reading every active race's meta every second would cost as much as the sweep, always.
        Every process that saw the outage scans: the ends are idempotent (server/race/ending.py)."""
        outages = self.store.outages
        if outages == self._outages_seen:
            return
        # One quick PING first: while Redis is still away it fails at once (the scan's reads would each
        # retry for most of a second), and once it answers it clears Store.down, so that the next
        # outage counts as one even in a process no frame nor health check has pinged since.
        await self.store.ping()
        ids = await self.store.active_ids()
        now = now_ms()
        for rid, meta in zip(ids, await self.store.metas(ids)):
            if meta is not None and _end_owed(meta, now):
                await self.end_race(rid)
        self._outages_seen = outages  # (only once every due race was ended: a failure scans again)


def _end_owed(meta: RaceMeta, now: int) -> bool:
    """An active race whose end is due (time up, or every player done and the one who ended it gone
    first or failed), or finished but still active (its end stopped partway: server/store/race_life.py)."""
    return meta.due_to_end(now) or meta.status == "finished"
