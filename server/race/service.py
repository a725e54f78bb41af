"""The race layer's face to the connections, the hubs and the HTTP handlers: the parts of one server
process that serve races, and the few calls those make of them.

Why a face and not the whole: each job is its own part, taking only what it uses (the hubs and the
subscription: listening.py; making races: creation.py; ending them: ending.py; the leases: leases.py; the
janitor: janitor.py; the periodic loop: periodic.py; key holders: keyholders.py). What this class keeps is
what the connections and hubs share (the store, the signer, the progress ticker, counters) and the
lifetime of the parts (:meth:`start`, :meth:`stop`). The composition root (server/compose.py) builds it
and wires what is built on races (events, matchmaking, accounts' results) to its parts.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import secrets
from typing import Any, Awaitable, Callable, Mapping

from shared import protocol as p

from ..config import Config
from ..deals.checked import CheckedDeal, CheckedPool
from ..deals.hinting import HintRunner
from ..ops.limits import client_address, trusted_networks
from ..ops.log import SummedLogs, log
from ..ops.metrics import Metrics
from ..store import UNAVAILABLE, CreationLimits, Line, RaceMeta, RedisClient, Store
from ..store.accounts import AccountStore
from ..store.challenges import ChallengeStore
from ..store.history import History
from ..store.limits import Bucket
from ..store.replicas import REFRESH_SECONDS, ReplicaAcks
from .creation import RaceMaker, creation_settings
from .ending import Background, Endings
from .hub import HubParts, Listener, ProgressTicker, RaceHub
from .janitor import Janitor
from .keyholders import KeyHolders
from .leases import Leases
from .listening import Hubs
from .periodic import Periodic
from .tokens import Signer

CATCH_UP_SECONDS = 1.0
"""How often each process compares its hubs' versions with Redis's: the longest a lost pub/sub message
can delay a progress frame, a start or an end (one small read per race served here)."""
AFTER_OUTAGE_SECONDS = 1.0
"""How often each process asks whether it saw Redis fail since it last looked for the races whose end is
due (server/race/janitor.py, ``after_outage``): at most this long after Redis is back, they are ended."""
REFUSED_LOG_SECONDS = 60.0
"""A refused frame of each code is logged at most once this often, then summed up (:class:`SummedLogs`):
a client repeating an illegal move or a bad frame as fast as the rate limit lets it must not fill the log."""


class Service:
    """The parts of one server process that serve races."""

    def __init__(self, config: Config, redis: RedisClient, probe: RedisClient | None = None) -> None:
        self.config = config
        races = config.races
        self.redis = redis
        self.metrics = Metrics()
        self.instance = secrets.token_hex(4)
        """Names this process in presence leases and in the races' listening sets (a restarted process is a
        new instance)."""
        self.store = Store(redis, tick_ms=max(1, int(1000 / races.progress_hz)),
                           timer=self.metrics.redis_seconds.observe, probe=probe, instance=self.instance,
                           linger=config.redis.commit_linger_ms / 1000,
                           replicas=ReplicaAcks(config.redis.replica_acks, config.redis.replica_ack_timeout))
        self._signer: Signer | None = None
        self.checked = CheckedPool(self.store, self.metrics, config.deals)
        self.hints = HintRunner(config.deals)
        self.creations = CreationLimits(redis, creation_settings(races, config.deals.checked_wait))
        self.log_refused = SummedLogs("refused", "code", window=lambda: REFUSED_LOG_SECONDS)
        """Log a frame refused on a connection (its code, then the fields of the last one of its window)."""
        self.accounts = AccountStore(redis)
        self.challenges = ChallengeStore(redis)
        self.registrations = Bucket(redis, config.accounts.register_burst,
                                    int(config.accounts.register_interval * 1000))
        """Registrations per client address."""
        self.organiser_failures = Bucket(redis, config.events.organiser_burst,
                                         int(config.events.organiser_interval * 1000))
        """Organiser-token attempts per client address (a right one gives its token back)."""
        self.trusted_proxies = trusted_networks(config.edge)
        self.ticker = ProgressTicker(races.progress_hz)
        """The clock the hubs' progress flushes share (one Redis round trip for the reads of a tick)."""
        self.racer_interval = 1.0 / races.racer_hz
        """Seconds between two progress frames to a race's racers, at least (``--racer-hz``)."""
        self.connections = 0
        self._conn_ids = itertools.count(1)
        self.history = History(redis)
        self.background = Background()
        self.key_holders = KeyHolders(self.accounts)
        self.served: Hubs[RaceHub] = Hubs(self.store, self._new_hub, self.key_holders.replaced)
        self.endings = Endings(self.store, self.history, self.metrics, races.retention, self.background)
        self.maker = RaceMaker(races, self.store, self.checked, self.creations, self.metrics, lambda: self.signer)
        self.leases = Leases(races.presence_lease, self.store, self.served, self.key_holders, self.background)
        self.janitor = Janitor(self.store, self.creations, races.lobby_ttl, self.leases.lease_ms,
                               self.served.by_race, self.endings.end_race)
        self.periodic = Periodic(self.store, self.metrics)

    def _new_hub(self, race: str) -> RaceHub:
        """A hub for ``race``, given the parts it uses (not the service)."""
        return RaceHub(race, HubParts(self.store, self.ticker, self.metrics.sent, self.end_race,
                                      self.config.races.lobby_ttl, self.racer_interval))

    @property
    def signer(self) -> Signer:
        """Signs and checks tokens (made at :meth:`start`: its secret may be kept in Redis)."""
        assert self._signer is not None, "the service is not started"
        return self._signer

    @property
    def hubs(self) -> dict[str, RaceHub]:
        """This process's hubs by race."""
        return self.served.by_race

    def every(self, seconds: float, job: Callable[[], Awaitable[None]]) -> None:
        """Run ``job`` every ``seconds`` once started (call before :meth:`start`), as the process's own
        periodic work (failures logged and retried next time): how the composition root
        (server/compose.py) adds the event runner, the seek waves and the results sweep."""
        self.periodic.every(seconds, job)

    async def start(self) -> None:
        secret = self.config.races.token_secret
        self._signer = Signer(secret.encode() if secret else await self.store.token_secret())
        if added := await self.accounts.reindex():
            log("account_names_indexed", added=added)
        try:
            await self.follow_replicas()
        except UNAVAILABLE as exc:  # asked again every few seconds (auto); until then as configured
            log("replica_acks_unknown", logging.WARNING, error=exc)
        self.hints.start()
        self.checked.start()
        await self.served.subscriber.listen_to_accounts()
        self.periodic.every(self.config.races.presence_lease / 3, self.leases.heartbeat)
        self.periodic.every(self.janitor.interval, self.janitor.sweep)
        self.periodic.every(CATCH_UP_SECONDS, self.served.catch_up)
        self.periodic.every(AFTER_OUTAGE_SECONDS, self.janitor.after_outage)
        if self.store.replicas.mode == "auto":
            self.periodic.every(REFRESH_SECONDS, self.follow_replicas)
        self.periodic.start(self.served.subscriber.run())

    async def follow_replicas(self) -> None:
        """``--replica-acks auto``: whether Redis has a replica now (logged when that changes), so that
        writes wait for one exactly while one exists."""
        replicas = self.store.replicas
        was = replicas.active
        if await replicas.refresh(self.redis) != was or replicas.mode != "auto":
            log("replica_acks", mode=replicas.mode, active=replicas.active, timeout_ms=replicas.timeout_ms)

    async def stop(self) -> None:
        self.leases.stop()
        self.background.cancel()
        await self.periodic.stop()
        self.served.close()
        # Worker processes are stopped off the event loop: joining them can take
        # a while on a loaded machine, and shutdown has other awaits to run.
        await self.checked.stop()
        await asyncio.to_thread(self.hints.close, True)
        await self.served.subscriber.close()

    # ------------------------------------------------- what connections ask
    def client_of(self, peer: str | None, headers: Mapping[str, str]) -> str:
        """The address a request's creations count against (see limits.client_address)."""
        return client_address(peer, headers, self.trusted_proxies)

    def connection_id(self) -> str:
        return f"{self.instance}.{next(self._conn_ids)}"

    def lease_expiry(self) -> int:
        return self.leases.expiry()

    def free_after_lease(self, race: str) -> None:
        self.leases.free_after_lease(race)

    async def join_hub(self, race: str, conn: Listener) -> RaceHub:
        return await self.served.join(race, conn)

    async def leave_hub(self, hub: RaceHub, conn: Listener) -> None:
        await self.served.leave(hub, conn)

    async def listen(self, race: str, heard: Callable[[str], None]) -> None:
        await self.served.listen(race, heard)

    async def unlisten(self, race: str, heard: Callable[[str], None]) -> None:
        await self.served.unlisten(race, heard)

    def known_lines(self, race: str) -> tuple[int, list[Line]] | None:
        return self.served.known_lines(race)

    def moved_here(self, race: str) -> None:
        self.served.moved_here(race)

    # ----------------------------------------------------- races made and ended
    async def create_race(self, req: p.Create, client: str) -> tuple[RaceMeta, str]:
        return await self.maker.create_race(req, client)

    async def admit_creation(self, client: str, place: str) -> None:
        await self.maker.admit_creation(client, place)

    async def spend_creation(self, client: str) -> None:
        await self.maker.spend_creation(client)

    async def create_for(self, entrants: list[str], deal: CheckedDeal, time_limit: int, start_mode: p.StartMode,
                         event: str, **fields: Any) -> RaceMeta:
        return await self.maker.create_for(entrants, deal, time_limit, start_mode, event, **fields)

    async def start_races(self, ids: list[str], now: int) -> None:
        await self.maker.start_races(ids, now)

    def end_soon(self, race: str) -> None:
        self.endings.end_soon(race)

    async def end_race(self, race: str) -> bool:
        return await self.endings.end_race(race)
