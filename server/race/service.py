"""The process-wide half of the race server: this process's hubs (one per race it serves), its pub/sub
subscription, the periodic work (presence leases, the janitor, the catch-up of lost notes), and creating
and ending races, which any process may do for any race.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import secrets
from typing import Any, Awaitable, Callable, Mapping


from shared import protocol as p

from . import rules as races
from ..config import Config
from ..deals.hinting import HintRunner
from ..ops.log import SummedLog, SummedLogs, log
from ..ops.metrics import Metrics
from ..deals.checked import CheckedDeal, CheckedPool, PoolUnavailable
from ..ops.limits import client_address, trusted_networks
from ..store.accounts import AccountStore
from ..store.challenges import ChallengeStore
from ..store.limits import Bucket
from ..store import UNAVAILABLE, CreationLimits, RedisClient, CreationSettings, Limited, Line, Note, RaceMeta, Store, StoreError, retry_after
from ..store.history import History
from ..players.recorder import Outcome, Recorder
from .tokens import Signer

from .clock import now_ms
from .hub import HubParts, Listener, ProgressTicker, RaceHub


STOP_SECONDS = 3.0
"""How long shutdown waits for the periodic tasks to end after cancelling them, before asking again."""

CATCH_UP_SECONDS = 1.0
"""How often each process compares its hubs' versions with Redis's: the longest a lost pub/sub message
can delay a progress frame, a start or an end (one small read per race served here)."""
FREE_SLACK_SECONDS = 0.05
"""How long after a lobby seat's lease has run out its process looks (the lease is measured from the
close, on the same clock): the seat is freed that much past the lease."""
ENDS_AT_ONCE = 16
"""Races this process ends, or applies to their accounts, at once (the rest wait their turn, first come
first served). Why: a round's heats all end at the same instant, hundreds of end timers firing
together; each end (and each application of its results) is a dozen round trips or more, and all at
once they took every Redis connection of the process, ahead of the moves and reads of the races still
running (on a cluster the client then failed them: see store/client.py). Measured on a local
cluster, 300 races ending at one instant in one process: sixteen at a time ended them all in 0.7-0.9 s
(all at once: 0.7-0.8 s), and a read meanwhile took 4-8 ms on average instead of 60-90 ms."""
REFUSED_LOG_SECONDS = 60.0
"""A refused frame of each code is logged at most once this often, then summed up (:class:`SummedLogs`):
a client repeating an illegal move or a bad frame as fast as the rate limit lets it must not fill the log."""
RESULTS_SWEEP_SECONDS = 2.0
"""How often each process looks for finished races whose results no process applied to the accounts
(the one that ended it died first): the longest a crash delays a history entry or a rating."""


def creation_settings(config: Config) -> CreationSettings:
    """The creation limits of ``config`` in the store's units."""
    return CreationSettings(
        burst=config.create_burst, interval_ms=config.create_interval * 1000,
        per_address=config.lobbies_per_address, total=config.lobbies_max, ttl_ms=config.lobby_ttl * 1000,
        # A reserved id may lack its race while a pool race solves its deal (up to --checked-wait).
        grace_ms=int((config.checked_wait + 60) * 1000),
    )


