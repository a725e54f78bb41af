"""Seeks: "find me a race now", served by every process alike (docs/protocol.md "Seeks").

A ``seek`` frame puts its player in a pool (shared/seeks.py ``Pool``); the connection stays with it
and hears ``seeking`` about once a second. Every :attr:`MatchmakingSettings.seek_wave` seconds each process ticks
every pool, and the one that claims the pool's wave number in Redis (store/seeks.py) pairs that (pairing.py)
wave, holding the pool's pairing lease so that no other process pairs it meanwhile: it forms groups
of the seeks whose connections vouched for them lately (:data:`PRESENT_MS`) by the pure rule
(``shared.seeks.form``), makes each group's race (a checked deal when one is ready), seats every
member in it with a presence lease lasting until the join deadline, signs each seat's token, and
places the group in one script that a cancel cannot interleave with. Each waiting connection's
process polls its seeks' state (:data:`POLL_SECONDS`) and sends ``matched``; the client then joins
with the token and says ``ready``, and the race starts once every player is ready (start mode
``all-ready``).

The wave also settles the pool's formed races: a race that started releases its players' seeks; one
still in the lobby at its join deadline is removed, its players who did not come are counted
(``thieves_seeks_total{what="no_show"}`` and, per player, an expiring count that makes them *shy*:
paired only with other shy players for an hour), and the others wait in the pool again, their
waiting time kept.

A player whose seek connection was lost (its process died, or it closed once the seek was placed) takes
the seek over with its next ``seek``, once no connection has vouched for it for :data:`PRESENT_MS`.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass, field
from typing import Protocol

import msgspec
import networkx  # noqa: F401  # loaded at start: shared's pairings import it lazily (for the CLI's start), and
# a first pairing would otherwise stall the event loop the 0.1 s of its import

from shared import protocol as p
from shared import seeks as rule
from shared.names import NameRefused, display_name, name_key
from shared.variants import UnknownVariant, get_variant

from ..config import MatchmakingSettings
from ..ops.log import log
from ..ops.metrics import Metrics
from ..race.clock import now_ms
from ..race.creation import RaceMaker
from ..race.rules import CreateError
from ..race.session import Refused
from ..store.accounts import AccountStore
from ..store.history import History
from ..race.keyholders import KeyHolders
from ..race.lobby import LobbyConnection
from ..store import UNAVAILABLE
from ..store.limits import seek_place
from ..store.records import SeekEntry
from ..store.seeks import SeekStore
from ..accounts.keys import BadKey, check_key, name_refused
from ..accounts.ratings import shown

POLL_SECONDS = 0.2
"""How often a process looks at the state of the seeks its connections hold (and vouches for them)."""
ALIVE_MS = 5_000
"""A seek nobody vouched for this long (its process died) is dropped from its pool."""
PRESENT_MS = 1_500
"""A seek nobody vouched for this long is absent: never paired (its partners would wait for a no-show),
and its player's next ``seek`` takes it over. Several polls long, so a busy process's seeks stay present."""
STATUS_SECONDS = 1.0
"""How often a waiting seek hears ``seeking``."""


class SeekConnection(Protocol):
    """The connection a seek waits on (server/race/connection.py's Connection)."""

    def send_msg(self, msg: msgspec.Struct) -> None: ...

    def close_after_queue(self, code: p.CloseCode) -> None: ...


@dataclass
class Waiting:
    """A seek this process's connection holds."""

    pool: rule.Pool
    entry: SeekEntry
    conn: SeekConnection
    matched: str = ""
    """The race whose ``matched`` went out ("" while none did)."""
    said_at: float = 0.0
    """When the last ``seeking`` went out (monotonic seconds)."""
    cancelling: bool = False
    """A cancel is in flight: the poll leaves the seek to it (a poll that saw it gone would close the
    connection before its ``seek_cancelled``)."""


@dataclass(eq=False)
class Seeks:
    """One process's part of the seek pools."""

    settings: MatchmakingSettings
    store: SeekStore
    accounts: AccountStore
    history: History
    """The accounts' ratings (a rated seek is paired by its player's)."""
    maker: RaceMaker
    """Counts a seek against its address's creation limits (a seek may become a race)."""
    metrics: Metrics
    here: dict[str, dict[str, Waiting]] = field(default_factory=dict)
    """pool name -> seek id -> the seeks waiting on this process's connections."""

    # ------------------------------------------------------------ a seek
    async def seek(self, conn: SeekConnection, msg: p.Seek, client: str) -> Waiting:
        """Check the seek, put it in its pool, tell the player; raises Refused (nothing stored). A seek
        counts against ``client``'s creation limits as the race it may become (store/limits.py
        ``seek_place``), until it ends or its race starts."""
        if msg.protocol != p.PROTOCOL_VERSION:
            raise Refused(p.ErrorCode.VERSION_MISMATCH,
                          f"this server speaks protocol {p.PROTOCOL_VERSION}, the client {msg.protocol}")
        try:
            variant = get_variant(msg.variant)
        except UnknownVariant as exc:
            raise Refused(p.ErrorCode.BAD_VARIANT, str(exc)) from None
        if (why := rule.out_of_range(msg.seats, msg.time_limit)) is not None:
            raise Refused(p.ErrorCode.SEEK_OUT_OF_RANGE, f"{why}; nothing was stored")
        pool = rule.Pool(variant.key, msg.seats, msg.time_limit, msg.rated)
        if msg.key is not None:
            try:
                account = await check_key(self.accounts, msg.key)
            except BadKey as exc:
                raise Refused(p.ErrorCode.BAD_KEY, str(exc)) from None
            if (why := name_refused(account, msg.name)) is not None:
                raise Refused(p.ErrorCode.BAD_FIELD, f"{why}; nothing was stored")
            who, name, acct, key_hash = f"a:{account.account}", account.name, account.account, account.key_hash
            rating = await self._rating(account.account, variant.key)
        else:
            if msg.rated:
                raise Refused(p.ErrorCode.ACCOUNT_REQUIRED, "a rated race is for accounts only: seek an "
                              "unrated race, or register (thieves register NAME) and seek with its key")
            if msg.name is None or not msg.name.strip():
                raise Refused(p.ErrorCode.BAD_FIELD, "a player without an account needs a name")
            try:
                name = display_name(msg.name)
            except NameRefused as exc:
                raise Refused(exc.code, str(exc)) from None
            if await self.accounts.registered(name):
                raise Refused(p.ErrorCode.NAME_REGISTERED)
            who, acct, rating, key_hash = f"n:{name_key(name)}", None, rule.DEFAULT_RATING, ""
        seek_id = secrets.token_hex(8)
        if not await self.store.lock(who, pool.key, seek_id, client):
            resumed = await self._resume(conn, who)
            if resumed is not None:
                return resumed
            if not await self.store.lock(who, pool.key, seek_id, client):  # (again: the lock may have been a dead one)
                raise Refused(p.ErrorCode.ALREADY_SEEKING, f"{name} already waits for a race (one seek at a time): "
                              "cancel that seek first (if its connection was lost, seek again in a second or two: "
                              "this connection takes it over); nothing was stored")
        try:
            await self._admit(client, seek_id, pool)
        except BaseException:
            await self.store.unlock(who, seek_id)
            raise
        now = now_ms()
        entry = SeekEntry(id=seek_id, who=who, name=name, account=acct, rating=rating, since=now,
                          shy=await self.store.shy(who) > 0, key_hash=key_hash, client=client)
        try:
            count = await self.store.add(pool.key, entry, now + ALIVE_MS)
        except BaseException:
            await self.let_go(entry)
            raise
        waiting = Waiting(pool, entry, conn)
        self.here.setdefault(pool.key, {})[seek_id] = waiting
        log("seek", pool=pool.key, seek=seek_id, who=who, rating=rating, shy=entry.shy)
        self._say(waiting, now, count)
        return waiting

    async def _resume(self, conn: SeekConnection, who: str) -> Waiting | None:
        """The player's seek, taken over by this connection if no connection vouches for it any more (its
        process died, or its connection closed after it was placed), and told its state: ``seeking``, or
        the ``matched`` it may have missed. None when another connection holds it, or it is in no pool (a lock
        that its dead process left is given back then).

        Only a seeker with an account key takes a seek over: a name alone proves nothing, and a placed
        seek's ``matched`` carries its seat's token. A name's orphaned seek leaves its pool as any seek
        nobody vouches for (docs/protocol.md, "Seeks"), and the name may seek afresh then."""
        held = await self.store.held(who)
        if held is None:
            return None
        pool_key, seek_id, client = held
        now = now_ms()
        kind, entry, matched = await self.store.resume(pool_key, seek_id, now + ALIVE_MS, now + ALIVE_MS - PRESENT_MS,
                                                       take_over=who.startswith("a:"))
        if entry is None:
            if kind == "gone" and await self.store.lock_age(who) > ALIVE_MS:
                # A lock naming a seek in no pool, taken longer ago than a seek takes to enter its pool: its
                # process died between the seek's end and the lock's release (or before the seek entered).
                # Its address's places go with it (giving them back twice is once).
                await self._release(who, seek_id, client)
            return None
        waiting = Waiting(rule.Pool.parse(pool_key), entry, conn)
        self.here.setdefault(pool_key, {})[seek_id] = waiting
        log("seek_resumed", pool=pool_key, seek=seek_id, who=who, placed=kind == "matched")
        if matched is not None:
            await self._tell_matched(waiting, matched, now)
        else:
            self._say(waiting, now, (await self.store.waiting_counts([pool_key]))[0])
        return waiting

    async def _admit(self, client: str, seek_id: str, pool: rule.Pool) -> None:
        """Count a new seek against its address: the pools one address may wait in (each costs every
        wave), then the creation limits; raises Refused (then nothing was written)."""
        cap = self.settings.seek_pools_per_address
        if taken := await self.store.enter(client, seek_id, pool.key, cap):
            raise Refused(p.ErrorCode.TOO_MANY_SEEK_POOLS,
                          f"this address's seeks wait in {len(taken)} pools ({', '.join(taken)}), the most "
                          f"one address may: seek in one of those, or cancel a seek there first; nothing was stored")
        try:
            await self.maker.admit_creation(client, seek_place(seek_id))
        except BaseException as exc:
            await self.store.leave(client, seek_id)
            if isinstance(exc, CreateError):
                raise Refused(exc.code, f"{exc}; nothing was stored") from None
            raise

    async def _rating(self, account: str, variant: str) -> int:
        """The rating an account is paired by in ``variant``: its shown rating (a new one's otherwise)."""
        found = (await self.history.ratings([account], variant)).get(account)
        return shown(*found) if found is not None else rule.DEFAULT_RATING

    def _say(self, w: Waiting, now: int, count: int, requeued: bool = False) -> None:
        w.said_at = time.monotonic()
        waited = now - w.entry.since
        w.conn.send_msg(p.Seeking(pool=w.pool.key, seek=w.entry.id, waiting=count, rating=w.entry.rating,
                                  gap=rule.allowed_gap(waited), waited_ms=max(0, waited), server_time=now,
                                  requeued=requeued))

    async def _tell_matched(self, w: Waiting, matched: p.Matched, now: int) -> None:
        """Send the seek's ``matched`` unless it went out already; a seek told of another race before is
        told first that it was put back in the pool (``seeking {requeued: true}``: the wave that put it back
        may have placed it again before this process saw it wait)."""
        if w.matched == matched.race:
            return
        if w.matched:
            self._say(w, now, (await self.store.waiting_counts([w.pool.key]))[0], requeued=True)
        w.matched = matched.race
        w.conn.send_msg(matched)

    async def cancel(self, w: Waiting, why: str = "cancelled") -> bool:
        """Take the seek out of its pool: True; False when a race was formed for it first (its
        ``matched`` is sent first if it has not gone out yet). ``why``: counted and logged as that
        (``cancelled`` by its player, or ``expired``)."""
        w.cancelling = True
        try:
            kind, matched = await self.store.cancel(w.pool.key, w.entry.id)
        finally:
            w.cancelling = False
        if kind == "matched" and matched is not None:
            await self._tell_matched(w, matched, now_ms())
            return False
        self._forget(w)
        await self.let_go(w.entry)
        if kind == "cancelled":
            self.metrics.seek_events[why] += 1
            log(f"seek_{why}", pool=w.pool.key, seek=w.entry.id)
        return kind == "cancelled"

    async def _expire(self, w: Waiting) -> None:
        """The seek has waited ``--seek-expire`` seconds: it leaves its pool (a seek nobody can pair would
        cost every wave for ever), and its seeker is told so; a race formed for it first goes on."""
        if await self.cancel(w, "expired"):
            w.conn.send_msg(p.error(p.ErrorCode.SEEK_EXPIRED, f"nobody was paired with you in "
                                    f"{self.settings.seek_expire:g} s, the longest a seek waits: seek again, maybe "
                                    "in a busier pool (thieves list shows them)", ref="seek"))
        if w.entry.id not in self.here.get(w.pool.key, {}):  # expired, or gone meanwhile (not matched)
            w.conn.close_after_queue(p.CloseCode.NORMAL)

    async def let_go(self, entry: SeekEntry) -> None:
        """The seek is over (it left its pool, or its race was settled): the player may seek again, and its
        address's lobby place is given back."""
        await self._release(entry.who, entry.id, entry.client)

    async def _release(self, who: str, seek_id: str, client: str) -> None:
        """Give back what a seek held: its player's lock, and its place among its address's seeks and
        lobbies (``client``; "" for a seek that counted against none)."""
        await self.store.unlock(who, seek_id)
        if client:
            await self.store.leave(client, seek_id)
            await self.maker.creations.release(client, seek_place(seek_id))

    def _forget(self, w: Waiting) -> None:
        held = self.here.get(w.pool.key)
        if held is not None:
            held.pop(w.entry.id, None)
            if not held:
                del self.here[w.pool.key]

    async def gone(self, w: Waiting) -> None:
        """The seek's connection closed: a seek still waiting leaves its pool; a matched one's race goes
        on (the player may still join it by its token, or take the seek over with a new ``seek``)."""
        if self.here.get(w.pool.key, {}).get(w.entry.id) is w and not await self.cancel(w):
            self._forget(w)
            await self.store.absent(w.pool.key, w.entry.id)

    # --------------------------------------------------- this process's seeks
    async def poll(self) -> None:
        """Vouch for this process's seeks, and tell each its news: matched, back in the pool, over."""
        now = now_ms()
        expire_ms = self.settings.seek_expire * 1000
        looked = await self.store.look({pool: list(held) for pool, held in self.here.items()}, now + ALIVE_MS)
        for pool, (ids, states) in looked.items():
            held = self.here.get(pool, {})
            count = None
            for seek_id, (waits, matched) in zip(ids, states):
                w = held.get(seek_id)
                if w is None or w.cancelling:
                    continue
                if matched is not None:
                    await self._tell_matched(w, matched, now)
                elif waits and now - w.entry.since >= expire_ms:
                    await self._expire(w)
                elif waits:
                    requeued = bool(w.matched)
                    if requeued or time.monotonic() - w.said_at >= STATUS_SECONDS:
                        w.matched = ""
                        if count is None:
                            count = (await self.store.waiting_counts([pool]))[0]
                        self._say(w, now, count, requeued)
                else:  # its race started, or it was dropped (a no-show, or nobody vouched in time)
                    self._forget(w)
                    w.conn.close_after_queue(p.CloseCode.NORMAL)

    # ---------------------------------------------------------- reading
    async def pools(self) -> p.SeekPools:
        """Every pool in use, with how many wait in it now."""
        names = await self.store.pools()
        counts = await self.store.waiting_counts(names)
        lines = []
        for name, count in zip(names, counts):
            pool = rule.Pool.parse(name)
            lines.append(p.SeekPoolLine(pool=name, variant=pool.variant, seats=pool.seats,
                                        time_limit=pool.time_limit, rated=pool.rated, waiting=count))
        return p.SeekPools(pools=lines, server_time=now_ms())

    def waiting_here(self) -> dict[str, int]:
        """pool -> seeks waiting on this process's connections (``/metrics``)."""
        return {pool: len(held) for pool, held in self.here.items()}



class SeekFrames:
    """The lobby's frames of this process's race connections (server/race/lobby.py's ``LobbyFrames``):
    which seek each connection waits on, and the key it was made with.

    Why here and not on the connection: matchmaking is above races; the connection only knows it is
    seeking (the composition root hands it this handler)."""

    def __init__(self, seeks: Seeks, key_holders: KeyHolders) -> None:
        self.seeks = seeks
        self.key_holders = key_holders
        self.waiting: dict[LobbyConnection, Waiting] = {}

    async def seek(self, conn: LobbyConnection, msg: p.Seek, client: str) -> None:
        if conn in self.waiting:
            raise Refused(p.ErrorCode.ALREADY_SEEKING, "this connection already waits on a seek; nothing "
                          "was stored")
        waiting = self.waiting[conn] = await self.seeks.seek(conn, msg, client)
        entry = waiting.entry
        if entry.account is not None:  # the seek ends with the key it was made with (KeyHolders)
            self.key_holders.add(entry.account, entry.key_hash, conn)

    async def cancel(self, conn: LobbyConnection, msg: p.SeekCancel) -> bool:
        waiting = self.waiting.pop(conn, None)
        if waiting is None:
            raise Refused(p.ErrorCode.NOT_SEEKING)
        try:
            cancelled = await self.seeks.cancel(waiting)
        except BaseException:
            self.waiting[conn] = waiting
            raise
        if not cancelled:
            self.waiting[conn] = waiting  # matched first: the connection keeps telling its news
        elif waiting.entry.account is not None:  # a hello may follow, with another key or none
            self.key_holders.remove(waiting.entry.account, conn)
        conn.send_msg(p.SeekCancelled(cancelled=cancelled))
        return cancelled

    async def gone(self, conn: LobbyConnection) -> None:
        waiting = self.waiting.pop(conn, None)
        if waiting is None:
            return
        if waiting.entry.account is not None:
            self.key_holders.remove(waiting.entry.account, conn)
        try:
            await self.seeks.gone(waiting)
        except UNAVAILABLE:
            pass  # nobody vouches for it any more: a wave drops it
