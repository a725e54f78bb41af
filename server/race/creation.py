"""Making races: a client's lobby race (checked, admitted against its address's creation limits, then
stored with its creator token), a race the server makes for given accounts, and starting those.

Why its own part: creation is the one place the creation limits, the checked-deal pool and the signer
meet; it takes those and the settings it reads, not the process.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Callable

from shared import protocol as p

from ..config import RaceSettings
from ..deals.checked import CheckedDeal, CheckedPool, PoolUnavailable
from ..ops.log import SummedLog, log
from ..ops.metrics import Metrics
from ..store import UNAVAILABLE, CreationLimits, CreationSettings, Limited, RaceMeta, Store, StoreError, retry_after
from . import rules as races
from .clock import now_ms
from .tokens import Signer


def creation_settings(races: RaceSettings, checked_wait: float) -> CreationSettings:
    """The creation limits of ``races`` in the store's units; ``checked_wait`` is ``--checked-wait``."""
    return CreationSettings(
        burst=races.create_burst, interval_ms=races.create_interval * 1000,
        per_address=races.lobbies_per_address, total=races.lobbies_max, ttl_ms=races.lobby_ttl * 1000,
        # A reserved id may lack its race while a pool race solves its deal (up to --checked-wait).
        grace_ms=int((checked_wait + 60) * 1000),
    )


