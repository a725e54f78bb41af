"""What a connection has joined: a race, its hub, and a player's seat, with the frames that act on it.

Why apart from the connection (:mod:`server.race.connection`): the connection is a pump (frames in,
frames out, the rate limit and the close); what a frame does to a race is here, and the seat's own
state (its game, the move in flight, its retries) is the sans-I/O :class:`~server.race.session.SeatSession`.
A connection before its hello, or waiting on a seek, has no :class:`Joined` at all.
"""

from __future__ import annotations

import asyncio
import enum
import logging
from typing import Any, Awaitable, Protocol

import msgspec

from shared import protocol as p

from ..ops.log import log
from ..ops.ratelimit import TokenBucket
from ..store import UNAVAILABLE, Committed, HintRefused, RaceMeta, Store, StoreError
from .clock import now_ms
from .hub import Listener, RaceHub
from .lobby import LobbyFrames
from .service import Service
from .session import CatchUp, Failed, Moving, Pending, Refused, SeatSession

SEAT_LEFT = "seat_left"
"""The store's word for a seat whose generation moved on: this connection no longer holds it."""


class Stage(enum.Enum):
    """What the connection is for: nothing yet (a hello is due), a seek, or a race (:attr:`Connection.joined`)."""

    HELLO = "hello"
    SEEKING = "seeking"
    JOINED = "joined"


class Pump(Listener, Protocol):
    """What a joined race's frames need of their connection (server/race/connection.py's)."""

    service: Service
    store: Store
    peer: str
    bucket: TokenBucket
    joined: "Joined | None"
    stage: Stage
    lobby: "LobbyFrames | None"
    in_flight: "asyncio.Future[Any] | None"

    def send_msg(self, msg: msgspec.Struct) -> None: ...

    def apart(self, handling: Awaitable[None], msg: Any) -> None: ...

    def release(self) -> None: ...

    def failed(self, exc: Exception, msg: Any) -> None: ...

    def countdown_ms(self) -> int: ...

    def client(self) -> str: ...

    def error_budgets(self) -> tuple[TokenBucket, TokenBucket]: ...

    def refuse(self, code: p.ErrorCode | str, message: str | None = None, *, ref: str | None = None,
               seq: int | None = None, close: p.CloseCode | None = None, counts: bool = True) -> None: ...


