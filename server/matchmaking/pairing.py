"""The pairing waves of the seek pools: every :attr:`MatchmakingSettings.seek_wave` seconds each process ticks every
pool, and the one that claims the pool's wave number in Redis (store/seeks.py) pairs that wave, holding
the pool's pairing lease so that no other process pairs it meanwhile (docs/protocol.md "Seeks"; the
whole story is in seeks.py's docstring).

Why apart from the seeks a process's connections hold (seeks.py): a wave pairs every seek of a pool,
whichever process holds it, and needs the races' side (making the race, seating, signing) where the
waiting needs the connections' side; it takes those collaborators, not the process.
"""

from __future__ import annotations

import logging
import secrets
import time
from dataclasses import dataclass
from typing import Awaitable, Callable

from shared import protocol as p
from shared import seeks as rule
from shared.variants import get_variant

from ..config import MatchmakingSettings
from ..deals.checked import CheckedDeal, CheckedPool
from ..ops.log import log
from ..ops.metrics import Metrics
from ..race.clock import now_ms
from ..race.creation import RaceMaker
from ..race.tokens import PLAYER, Signer
from ..store import Store
from ..store.accounts import AccountStore
from ..store.records import FormedRace, SeekEntry
from ..store.seeks import SeekStore
from .seeks import ALIVE_MS, PRESENT_MS

LEASE_MS = 2_000
"""Shortest pairing lease (ten waves when longer): a pairing slowed by a busy machine keeps its pool, and a
process that died pairing holds it no longer."""