class KeyHolders:
    """This process's player connections that joined with an account's key, with that key's hash.

    Why: a connection must stop acting once the key it joined with is replaced (issue 22). The news
    comes over pub/sub at once (:meth:`Service._on_key_replaced`), and since pub/sub is at most once,
    the heartbeat also compares the hashes with Redis's (:meth:`Service._check_keys`).
    """

    def __init__(self) -> None:
        self._by_account: dict[str, dict[Listener, str]] = {}

    def add(self, account: str, key_hash: str, conn: Listener) -> None:
        self._by_account.setdefault(account, {})[conn] = key_hash

    def remove(self, account: str, conn: Listener) -> None:
        held = self._by_account.get(account)
        if held is not None:
            held.pop(conn, None)
            if not held:
                del self._by_account[account]

    def accounts(self) -> list[str]:
        return list(self._by_account)

    def cut(self, account: str, stale: Callable[[str], bool]) -> int:
        """Tell the connections of ``account`` whose key hash is ``stale`` ``bad_key`` and close them
        (4008); how many."""
        held = self._by_account.get(account, {})
        cut = [conn for conn, key_hash in held.items() if stale(key_hash)]
        frame = p.encode(p.error(p.ErrorCode.BAD_KEY, "this account's key was replaced: rejoin with the new key"))
        for conn in cut:
            self.remove(account, conn)
            conn.send(frame)
            conn.close_after_queue(p.CloseCode.KEY_REPLACED)
        if cut:
            log("key_replaced_closing", account=account, connections=len(cut))
        return len(cut)