class Joined:
    """A connection's race: its hub, its role, and (a player) its seat session and presence lease."""

    __slots__ = ("conn", "race", "hub", "session", "account", "key_hash", "_version")

    def __init__(self, conn: Pump, race: str, hub: RaceHub, session: SeatSession | None,
                 account: str | None = None, key_hash: str = "") -> None:
        self.conn = conn
        self.race = race
        self.hub = hub
        self.session = session
        """The player's seat (None for a spectator)."""
        self.account = account
        """The account whose key this player connection joined with (its replacement closes it: 4008)."""
        self.key_hash = key_hash
        self._version = 0

    @property
    def version(self) -> int:
        """The race version of this connection's last answer (``reject.version``)."""
        return self.session.version if self.session is not None else self._version

    @version.setter
    def version(self, value: int) -> None:
        if self.session is not None:
            self.session.version = value
        else:
            self._version = value

    def player(self) -> SeatSession:
        if self.session is None:
            raise Refused(p.ErrorCode.FORBIDDEN, "spectators have no seat")
        return self.session

    async def left(self) -> None:
        """The connection closed: it leaves the hub, and a player's presence lease is given back."""
        conn, service = self.conn, self.conn.service
        if self.account is not None:
            service.key_holders.remove(self.account, conn)
        await service.leave_hub(self.hub, conn)
        session = self.session
        if session is not None:
            try:
                await conn.store.presence(self.race, session.seat, session.gen, conn.member, False, 0, now_ms())
            except StoreError:
                pass  # the race is gone
            except UNAVAILABLE:
                pass  # the lease runs out by itself
            else:
                if self.hub.meta is not None and self.hub.meta.status == "lobby":
                    service.free_after_lease(self.race)

    # ------------------------------------------------------------- lobby
    async def ready(self, msg: p.Ready) -> None:
        session, conn = self.player(), self.conn
        try:
            self.version = await conn.store.ready(self.race, session.seat, session.gen, msg.ready, now_ms(),
                                                  conn.countdown_ms())
        except StoreError as exc:
            if exc.code == SEAT_LEFT:
                self.seat_gone()
                return
            raise Refused(exc.code) from None

    async def leave(self, msg: p.Leave) -> None:
        """Give the lobby seat back: ``left``, then the connection closes (the seat's other
        connections hear of it from the hub)."""
        session = self.player()
        try:
            self.version = await self.conn.store.leave(self.race, session.seat, session.gen)
        except StoreError as exc:
            if exc.code == p.ErrorCode.RACE_CLOSED.value:
                raise Refused(exc.code, "the race has started: a racer gives up instead of leaving; "
                                        "the seat stays yours") from None
            raise Refused(exc.code) from None
        log("seat_left", race=self.race, seat=session.seat, peer=self.conn.peer)
        self.seat_gone()

    def seat_gone(self) -> None:
        """This connection's seat is no longer its own (given back in the lobby): say so and close."""
        self.conn.send_msg(p.Left(version=self.version))
        self.conn.close_after_queue(p.CloseCode.NORMAL)

    # ------------------------------------------------------------- moves
    async def move(self, msg: p.Move) -> None:
        """Check the move on the cached game and hand it to the store (session.py decides).

        The common case does not wait here: the store's future settles the move when Redis answers
        (:meth:`committed`, which sends the ack) and the next frame is handled only after that
        (the connection's loop). Why: waking the connection's task for every answer, then suspending
        it again for the next frame, cost more than the ack itself.
        """
        if self.session is None:
            raise Refused(p.ErrorCode.SPECTATOR_CANNOT_MOVE)
        meta = self.hub.meta
        if meta is None or meta.status == "lobby":  # settled once started: no await (see current_meta)
            meta = await self.current_meta()
        if not self.session.loaded:
            await self.reload(meta)
        self.play(msg, self.session, meta)

    def play(self, msg: p.Move, session: SeatSession, meta: RaceMeta, conflicts: int = 0) -> None:
        """Check the move and put it in flight: to the store, or (a ``seq`` already used) to the answer of
        a resend; the next frame waits for either."""
        step = session.begin(msg, meta, now_ms(), conflicts)
        if not isinstance(step, Pending):
            self.conn.apart(self.resent(msg), msg)
            return
        try:
            self.conn.in_flight = self.conn.store.commit_move(self.race, step.commit(session.seat), then=self.committed)
        except Exception as exc:  # not handed to the store: nothing in flight (the game reloads on the next move)
            session.landed(exc)
            raise

    def committed(self, future: "asyncio.Future[Any]") -> None:
        """The store's answer to the move in flight: the ack, or the slow path (a task the loop awaits)."""
        conn, session = self.conn, self.session
        conn.in_flight = None
        assert session is not None
        result: Any
        try:
            result = future.result()
        except BaseException as exc:  # what the store raised, or its cancellation (shutting down)
            result = exc
        landed = session.landed(result)
        try:
            if type(landed) is p.Ack:
                self.acked(result, landed)
                return
            if isinstance(landed, Failed):
                if landed.error is not None:
                    conn.failed(landed.error, landed.moving.msg)
                return
        finally:
            conn.release()  # held frames not taken along by an answer (the slow path below, a shutdown)
        assert isinstance(landed, CatchUp)
        conn.apart(self.catch_up(landed), landed.moving.msg)

    def acked(self, result: Committed, ack: p.Ack) -> None:
        """A stored move: its ack out, and the race's end begun if this was its last player finishing."""
        conn, hub = self.conn, self.hub
        metrics = conn.service.metrics
        metrics.moves_accepted += 1
        conn.send(p.encode(ack))
        metrics.frames_out["ack"] += 1  # send_msg's count, without its per-frame tag lookup
        assert self.session is not None
        hub.learn(result.version, self.session.seat, result.line, result.held)
        conn.service.moved_here(hub.race)
        if result.race_done:
            conn.service.end_soon(hub.race)

    async def catch_up(self, landed: CatchUp) -> None:
        """A move the store did not take as sent: another connection of the seat moved first (catch up,
        then check and send it again, as the first time), or this very move was stored before (answer it
        as a resend)."""
        moving: Moving = landed.moving
        assert self.session is not None
        if landed.retry and landed.stored < moving.step.expected_n:
            self.moves_lost(moving, landed.stored)
        if landed.retry:
            log("move_conflict", race=self.race, seat=self.session.seat, stored=landed.stored)
        await self.reload(moving.meta)
        if not landed.retry:  # a Duplicate
            await self.resent(moving.msg)
            return
        self.play(moving.msg, self.session, moving.meta, SeatSession.again(moving))

    def moves_lost(self, moving: Moving, stored: int) -> None:
        """The stored log is shorter than this connection's game: moves it acknowledged are gone (a
        Redis failover dropped writes no replica had: replica acks off, or a replica that then failed
        too). Logged as a warning with what was lost; the move is refused and the connection closed
        (1013), so the client reconnects and its ``welcome`` shows the board and ``seq`` as stored,
        instead of playing on from a board the store no longer has."""
        session = self.session
        assert session is not None
        lost = moving.step.expected_n - stored
        log("moves_lost", logging.WARNING, race=self.race, seat=session.seat, lost=lost, stored=stored,
            known=moving.step.expected_n, seq=session.seq, refused_seq=moving.msg.seq)
        session.forget()
        raise Refused(p.ErrorCode.UNAVAILABLE, f"your last {lost} move{'s' if lost != 1 else ''} did not survive "
                      "a failure of the race store: reconnect to see your board as it is now",
                      close=p.CloseCode.TRY_AGAIN_LATER)

    async def current_meta(self) -> RaceMeta:
        """The race's settings, read again from Redis only while they may still change (the lobby)."""
        meta = self.hub.meta
        if meta is None or meta.status == "lobby":
            meta = await self.conn.store.meta(self.race)
            assert meta is not None
            self.hub.set_meta(meta)
        return meta

    async def resent(self, msg: p.Move) -> None:
        """A ``seq`` already used: acknowledge the same move again, or refuse a different one."""
        session = self.player()
        state = await self.conn.store.player(self.race, session.seat)
        assert state is not None
        if state.n != session.n or not session.loaded:
            await self.reload()
        ack = session.resent(msg, state)
        # Read back from the master: acknowledged only once a replica has it too (replica acks on), as
        # when it was first stored; a resend after a WAIT that timed out is acknowledged here, once.
        await self.conn.store.replicated(self.race)
        self.conn.send_msg(ack)

    async def reload(self, meta: RaceMeta | None = None) -> SeatSession:
        """Rebuild this player's game from Redis (first use, or after another connection moved it)."""
        session, store = self.player(), self.conn.store
        meta = meta or self.hub.meta or await store.meta(self.race)
        state = await store.player(self.race, session.seat)
        assert meta is not None and state is not None
        session.load(meta, state)
        return session

    async def give_up(self, msg: p.GiveUp) -> None:
        session = self.player()
        try:
            version, race_done = await self.conn.store.give_up(self.race, session.seat, now_ms())
        except StoreError as exc:
            if exc.code == p.ErrorCode.PLAYER_FINISHED.value and (again := await self.gave_up_before()):
                self.conn.send_msg(session.gave_up(again))
                return
            raise Refused(exc.code) from None
        self.conn.send_msg(session.gave_up(version))
        log("gave_up", race=self.race, seat=session.seat)
        if race_done:
            self.conn.service.end_soon(self.race)

    async def gave_up_before(self) -> int:
        """A give-up sent again (its first answer lost, or ``unavailable`` because no replica confirmed
        it in time): the race's version if the store has this seat given up, once a replica has it too;
        0 if the seat is finished otherwise. So a resent give-up is answered ``gave_up``, as a resent move
        its ``ack``, rather than refused for the give-up it asked for."""
        session, store = self.player(), self.conn.store
        state = await store.player(self.race, session.seat)
        if state is None or state.status != "gave_up":
            return 0
        await store.replicated(self.race)
        meta = await store.meta(self.race)
        return meta.version if meta is not None else session.version

    # ------------------------------------------------------------- hints
    async def hint(self, msg: p.HintRequest) -> None:
        """A move for the player's position, from the solver; the player is marked helped.

        The reservation (rate limit, race and player checks) is one script
        before any work, so a refused request costs no solver time and
        writes nothing; the mark and the kept hint are written before the
        answer goes out, so nobody gets a hint without the mark.
        """
        if self.session is None:
            raise Refused(p.ErrorCode.FORBIDDEN, "spectators cannot ask for hints")
        session, conn = self.session, self.conn
        meta = await self.current_meta()
        if not meta.hints:
            raise Refused(p.ErrorCode.HINTS_NOT_ALLOWED)
        hints, store = conn.service.hints, conn.store
        interval = hints.settings.hint_interval
        try:
            n, previous = await store.take_hint(self.race, session.seat, now_ms(), int(interval * 1000))
        except HintRefused as exc:
            if exc.code == p.ErrorCode.HINT_TOO_SOON.value:
                raise Refused(exc.code, f"one hint every {interval:g} s: the next in "
                                        f"{exc.wait_ms / 1000:.1f} s") from None
            raise Refused(exc.code) from None
        if session.game is None or n != session.n:
            await self.reload(meta)
        assert session.game is not None
        seq = session.seq
        found, text, seconds = await hints.run(session.game.position(), previous)
        try:
            version = await store.give_hint(self.race, session.seat, text, now_ms())
        except StoreError as exc:
            raise Refused(exc.code) from None
        self.version = max(self.version, version)
        verdict = found.verdict.value
        conn.service.metrics.hint_seconds.observe(verdict, seconds)
        move = found.move.text() if found.move is not None else None
        conn.send_msg(p.HintAnswer(move=move, winning=found.from_winning_line, verdict=found.verdict.value,
                                   remaining=found.line_length if found.from_winning_line else 0,
                                   seq=seq, version=version))
        log("hint", race=self.race, seat=session.seat, verdict=verdict, seconds=round(seconds, 4), move=move)