@dataclass(eq=False)
class RaceMaker:
    """Creates and starts races for this process."""

    settings: RaceSettings
    store: Store
    checked: CheckedPool
    creations: CreationLimits
    metrics: Metrics
    signer: Callable[[], Signer]
    """The process's signer (made at start: its secret may be read from Redis)."""
    log_refused: SummedLog = field(default_factory=lambda: SummedLog("create_refused"))
    """A client refused in a loop writes a line a minute, not a line each."""

    async def create_race(self, req: p.Create, client: str) -> tuple[RaceMeta, str]:
        """A new lobby race of ``client`` (an address) and its creator token; raises races.CreateError
        (races.CreateLimited when a creation limit refuses: then nothing was written).

        A pool race takes its deal from the private pool only once the
        request is known to be good and admitted, and keeps it across join
        code collisions; a creation that fails after admission gives its
        lobby places back, not its token (store/limits.py).
        """
        variant = races.check_request(req)
        race_id = races.new_id()
        await self.admit_creation(client, race_id)
        try:
            meta, token = await self._create(req, variant.key, race_id)
        except BaseException:
            try:
                await self.creations.release(client, race_id)
            except UNAVAILABLE as exc:  # the reservation then lapses by itself
                log("create_release_failed", logging.WARNING, client=client, race=race_id, error=exc)
            raise
        return meta, token

    async def admit_creation(self, client: str, place: str) -> None:
        """Count a creation against ``client``'s limits (a token, a lobby place named ``place``, a place in
        the total): a race's (its id), or a seek's (``limits.seek_place``: it may become a race); raises
        races.CreateLimited (then nothing was written)."""
        try:
            await self.creations.admit(client, place)
        except Limited as exc:
            raise self._refused(client, exc) from None

    async def spend_creation(self, client: str) -> None:
        """One token of ``client``'s creation bucket for a server-made race it asked for (the first play
        of a daily deal, which may set the solver working); raises races.CreateLimited."""
        try:
            await self.creations.spend(client)
        except Limited as exc:
            raise self._refused(client, exc) from None

    def _refused(self, client: str, exc: Limited) -> races.CreateLimited:
        """Count and log a refusal; the client's answer to it: which limit, and when to come back."""
        self.metrics.creations_refused[exc.code] += 1
        self.log_refused(last_client=client, code=exc.code, wait_ms=exc.wait_ms)
        cfg, wait = self.settings, exc.wait_ms / 1000
        code = p.ErrorCode(exc.code)
        if code is p.ErrorCode.CREATE_RATE_LIMITED:
            why = (f"an address may create {cfg.create_burst} races (or daily plays, or seeks) at once, then one "
                   f"every {cfg.create_interval:g} s: the next in {wait:.1f} s")
        elif code is p.ErrorCode.TOO_MANY_LOBBIES:
            why = (f"this address has {cfg.lobbies_per_address} races waiting in the lobby (a seek counts as one "
                   f"until its race starts): start one, or retry in {wait:.0f} s at the latest (the oldest is "
                   "removed then)")
        else:
            why = (f"{cfg.lobbies_max} races wait in the lobby on this server (seeks included): retry in "
                   f"{wait:.0f} s at the latest")
        return races.CreateLimited(code, why, retry_after(exc.wait_ms))

    async def _create(self, req: p.Create, variant: str, race_id: str) -> tuple[RaceMeta, str]:
        checked = None
        if req.deal_source == "pool":
            try:
                checked = await self.checked.take(variant)
            except PoolUnavailable as exc:
                raise races.CreateError(exc.code, str(exc), retry_after=exc.retry_after) from None
        meta = await self._store_new(req, checked, race_id)
        token = self.signer().sign("creator", meta.id, -1, now_ms() + self.settings.token_ttl * 1000)
        log("race_created", race=meta.id, code=meta.code, variant=meta.variant, seats=meta.seats,
            deal_source=meta.deal_source, checked=meta.checked, hints=meta.hints,
            time_limit=meta.time_limit, start_mode=meta.start_mode)
        return meta, token

    async def _store_new(self, req: p.Create, checked: CheckedDeal | None, race_id: str | None = None,
                         **fields: Any) -> RaceMeta:
        """A new race for ``req`` stored, with ``fields`` set on its meta; a fresh code (and id, unless
        one was reserved) after each collision."""
        for _ in range(10):
            meta = races.new_race(req, now_ms(), checked, race_id)
            for name, value in fields.items():
                setattr(meta, name, value)
            if await self.store.create_race(meta):
                return meta
        raise RuntimeError("could not find a free race id")  # pragma: no cover - 10 collisions of 60 bits

    async def create_for(self, entrants: list[str], deal: CheckedDeal, time_limit: int, start_mode: p.StartMode,
                         event: str, rated: bool = False, reveal_at: int = 0, undo: bool = True,
                         hints: bool = False, title: str = "", scheduled_at: int = 0, ends_by: int = 0) -> RaceMeta:
        """A race the server makes (an event's heat, a daily deal's play, an accepted challenge) for
        ``entrants`` only (the only accounts that may join), on a secret deal: a checked deal keeps its
        mark and line (``deal_source`` "pool"), a drawn one is "random" and a chosen one "number", none
        of them shown before the race's reveal (rules.revealed); ``event`` names what it belongs to ("" for none).
        Not counted against any address's creation limits here (a challenge spent its challenger's
        token when it was made). ``title`` and ``scheduled_at`` (when the maker will start it) are the
        maker's words for the race's lobby (RaceInfo); ``ends_by`` the latest it may end (RaceMeta.ends_by)."""
        source: p.DealSource = "pool" if deal.line else "number" if deal.chosen else "random"
        req = p.Create(variant=deal.variant, deal_source=source, deal=deal.deal if source == "number" else None,
                       seats=len(entrants), time_limit=time_limit, start_mode=start_mode, rated=rated, undo=undo,
                       hints=hints)
        meta = await self._store_new(req, deal, event=event, entrants=",".join(entrants),
                                     reveal_at=reveal_at, title=title, scheduled_at=scheduled_at, ends_by=ends_by)
        log("server_race_created", race=meta.id, code=meta.code, tournament=event, entrants=len(entrants))
        return meta

    async def start_races(self, ids: list[str], now: int) -> None:
        """Start these server-made races at once (``start_mode`` creator); one nobody joined stays an
        empty lobby (all no-shows), as does one started already."""
        countdown = int(self.settings.countdown * 1000)
        for race in ids:
            try:
                await self.store.start(race, now, countdown)
            except StoreError as exc:
                # started already / nobody came / a rated race only one entrant came to
                if exc.code not in ("race_closed", "forbidden", "not_enough_players"):
                    raise