class Service:
    """Shared state of one server process: the store, the signer and the hubs."""

    def __init__(self, config: Config, redis: RedisClient, probe: RedisClient | None = None) -> None:
        self.config = config
        self.redis = redis
        self.metrics = Metrics()
        self.instance = secrets.token_hex(4)
        """Names this process in presence leases and in the races' listening sets (a restarted process is a
        new instance)."""
        self.store = Store(redis, tick_ms=max(1, int(1000 / config.progress_hz)),
                           timer=self.metrics.redis_seconds.observe, probe=probe, instance=self.instance,
                           linger=config.commit_linger_ms / 1000)
        self.signer: Signer | None = None
        self.checked = CheckedPool(self.store, self.metrics, config.checked_targets(), config.checked_budget,
                                   config.checked_wait)
        self.hints = HintRunner(config.hint_workers)
        self.creations = CreationLimits(redis, creation_settings(config))
        self._log_create_refused = SummedLog("create_refused")
        """A client refused in a loop writes a line a minute, not a line each."""
        self.log_refused = SummedLogs("refused", "code", window=lambda: REFUSED_LOG_SECONDS)
        """Log a frame refused on a connection (its code, then the fields of the last one of its window)."""
        self.accounts = AccountStore(redis)
        self.challenges = ChallengeStore(redis)
        self.registrations = Bucket(redis, config.register_burst, int(config.register_interval * 1000))
        """Registrations per client address."""
        self.organiser_failures = Bucket(redis, config.organiser_burst, int(config.organiser_interval * 1000))
        """Organiser-token attempts per client address (a right one gives its token back)."""
        self.trusted_proxies = trusted_networks(config)
        self.hubs: dict[str, RaceHub] = {}
        self.ticker = ProgressTicker(config.progress_hz)
        self.racer_interval = 1.0 / config.racer_hz
        """Seconds between two progress frames to a race's racers, at least (``--racer-hz``)."""
        """The clock the hubs' progress flushes share (one Redis round trip for the reads of a tick)."""
        self.listeners: dict[str, set[Callable[[str], None]]] = {}
        """Who else in this process hears a race's notes (an event's live feed: its heats), by race."""
        self.connections = 0
        self.progress_frames = 0
        self._conn_ids = itertools.count(1)
        self.subscriber = self.store.subscriber(self._on_note, self._on_key_replaced)
        self.key_holders = KeyHolders()
        self._tasks: list[asyncio.Task[None]] = []
        self._stopping = False
        self._ending: set[str] = set()
        self._ends = asyncio.Semaphore(ENDS_AT_ONCE)
        self.history = History(redis)
        self.recorder = Recorder(self.store, self.history, config.history_max, config.retention)
        self._applying: set[str] = set()
        self._background: set[asyncio.Task[None]] = set()
        self._freeing: dict[str, asyncio.TimerHandle] = {}
        """Lobbies where a player's last connection here closed: when to look at their seats again."""
        self._periodic: list[tuple[float, Callable[[], Awaitable[None]]]] = []
        self.seeks: Any = None
        """The seek pools' part of this process (server/players/seeks.py), set by the composition root."""

    def every(self, seconds: float, job: Callable[[], Awaitable[None]]) -> None:
        """Run ``job`` every ``seconds`` once started (call before :meth:`start`), as the service's own
        periodic work (failures logged and retried next time): how the composition root
        (server/compose.py) adds the event runner."""
        self._periodic.append((seconds, job))

    async def start(self) -> None:
        secret = self.config.token_secret
        self.signer = Signer(secret.encode() if secret else await self.store.token_secret())
        if added := await self.accounts.reindex():
            log("account_names_indexed", added=added)
        self.hints.start()
        self.checked.start()
        await self.subscriber.listen_to_accounts()
        self._tasks = [asyncio.create_task(self.subscriber.run()),
                       asyncio.create_task(self._every(self.config.presence_lease / 3, self._heartbeat)),
                       asyncio.create_task(self._every(self.janitor_interval, self._janitor)),
                       asyncio.create_task(self._every(CATCH_UP_SECONDS, self._catch_up)),
                       asyncio.create_task(self._every(RESULTS_SWEEP_SECONDS, self._sweep_results)),
                       *(asyncio.create_task(self._every(seconds, job)) for seconds, job in self._periodic)]

    @property
    def janitor_interval(self) -> float:
        """How often stale races are looked for: a few times per lobby TTL, at most every 30 s."""
        return max(0.2, min(30.0, self.config.lobby_ttl / 4))

    def client_of(self, peer: str | None, headers: Mapping[str, str]) -> str:
        """The address a request's creations count against (see limits.client_address)."""
        return client_address(peer, headers, self.trusted_proxies)

    def connection_id(self) -> str:
        return f"{self.instance}.{next(self._conn_ids)}"

    def lease_expiry(self) -> int:
        return now_ms() + int(self.config.presence_lease * 1000)

    async def stop(self) -> None:
        self._stopping = True
        for handle in self._freeing.values():
            handle.cancel()
        for task in [*self._tasks, *self._background]:
            task.cancel()
        _, pending = await asyncio.wait(self._tasks, timeout=STOP_SECONDS)
        for task in pending:
            # A cancel can be swallowed inside a library (a Redis timeout firing as the cancel lands
            # turns into a TimeoutError, which the client retries): ask again; _every also stops by the flag.
            log("stop_cancel_again", logging.WARNING, task=task.get_name())
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        for hub in self.hubs.values():
            hub.close()
        # Worker processes are stopped off the event loop: joining them can take
        # a while on a loaded machine, and shutdown has other awaits to run.
        await self.checked.stop()
        await asyncio.to_thread(self.hints.close, True)
        await self.subscriber.close()

    # ------------------------------------------------------------ hubs
    async def join_hub(self, race: str, conn: Listener) -> RaceHub:
        hub = self.hubs.get(race)
        if hub is None:
            hub = self.hubs[race] = RaceHub(race, HubParts(self.store, self.ticker, self.metrics.sent, self.end_race,
                                                           self.config.lobby_ttl, self.racer_interval))
            await self.subscriber.subscribe(race, now_ms())
        hub.add(conn)
        return hub

    async def listen(self, race: str, heard: Callable[[str], None]) -> None:
        """Call ``heard(race)`` on each note of the race from now on (at most once: notes can be lost; the
        listener must look again now and then). Why here: this process's one subscription carries them."""
        listeners = self.listeners.setdefault(race, set())
        if not listeners and race not in self.hubs:
            await self.subscriber.subscribe(race, now_ms())
        listeners.add(heard)

    async def unlisten(self, race: str, heard: Callable[[str], None]) -> None:
        listeners = self.listeners.get(race)
        if listeners is None:
            return
        listeners.discard(heard)
        if not listeners:
            del self.listeners[race]
            if race not in self.hubs:
                try:
                    await self.subscriber.unsubscribe(race)
                except UNAVAILABLE:
                    pass

    async def leave_hub(self, hub: RaceHub, conn: Listener) -> None:
        hub.remove(conn)
        if not hub.conns and self.hubs.get(hub.race) is hub:
            del self.hubs[hub.race]
            hub.close()
            if hub.race in self.listeners:
                return  # the subscription still carries the race's notes to its listeners
            try:
                await self.subscriber.unsubscribe(hub.race)
            except UNAVAILABLE:
                pass

    def _on_key_replaced(self, account: str, old_hash: str) -> None:
        """``account``'s key was replaced (by any process): its connections here that joined with the
        old key may not act any more."""
        self.key_holders.cut(account, lambda key_hash: key_hash == old_hash)

    async def _check_keys(self) -> None:
        """The same for a replacement whose pub/sub message this process missed (Redis away a moment):
        each account's key hash as Redis has it, one round trip for all."""
        accounts = self.key_holders.accounts()
        for account, current in zip(accounts, await self.accounts.key_hashes(accounts)):
            self.key_holders.cut(account, lambda key_hash: key_hash != current)

    def known_lines(self, race: str) -> tuple[int, list[Line]] | None:
        """The race's version and lines as this process's hub knows them without a read (an event feed's
        heats whose racers play here), or None."""
        hub = self.hubs.get(race)
        return hub.known_lines() if hub is not None else None

    def moved_here(self, race: str) -> None:
        """The race moved: its listeners here hear of it. Called for each note, and for each move of this
        process's connections (the moves script announces a move only to the other processes)."""
        for heard in self.listeners.get(race, ()):
            heard(race)

    def _on_note(self, race: str, note: Note) -> None:
        """An event of a race stored by any process: its hub here, if any, hears of it."""
        hub = self.hubs.get(race)
        if hub is not None:
            hub.on_event(note.version, note.kind)
        self.moved_here(race)

    # ------------------------------------------------- periodic work
    async def _every(self, seconds: float, job: Any) -> None:
        """Run ``job`` every ``seconds``; a failure (Redis away) is logged and retried next time.

        The loop also ends on :attr:`_stopping`: a cancel that a Redis client swallowed mid-command
        (seen on a Redis Cluster, where a timeout and the cancel met) would otherwise leave this
        loop running and the shutdown waiting for it."""
        while not self._stopping:
            await asyncio.sleep(seconds)
            try:
                await job()
            except asyncio.CancelledError:
                raise
            except UNAVAILABLE as exc:
                self.metrics.redis_errors += 1
                self.store.down = True
                log("periodic_failed", logging.WARNING, job=job.__name__, error=exc)
            except Exception:
                logging.getLogger("thieves").exception(f"event=periodic_failed job={job.__name__}")

    @property
    def lease_ms(self) -> int:
        return int(self.config.presence_lease * 1000)

    async def _heartbeat(self) -> None:
        """Renew this process's place in the listening sets of the races it listens to, and the presence
        leases of its players; expire those of dead processes;
        free the lobby seats whose connections have been gone for the lease; close the connections
        whose account key was replaced (should the pub/sub news have been lost)."""
        expiry, now = self.lease_expiry(), now_ms()
        await self.subscriber.renew(now)
        # Every race at once: their calls go to Redis in one round trip (the store's batcher), not one each.
        beats = await asyncio.gather(*(
            self.store.heartbeat(race, [(c.seat, c.gen, c.member) for c in hub.conns if c.seat is not None
                                        and c.member], expiry, now, self.lease_ms)
            for race, hub in list(self.hubs.items())), return_exceptions=True)
        failed = next((beat for beat in beats if isinstance(beat, BaseException)), None)
        if failed is not None:
            raise failed
        await self._check_keys()

    def free_after_lease(self, race: str) -> None:
        """A player's connection to the lobby ``race`` closed here: once the presence lease has run out
        from now, free its seat if no connection came back (docs/protocol.md, "Seats").

        Why a timer: the heartbeat frees only seats of races this process still serves, and with the
        last connection gone the hub is gone too; the janitor's sweep (every lobby TTL/4, up to 30 s)
        then freed a 3 s lease 23-25 s late (issue 22). The janitor stays the fallback when this
        process dies before its timer fires."""
        if self._stopping:
            return
        old = self._freeing.pop(race, None)
        if old is not None:
            old.cancel()
        self._freeing[race] = asyncio.get_running_loop().call_later(
            self.config.presence_lease + FREE_SLACK_SECONDS, self._free_now, race)

    def _free_now(self, race: str) -> None:
        self._freeing.pop(race, None)
        task = asyncio.create_task(self._free_stale(race))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _free_stale(self, race: str) -> None:
        try:
            if freed := await self.store.free_stale(race, now_ms(), self.lease_ms):
                log("seats_freed", race=race, seats=freed, why="lease")
        except StoreError:
            pass  # the race is gone
        except UNAVAILABLE as exc:  # the janitor sweeps later
            log("seats_free_failed", logging.WARNING, race=race, error=exc)

    async def _catch_up(self) -> None:
        """Find the hubs whose race moved on without them hearing (one read for all) and catch them up."""
        hubs = list(self.hubs.values())
        versions = await self.store.versions([hub.race for hub in hubs])
        for hub, version in zip(hubs, versions):
            if version is None or version > hub.heard:
                hub.spawn(hub.catch_up())

    async def _janitor(self) -> None:
        """Remove lobby races nobody started in time; end races whose end is due unattended (their time
        ran out, or every player is done and the process that stored the last of them failed to end
        it: :meth:`end_soon`); drop open-lobby entries of races that are no longer lobbies (store/limits.py)."""
        ids = await self.store.active_ids()
        now = now_ms()
        metas = await self.store.metas(ids)
        for rid, meta in zip(ids, metas):
            if meta is None:
                await self.store.forget(rid)
            elif meta.status == "lobby" and now >= meta.created_at + self.config.lobby_ttl * 1000:
                if await self.store.abandon(meta, now, self.config.lobby_ttl * 1000):
                    log("race_abandoned", race=rid, players=meta.players, lobby_ttl=self.config.lobby_ttl)
            elif meta.status == "lobby" and rid not in self.hubs:  # (a hub's heartbeat frees its own)
                if freed := await self.store.free_stale(rid, now, self.lease_ms):
                    log("seats_freed", race=rid, seats=freed, why="lease")
            elif meta.due_to_end(now):  # time up, or every player done and the one who ended it gone first
                await self.end_race(rid)
        # Lobbies still young enough to stay; the open-lobby set may keep only those (and new ones).
        lobbies = [rid for rid, meta in zip(ids, metas) if meta and meta.status == "lobby"
                   and now < meta.created_at + self.config.lobby_ttl * 1000]
        if await self.creations.repair(lobbies, now):
            log("open_lobbies_repaired", lobbies=len(lobbies))

    # ----------------------------------------------------------- races
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
            self.metrics.creations_refused[exc.code] += 1
            self._log_create_refused(last_client=client, code=exc.code, wait_ms=exc.wait_ms)
            raise self._limited(exc) from None

    async def spend_creation(self, client: str) -> None:
        """One token of ``client``'s creation bucket for a server-made race it asked for (the first play
        of a daily deal, which may set the solver working); raises races.CreateLimited."""
        try:
            await self.creations.spend(client)
        except Limited as exc:
            self.metrics.creations_refused[exc.code] += 1
            self._log_create_refused(last_client=client, code=exc.code, wait_ms=exc.wait_ms)
            raise self._limited(exc) from None

    def _limited(self, exc: Limited) -> races.CreateLimited:
        """The client's answer to a refusal: which limit, and when to come back."""
        cfg, wait = self.config, exc.wait_ms / 1000
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
                raise races.CreateError(exc.code, str(exc)) from None
        meta = await self._store_new(req, checked, race_id)
        assert self.signer is not None
        token = self.signer.sign("creator", meta.id, -1, now_ms() + self.config.token_ttl * 1000)
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
        countdown = int(self.config.countdown * 1000)
        for race in ids:
            try:
                await self.store.start(race, now, countdown)
            except StoreError as exc:
                # started already / nobody came / a rated race only one entrant came to
                if exc.code not in ("race_closed", "forbidden", "not_enough_players"):
                    raise

    def end_soon(self, race: str) -> None:
        """End ``race`` now in the background, as this process's own work: the store said its last player
        is done (a give-up or a last card home answered ``race_done``, once, to one caller).

        Why not the connection's or its hub's task: a racer may give up and close its socket at once, and
        the hub of its last connection here is closed with it, cancelling its tasks; the race then ran
        to its time limit. A failure is logged here; the janitor ends a due race nobody ended."""
        self._spawn(self._end_or_log(race))

    async def _end_or_log(self, race: str) -> None:
        try:
            await self.end_race(race)
        except UNAVAILABLE as exc:
            self.metrics.redis_errors += 1
            log("end_failed", logging.WARNING, race=race, error=exc)
        except Exception:
            logging.getLogger("thieves").exception(f"event=end_failed race={race}")

    async def end_race(self, race: str) -> bool:
        """End the race if its time is up or everyone is done; idempotent, safe from any process.
        At most :data:`ENDS_AT_ONCE` at once here; a second call while one is waiting or under way
        returns False at once."""
        if race in self._ending:
            return False
        self._ending.add(race)
        try:
            async with self._ends:
                return await self._end_race(race)
        finally:
            self._ending.discard(race)

    async def _end_race(self, race: str) -> bool:
        meta = await self.store.meta(race)
        now = now_ms()
        if meta is None or not meta.due_to_end(now):
            return False
        players = [await self.store.player(race, s) for s in range(meta.players)]
        res = races.results(meta, [pl for pl in players if pl is not None], now)
        if any(s.account for s in res.standings):
            await self.history.mark_pending(race, now)  # the outbox first: a crash after the end loses nothing
        try:
            ended, version = await self.store.end(meta, now, p.encode(res), self.config.retention)
        except StoreError:
            return False
        if ended:
            log("race_ended", race=race, version=version, players=meta.players,
                winner=res.standings[0].name if res.standings else None)
            if any(s.account for s in res.standings):
                self._spawn(self.apply_results(race))
        return ended

    # ------------------------------------------------- accounts' results
    def _spawn(self, job: Any) -> None:
        task = asyncio.create_task(job)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def apply_results(self, race: str) -> Outcome | None:
        """Apply a finished race to its accounts (server/players/recorder.py); None when this process is
        already at it. A failure leaves the race on the outbox for the next sweep."""
        if race in self._applying:
            return None
        self._applying.add(race)
        try:
            async with self._ends:  # (a burst of ends is a burst of these: one bound for both)
                outcome = await self.recorder.apply(race)
        except UNAVAILABLE as exc:
            log("results_failed", logging.WARNING, race=race, error=exc)
            return None
        except Exception:
            logging.getLogger("thieves").exception(f"event=results_failed race={race}")
            return None
        finally:
            self._applying.discard(race)
        if outcome is not Outcome.RUNNING:
            log("results_applied", race=race, outcome=outcome.value)
        return outcome

    async def _sweep_results(self) -> None:
        """Apply the outbox's finished races; end the ones whose time ran out or whose players are all
        done (their ender died between the outbox and the end); leave running races for later."""
        for race in await self.history.pending():
            if await self.apply_results(race) is Outcome.RUNNING:
                await self.end_race(race)