@dataclass(eq=False)
class Pairing:
    """Pairs the seek pools whose waves this process claims."""

    settings: MatchmakingSettings
    token_ttl: int
    """``--token-ttl``: the seated players' tokens last as long as any player's."""
    seeks: SeekStore
    races: Store
    maker: RaceMaker
    signer: Callable[[], Signer]
    accounts: AccountStore
    checked: CheckedPool
    metrics: Metrics
    let_go: Callable[[SeekEntry], Awaitable[None]]
    """What ends a seek that left its pool (seeks.py ``Seeks.let_go``): its player may seek again."""

    async def wave(self) -> None:
        """Pair the pools whose wave this process claims (every process ticks; one pairs each wave, and
        no two pairings of a pool overlap: the claim is a lease, renewed by each placement)."""
        wave_ms = max(1, int(self.settings.seek_wave * 1000))
        number = now_ms() // wave_ms
        lease_ms = max(10 * wave_ms, LEASE_MS)
        for name in await self.seeks.pools():
            started = time.process_time()
            lease = ""
            try:
                pool = rule.Pool.parse(name)
                if await self._idle(pool):
                    continue
                lease = secrets.token_hex(8)
                if not await self.seeks.claim_wave(name, number, lease_ms, lease):
                    lease = ""  # (not ours: nothing to give back)
                    continue
                await self._pair(pool, lease, lease_ms)
            finally:
                self.metrics.seek_cpu_seconds += time.process_time() - started
                if lease:
                    await self.seeks.wave_done(name, lease)

    async def _idle(self, pool: rule.Pool) -> bool:
        """Whether the pool has nothing for a wave: too few seeks to form a race, none to drop, no race
        forming to settle (one round trip, before any claim: a pool where one player waits must not cost
        a pairing every wave). A pool nobody waits in leaves the list."""
        waiting, forming, dead = await self.seeks.census(pool.key, now_ms())
        if dead or forming or waiting >= pool.seats:
            return False
        if not waiting:
            await self.seeks.drop_if_idle(pool.key)
        return True

    async def _pair(self, pool: rule.Pool, lease: str, lease_ms: int) -> None:
        now = now_ms()
        for dead in await self.seeks.drop_dead(pool.key, now):
            self.metrics.seek_events["dropped"] += 1
            await self.let_go(dead)
            log("seek_dropped", pool=pool.key, seek=dead.id, why="nobody vouched for it")
        await self._settle(pool, now)
        checked = now_ms()  # before the keys are read: this wave's tokens are given as of then (_keys_current)
        entries = await self._keys_current({e.id: e for e in await self.seeks.waiting(pool.key)}, pool)
        if not entries:
            await self.seeks.drop_if_idle(pool.key)
            return
        present = await self.seeks.present(pool.key, now_ms() + ALIVE_MS - PRESENT_MS)
        entries = {i: e for i, e in entries.items() if i in present}
        now = max([checked, *(e.since for e in entries.values())])  # (a seek of another process's clock)
        seekers = [rule.Seeker(e.id, e.rating, e.since, e.shy) for e in entries.values()]
        for group in rule.form(seekers, pool.seats, now):
            if not await self._place(pool, [entries[s.id] for s in group], rule.bound(group, now), now,
                                     lease, lease_ms):
                return

    async def _keys_current(self, entries: dict[str, SeekEntry], pool: rule.Pool) -> dict[str, SeekEntry]:
        """The entries less the seeks made with an account key that has been replaced since, which leave
        the pool here. Their connections are closed (4008) when the news of the key reaches their process
        (KeyHolders), but a wave may come first, and a race formed then would seat whoever held the old
        key as the account; the tokens of a race formed after this read are older than any replacement
        it missed (:meth:`_pair` gives them as of before this read), and a token older than the key seats
        nobody without the new key (connection._claim)."""
        keyed = [e for e in entries.values() if e.account is not None]
        if not keyed:
            return entries
        hashes = await self.accounts.key_hashes([e.account for e in keyed if e.account is not None])
        for e, current in zip(keyed, hashes):
            if current != e.key_hash:
                del entries[e.id]
                kind, _ = await self.seeks.cancel(pool.key, e.id)
                if kind == "cancelled":
                    await self.let_go(e)
                    log("seek_key_replaced", pool=pool.key, seek=e.id, who=e.who)
        return entries

    async def _place(self, pool: rule.Pool, members: list[SeekEntry], gap: int, now: int, lease: str,
                     lease_ms: int) -> bool:
        """Make the group's race, seat its members, and place them (or, if one left meanwhile, remove it);
        False when this pairing lost the pool's lease (it ran out: another process may pair the pool now)."""
        deal = await self._deal(pool.variant)
        # The seats are all taken here, so nobody else can join; the members without an account are
        # "" entrants (they come back by their seat's token, never join afresh).
        meta = await self.maker.create_for([m.account or "" for m in members], deal, pool.time_limit, "all-ready", "",
                                    rated=pool.rated)
        join_by = now + int(self.settings.seek_join * 1000)
        home0 = get_variant(pool.variant).home_at_start
        seats = []
        for m in members:
            seated = await self.races.join(meta.id, m.name, home0, f"seek.{m.id}", join_by, now, m.account)
            token = self.signer().sign(PLAYER, meta.id, seated.seat, now + self.token_ttl * 1000, seated.gen)
            seats.append((seated.seat, token))
        names, ratings = [m.name for m in members], [m.rating for m in members]
        matches = [p.Matched(pool=pool.key, seek=m.id, race=meta.id, code=meta.code, seat=seat, token=token,
                             join_by=join_by, names=names, ratings=ratings, gap=gap, waited_ms=max(0, now - m.since))
                   for m, (seat, token) in zip(members, seats)]
        placed = await self.seeks.match(pool.key, FormedRace(race=meta.id, members=members), join_by, matches,
                                        lease, lease_ms)
        if placed != 1:
            fresh = await self.races.meta(meta.id)
            if fresh is not None:
                await self.races.abandon(fresh, now_ms(), 0)
            log("seek_group_lost" if placed == 0 else "seek_wave_overrun", pool=pool.key, race=meta.id)
            return placed == 0
        self.metrics.seek_events["races"] += 1
        self.metrics.seek_events["placed"] += len(members)
        log("seek_race", pool=pool.key, race=meta.id, code=meta.code, players=len(members), gap=gap,
            spread=max(ratings) - min(ratings), checked=meta.checked)
        return True

    async def _deal(self, variant: str) -> CheckedDeal:
        """A checked deal when one is ready in the private pool (never a wait for the solver: players are
        waiting), else a secret random number."""
        if self.settings.seek_deals == "pool":
            found = await self.checked.pop_ready(variant)
            if found is not None:
                return found
        return CheckedDeal(variant, secrets.randbelow(p.MAX_WIRE_DEAL) + 1, ())

    async def _settle(self, pool: rule.Pool, now: int) -> None:
        """The pool's formed races: started ones release their seeks; at the join deadline, one still in
        the lobby goes, its no-shows are counted and dropped, the others wait again."""
        store = self.races
        for formed, deadline in await self.seeks.formed(pool.key):
            meta = await store.meta(formed.race)
            if meta is not None and meta.status == "lobby":
                if now < deadline:
                    continue
                came = [await store.player(formed.race, s) for s in range(meta.players)]
                ready = {pl.account or pl.name for pl in came if pl is not None and pl.status == "ready"}
                if not await store.abandon(meta, now, 0):
                    continue  # it started (or changed) meanwhile: the next wave sees it
                back = [m for m in formed.members if (m.account or m.name) in ready]
            else:
                back = []
            if not await self.seeks.settle(pool.key, formed, back, now):
                continue
            for m in formed.members:
                if m in back:
                    self.metrics.seek_events["requeued"] += 1
                    continue
                await self.let_go(m)
                if meta is not None and meta.status == "lobby":
                    shy = await self.seeks.mark_shy(m.who)
                    self.metrics.seek_events["no_show"] += 1
                    log("seek_no_show", logging.WARNING, pool=pool.key, race=formed.race, who=m.who, times=shy)
