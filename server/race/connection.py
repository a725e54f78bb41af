"""One WebSocket connection: decode, check, ask the engine, commit, answer.

Frames are handled one at a time in arrival order. A frame sent goes
straight to the transport while nothing is queued (no task switch per
frame); once the transport pushes back, frames wait in a bounded queue
drained by a writer task started for it, so a broadcast never waits on one
slow reader (a full queue cuts that reader loose instead).
Every frame is wrapped so that no input, and no Redis outage, can take the
server down: the worst a client gets is a typed error or a close code.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from typing import Any, Awaitable, Callable

import msgspec
from starlette.websockets import WebSocket, WebSocketDisconnect, WebSocketState

from shared import protocol as p
from shared.names import NameRefused, display_name
from shared.variants import get_variant

from ..ops.log import format_event, log, logger
from ..ops.ratelimit import TokenBucket
from ..ops.websocket import BACKLOG, Backlog
from ..players.accounts import BadKey, check_key, name_refused
from ..store import UNAVAILABLE, Committed, CommitResult, Conflict, EventKind, HintRefused, RaceMeta, StoreError
from ..store.accounts import Account
from . import rules as races
from .clock import now_ms
from .hub import RaceHub
from .service import Service
from .session import Pending, Refused, SeatSession
from .tokens import CREATOR, PLAYER, TokenError

SEAT_LEFT = "seat_left"
"""The store's word for a seat whose generation moved on: this connection no longer holds it."""

SLOW_READER_GRACE = 10.0
"""Seconds a slow reader has to read up to its close frame before its socket is dropped."""

_HELLO_FAILURES = {
    p.ErrorCode.VERSION_MISMATCH: p.CloseCode.VERSION_MISMATCH,
    p.ErrorCode.BAD_TOKEN: p.CloseCode.BAD_TOKEN,
    p.ErrorCode.TOKEN_EXPIRED: p.CloseCode.BAD_TOKEN,
}


class Connection:
    """A client's socket and what it has joined."""

    def __init__(self, ws: WebSocket, service: Service) -> None:
        cfg = service.config
        self.ws = ws
        self.service = service
        self.store = service.store
        self.queue: deque[bytes | int] | None = None
        """Frames (and at last a close code) waiting for the writer task; None while frames go out directly
        (an idle connection holds no deque: they are some 760 bytes each)."""
        self.queued_bytes = 0
        self._writer: asyncio.Task[None] | None = None
        """The task draining :attr:`queue`, while it has something to drain (None: sends go out directly)."""
        self.backlog: Backlog | None = ws.scope.get("extensions", {}).get(BACKLOG)
        """What the transport and kernel hold for the client (None under another ASGI server: frames only)."""
        self.bucket = TokenBucket(cfg.rate, cfg.burst)
        self.error_budget = TokenBucket(1.0, cfg.max_errors)
        self.flood_budget = TokenBucket(1.0, cfg.burst)
        """Frames dropped by the rate limit, refilled one a second: used up, the connection closes (4005)."""
        self.peer = f"{ws.client.host}:{ws.client.port}" if ws.client else "?"
        self.hub: RaceHub | None = None
        self.race: str | None = None
        self.role: str | None = None
        self.seat: int | None = None
        self.session: SeatSession | None = None
        """The player's seat (None for a spectator, or before hello)."""
        self.member = ""
        """This connection's presence lease name (players only)."""
        self.account: str | None = None
        """The account whose key this player connection joined with (its replacement closes it: 4008)."""
        self.key_hash = ""
        """That key's hash, as the account had it then."""
        self.gen = 0
        """The generation of the seat this connection holds: when the seat is given back in the
        lobby it changes, and this connection no longer holds it."""
        self.closing = False
        """This side decided to close: frames still arriving are not handled."""
        self.gone = False
        """Sending failed (the client went away): frames it sent before are still handled."""
        self._version = 0
        """The race version of this connection's last answer, while it has no seat."""
        self.in_flight: asyncio.Future[Any] | None = None
        """The move being stored (the store's future, or the task of its slow path): the next frame waits."""
        self._moving: tuple[p.Move, Pending, RaceMeta, int] | None = None
        """The move in flight: its frame, its pending step, the race's settings it was checked against and
        how many conflicts it met before (None once the store answered)."""
        self._held: list[bytes] | None = None
        """Frames waiting to go out with the answer to the move in flight (:meth:`hold`)."""
        self.seeking: Any = None
        """The seek this connection waits on (server/players/seeks.py's Waiting), if it sent ``seek``."""
        self._parked = False
        """This connection's task waits for the next frame, having handled every earlier one: a frame
        read now may be handled as it is read (:meth:`take_now`)."""

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

    # ---------------------------------------------------------- sending
    def send(self, data: bytes) -> None:
        """Send a frame (at once if nothing is queued); a reader too slow to keep its backlog small is cut loose.

        The backlog is the frames queued here (``send_queue`` of them at most)
        and the bytes queued, buffered by the transport or unacknowledged by
        the client's TCP (``send_bytes`` at most): counting frames alone missed
        a client that stopped reading, because its frames left the queue
        for the kernel's buffers at once.

        Why write directly: a writer task woken for every frame cost a task
        switch and an ASGI send each (about a tenth of the server's CPU per
        move); the order stays the same because a frame goes directly only
        while nothing waits in the queue and the writer is not in the middle of
        a send.
        """
        held = self._held
        if held is not None:  # frames waiting for this one go first, in the same write
            self._held = None
            held.append(data)
        if self.closing or self.gone:
            return
        backlog = self.backlog
        limit = self.service.config.send_bytes
        waiting = self.queued_bytes + (backlog.at_most() if backlog is not None else 0)
        if waiting > limit and backlog is not None:
            # Measured only when the bound says it may be too much: one system call per send_bytes
            # written to a client that reads, not one per frame.
            waiting = self.queued_bytes + backlog.unacknowledged()
        queued = len(self.queue) if self.queue is not None else 0
        if waiting > limit or queued >= self.service.config.send_queue:
            log("slow_reader", logging.WARNING, peer=self.peer, race=self.race, seat=self.seat,
                frames=queued, bytes=waiting)
            self.abort(p.CloseCode.SLOW_READER)
            if backlog is not None:
                backlog.drop_after(SLOW_READER_GRACE)
            return
        if self._writer is None and backlog is not None:
            try:
                if backlog.send_now(data) if held is None else backlog.send_all_now(held):
                    return
            except OSError:  # the client is gone, as in _writer
                self.gone = True
                return
        for frame in held or (data,):
            self.queued_bytes += len(frame)
            self._enqueue(frame)

    def hold(self, data: bytes) -> None:
        """Send a frame that need not go out before the answer to the move in flight (a progress frame):
        it waits for that answer and goes out in the same write. Any other frame sent meanwhile takes it
        along, ahead of itself, so the order the client sees is the order of the calls.

        Why: a fast player almost always has a move in flight, and each progress frame (ten a second
        a race) cost a write here and a wake-up of the client of its own; the answer comes within the
        move's round trip, a few milliseconds.
        """
        if self._moving is None:
            self.send(data)
        elif self._held is None:
            self._held = [data]
        else:
            self._held.append(data)

    def _release(self) -> None:
        """The frames :meth:`hold` kept, out now: the move in flight ended without a frame of its own."""
        held = self._held
        if held is not None:
            self._held = held[:-1] or None
            self.send(held[-1])

    def send_msg(self, msg: msgspec.Struct) -> None:
        self.send(p.encode(msg))
        self.service.metrics.sent(str(msg.__struct_config__.tag))

    def close_after_queue(self, code: p.CloseCode) -> None:
        """Close once the frames already queued (the error saying why) are out."""
        if self.closing:
            return
        if self.queue is not None and len(self.queue) >= self.service.config.send_queue:
            self.abort(code)
            return
        self.closing = True
        self._enqueue(int(code))

    def abort(self, code: p.CloseCode) -> None:
        """Close now, dropping what is queued."""
        self.closing = True
        if self.queue is not None:
            self.queue.clear()
        self.queued_bytes = 0
        self._enqueue(int(code))

    def _enqueue(self, item: bytes | int) -> None:
        """Queue behind what is waiting, and start the writer task if it is not running."""
        if self.queue is None:
            self.queue = deque()
        self.queue.append(item)
        if self._writer is None:
            self._writer = asyncio.ensure_future(self._write_queued())

    async def _write_queued(self) -> None:
        """Send what is queued, in order, waiting for the transport; done when the queue is empty."""
        queue = self.queue
        assert queue is not None
        try:
            while queue:
                item = queue.popleft()
                if isinstance(item, int):
                    await self.ws.close(item)
                    return
                self.queued_bytes -= len(item)
                await self.ws.send_bytes(item)
                if self.backlog is not None:
                    self.backlog.wrote(len(item))
        except (OSError, RuntimeError, WebSocketDisconnect):
            # The client is gone: nothing more can reach it, but the frames it sent before it went
            # are still read and applied (a move sent just before a drop is not lost).
            self.gone = True
            self.queued_bytes = 0
        finally:
            self._writer = None
            self.queue = None

    # ---------------------------------------------------------- reading
    async def run(self) -> None:
        receive: Callable[[], Awaitable[Any]] = self.ws.receive
        if self.backlog is not None:
            # Binary frames straight from the transport's reader (see ops/websocket.py), not through
            # websockets' parser and Starlette's receive; a player's move handled as it is read.
            self.backlog.read_frames(self.take_now)
            receive = self.backlog.receive
        await self.ws.accept()
        self.service.connections += 1
        self.service.metrics.connections_opened += 1
        loop = asyncio.get_running_loop()
        hello_deadline = loop.time() + self.service.config.hello_timeout
        try:
            while not (self.closing and self._writer is None):  # until this side has closed (the client's close ends below)
                if self.race is not None or self.seeking is not None:
                    # Joined (or seeking): no deadline, so a plain receive (wait_for's task and timer cost a few percent a move).
                    self._parked = True
                    try:
                        message = await receive()
                    finally:
                        self._parked = False
                else:
                    try:
                        message = await asyncio.wait_for(receive(), hello_deadline - loop.time())
                    except asyncio.TimeoutError:
                        self.refuse(p.ErrorCode.HELLO_REQUIRED, "no hello in time", close=p.CloseCode.HELLO_TIMEOUT)
                        if self._writer is not None:
                            await asyncio.wait_for(asyncio.shield(self._writer), 1.0)
                        break
                if self.in_flight is not None:
                    await self._settled()
                if type(message) is bytes:
                    await self.handle(message)
                    continue
                if message["type"] == "websocket.disconnect":
                    break
                data = message.get("bytes")
                if data is None:
                    self.refuse(p.ErrorCode.BAD_FRAME, "frames are binary msgpack, not text")
                    continue
                await self.handle(data)
        except (WebSocketDisconnect, RuntimeError, asyncio.TimeoutError):
            pass
        finally:
            if self.in_flight is not None:
                await self._settled()
            self.closing = True
            writer = self._writer
            if writer is not None:
                writer.cancel()
                await asyncio.gather(writer, return_exceptions=True)
            await self._leave()
            self.service.connections -= 1
            if self.ws.application_state != WebSocketState.DISCONNECTED:
                try:
                    await self.ws.close(p.CloseCode.NORMAL)
                except (RuntimeError, OSError, WebSocketDisconnect):
                    pass

    async def _settled(self) -> None:
        """Wait until the move in flight is answered (its slow path included); raises only this task's
        own cancellation."""
        while self.in_flight is not None:
            waiting = self.in_flight
            try:
                await asyncio.shield(waiting)
            except asyncio.CancelledError:
                if not waiting.cancelled():  # this task was cancelled, not the move: stop waiting
                    raise
            except Exception:  # answered by _committed or _after_commit, which saw the same outcome
                pass
            if self.in_flight is waiting:  # the callback has not run yet: let it
                await asyncio.sleep(0)

    async def _leave(self) -> None:
        if self.seeking is not None:
            try:
                await self.service.seeks.gone(self.seeking)
            except UNAVAILABLE:
                pass  # nobody vouches for it any more: a wave drops it
        if self.account is not None:
            self.service.key_holders.remove(self.account, self)
        if self.hub is not None:
            await self.service.leave_hub(self.hub, self)
        if self.race is not None and self.seat is not None:
            try:
                await self.store.presence(self.race, self.seat, self.gen, self.member, False, 0, now_ms())
            except StoreError:
                pass  # the race is gone
            except UNAVAILABLE:
                pass  # the lease runs out by itself
            else:
                if self.hub is not None and self.hub.meta is not None and self.hub.meta.status == "lobby":
                    self.service.free_after_lease(self.race)
        log("left", race=self.race, seat=self.seat, peer=self.peer)

    async def handle(self, data: bytes) -> None:
        """One frame in; never raises."""
        if self.closing:
            return
        msg: Any = None
        try:
            msg = p.decode_client(data)
            self._admit()
            if self.store.down:
                await self.store.check_up()
            await getattr(self, _HANDLERS[type(msg)])(msg)
        except Exception as exc:
            self.failed(exc, msg)

    def _admit(self) -> None:
        """The rate limit, one rule for every frame type: a dropped frame uses the flood allowance, never
        the error budget."""
        if not self.bucket.take():
            raise Refused(p.ErrorCode.RATE_LIMITED, close=None if self.flood_budget.take() else p.CloseCode.FLOODING)

    def take_now(self, data: bytes) -> bool:
        """Handle a frame as it is read, if it is a move that needs nothing awaited before it goes to the
        store (the common case: a player's next move, its race running, its game cached); False: the
        connection's task handles it, in order, as every other frame.

        Why: waking the task for each frame (the inbox's future, a task step, two coroutines) cost
        about a tenth of the server's CPU a move. Order holds: only while the task waits for a frame,
        with nothing queued before this one (the reader checks) and no move in flight. Never raises:
        it runs in the transport's read callback.
        """
        session, hub = self.session, self.hub
        if (not self._parked or self.in_flight is not None or self.closing or self.store.down or session is None
                or not session.loaded or hub is None):
            return False
        meta = hub.meta
        if meta is None or meta.status == "lobby":
            return False
        try:
            msg = p.decode_client(data)
        except Exception:  # the task's handle refuses it
            return False
        if type(msg) is not p.Move:
            return False
        try:
            self._admit()
            self._play(msg, session, meta)
        except Exception as exc:
            self.failed(exc, msg)
        return True

    def failed(self, exc: Exception, msg: Any) -> None:
        """Answer a frame whose handling raised: a typed refusal, ``unavailable``, or ``internal``."""
        if isinstance(exc, p.ProtocolError):
            # A refused hello always ends the connection, whichever check refused it (docs: "Close codes").
            refused_hello = exc.ref == "hello" and self.race is None
            self.refuse(exc.code, str(exc), ref=exc.ref, close=p.CloseCode.HELLO_REFUSED if refused_hello else None)
        elif isinstance(exc, Refused):
            # A refused move is play (a misclick, a race lost by a hair), not abuse; a rate-limited frame
            # is counted by the flood allowance instead.
            self.refuse(exc.code, exc.message, ref=_tag(msg), seq=getattr(msg, "seq", None), close=exc.close,
                        counts=not isinstance(msg, p.Move) and exc.code != p.ErrorCode.RATE_LIMITED.value)
        elif isinstance(exc, UNAVAILABLE):
            self.service.metrics.redis_errors += 1
            self.store.down = True
            log("redis_unavailable", logging.WARNING, peer=self.peer, race=self.race, error=exc)
            self.refuse(p.ErrorCode.UNAVAILABLE, ref=_tag(msg), seq=getattr(msg, "seq", None),
                        counts=False, close=None if self.race else p.CloseCode.TRY_AGAIN_LATER)
        else:
            # One line per frame (a client repeating the frame must not fill the log), the traceback
            # once per place of failure; counted like a bad frame, so that repeating it gets the client closed.
            _log_failure(exc, peer=self.peer, race=self.race, ref=_tag(msg))
            self.refuse(p.ErrorCode.INTERNAL, ref=_tag(msg), seq=getattr(msg, "seq", None))

    def refuse(self, code: p.ErrorCode | str, message: str | None = None, *, ref: str | None = None,
               seq: int | None = None, close: p.CloseCode | None = None, counts: bool = True) -> None:
        """Answer a refused frame with ``reject`` (moves) or ``error``, log it, and close on abuse."""
        value = code.value if isinstance(code, p.ErrorCode) else code
        message = message or p.explain(value)
        self.service.log_refused(value, peer=self.peer, race=self.race, seat=self.seat, ref=ref, detail=message)
        if ref == "move" and seq is not None:
            self.service.metrics.rejected(value)
            self.send_msg(p.Reject(seq=seq, reason=value, message=message, version=self.version))
        else:
            self.send_msg(p.Error(code=value, message=message, ref=ref))
        if close is None and counts and not self.error_budget.take():
            close = p.CloseCode.TOO_MANY_ERRORS
        if close is not None:
            log("closing", logging.WARNING, peer=self.peer, race=self.race, code=int(close), why=close.name)
            self.close_after_queue(close)

    # ----------------------------------------------------------- hello
    async def on_hello(self, msg: p.Hello) -> None:
        if self.race is not None:
            raise Refused(p.ErrorCode.ALREADY_JOINED)
        if self.seeking is not None:
            raise Refused(p.ErrorCode.ALREADY_SEEKING, "this connection waits on a seek: join the race it "
                          "is given on a new connection")
        if msg.protocol != p.PROTOCOL_VERSION:
            raise Refused(p.ErrorCode.VERSION_MISMATCH,
                          f"this server speaks protocol {p.PROTOCOL_VERSION}, the client {msg.protocol}",
                          close=p.CloseCode.VERSION_MISMATCH)
        race = await self.store.resolve(msg.race)
        meta = await self.store.meta(race) if race else None
        if meta is None:
            raise Refused(p.ErrorCode.RACE_NOT_FOUND, f"no race has id or join code {msg.race!r}",
                          close=p.CloseCode.HELLO_REFUSED)
        if msg.role == "player":
            self.member = self.service.connection_id()
        seat, token = await self._take_seat(msg, meta)
        self.race, self.role, self.seat = meta.id, msg.role, seat
        if seat is not None:
            self.session = SeatSession(seat)
        self.hub = await self.service.join_hub(meta.id, self)
        if self.account is not None:
            self.service.key_holders.add(self.account, self.key_hash, self)
        replayed = await self._welcome(token, msg.last_version)
        log("joined", race=self.race, seat=seat, role=msg.role, peer=self.peer, rejoined=msg.token is not None,
            last_version=msg.last_version, replayed=replayed)

    async def _take_seat(self, msg: p.Hello, meta: RaceMeta) -> tuple[int | None, str]:
        """The seat a player's hello takes (by token, by account, or a new one) and its renewed token."""
        if msg.role == "spectator":
            return None, ""
        now = now_ms()
        account = await self._account(msg) if msg.key is not None else None
        if msg.token is not None:
            seat, gen = await self._claim(msg.token, meta, account, now)
        else:
            seat, gen = await self._join(msg, meta, account, now)
        self.gen = gen
        self.account = account.account if account is not None else None
        self.key_hash = account.key_hash if account is not None else ""
        # A renewed token: a seat held for a long lobby and a long race must not expire under its player.
        return seat, self._player_token(meta.id, seat, gen, now)

    async def _account(self, msg: p.Hello) -> Account:
        assert msg.key is not None
        try:
            account = await check_key(self.service.accounts, msg.key)
        except BadKey as exc:
            raise Refused(p.ErrorCode.BAD_KEY, str(exc), close=p.CloseCode.HELLO_REFUSED) from None
        if (why := name_refused(account, msg.name)) is not None:
            raise Refused(p.ErrorCode.BAD_FIELD, why, close=p.CloseCode.HELLO_REFUSED)
        return account

    async def _claim(self, token: str, meta: RaceMeta, account: Account | None, now: int) -> tuple[int, int]:
        """Take back the seat a player token names: ``(seat, gen)``."""
        assert self.service.signer is not None
        named = self.service.signer.seat_of(token)
        held = await self.store.seat(meta.id, named[1]) if named and named[0] == meta.id and named[1] >= 0 else None
        try:
            claim = self.service.signer.verify(PLAYER, token, meta.id, now, held.gen if held else 0)
        except TokenError as exc:
            raise Refused(exc.code, str(exc), close=p.CloseCode.BAD_TOKEN) from None
        if held is None or held.status == "left":
            raise Refused(p.ErrorCode.BAD_TOKEN, "no such seat" if held is None else
                          "the seat was given back in the lobby: join again", close=p.CloseCode.BAD_TOKEN)
        if account is not None and held.account != account.account:
            raise Refused(p.ErrorCode.BAD_KEY, "the token's seat belongs to another player than this key",
                          close=p.CloseCode.HELLO_REFUSED)
        if account is None and held.account and \
                claim.expires - self.service.config.token_ttl * 1000 < await self.service.accounts.key_since(held.account):
            # Given before the account's key was replaced: whoever held the old key held this token too.
            raise Refused(p.ErrorCode.BAD_TOKEN, "the account's key was replaced after this token was given: "
                          "join with the new key", close=p.CloseCode.BAD_TOKEN)
        try:
            await self.store.presence(meta.id, claim.seat, held.gen, self.member, True,
                                      self.service.lease_expiry(), now)
        except StoreError as exc:  # the seat was given back between the two reads
            raise Refused(p.ErrorCode.BAD_TOKEN, f"the seat is no longer yours ({exc.code})",
                          close=p.CloseCode.BAD_TOKEN) from None
        return claim.seat, held.gen

    async def _join(self, msg: p.Hello, meta: RaceMeta, account: Account | None, now: int) -> tuple[int, int]:
        """A new seat (or, for an account, the one it holds already): ``(seat, gen)``."""
        if account is None:
            if meta.rated:
                raise Refused(p.ErrorCode.ACCOUNT_REQUIRED, close=p.CloseCode.HELLO_REFUSED)
            if msg.name is None or not msg.name.strip():
                raise Refused(p.ErrorCode.BAD_FIELD, "a new player needs a name (or an account key)",
                              close=p.CloseCode.HELLO_REFUSED)
            try:
                name = display_name(msg.name)
            except NameRefused as exc:
                raise Refused(exc.code, str(exc), close=p.CloseCode.HELLO_REFUSED) from None
            if await self.service.accounts.registered(name):
                raise Refused(p.ErrorCode.NAME_REGISTERED, close=p.CloseCode.HELLO_REFUSED)
        else:
            name = account.name
        if meta.entrants and (account is None or account.account not in meta.entrant_set):
            raise Refused(p.ErrorCode.NOT_AN_ENTRANT, close=p.CloseCode.HELLO_REFUSED)
        try:
            home0 = get_variant(meta.variant).home_at_start
            seated = await self.store.join(meta.id, name, home0, self.member, self.service.lease_expiry(), now,
                                           account.account if account is not None else None)
        except StoreError as exc:
            raise Refused(exc.code, close=p.CloseCode.HELLO_REFUSED) from None
        return seated.seat, seated.gen

    def _player_token(self, race: str, seat: int, gen: int, now: int) -> str:
        """A player token for the seat (of generation ``gen``), valid ``token_ttl`` seconds from ``now``."""
        assert self.service.signer is not None
        return self.service.signer.sign(PLAYER, race, seat, now + self.service.config.token_ttl * 1000, gen)

    async def _welcome(self, token: str, last_version: int | None) -> int | None:
        """Send ``welcome``; after a drop, replay what the client missed.

        With a ``last_version`` the history still covers, the welcome carries
        no table (the client keeps its own) and the frames it missed follow:
        ``countdown`` if the start was among them, and one ``progress`` with
        exactly the lines that differ from the table it had. Otherwise the
        welcome is a full snapshot. Returns how many events were replayed
        (None: a snapshot).
        """
        assert self.race is not None and self.hub is not None
        meta = await self.store.meta(self.race)
        assert meta is not None
        self.hub.set_meta(meta)
        version, lines = await self.store.lines(self.race)
        self.version = version
        total = get_variant(meta.variant).total_cards
        table = races.progress_lines(lines, meta.started, total)
        missed = None
        if last_version is not None and last_version <= version:
            missed = await self.store.history(self.race, last_version, version)
            if missed and any(e.kind == EventKind.LEAVE.value for e in missed):
                missed = None  # a seat left the table: only a full table drops its line
        view = None
        seq = 0
        if self.session is not None:
            await self._reload(meta)
            seq = self.session.seq
            if meta.started:
                view = self.session.view()
        now = now_ms()
        role: p.Role = "player" if self.seat is not None else "spectator"
        self.send_msg(p.Welcome(
            protocol=p.PROTOCOL_VERSION, race=races.race_info(meta, now), role=role,
            seat=self.seat, token=token, version=version if last_version is None or missed is None else last_version,
            server_time=now, view=view, seq=seq, progress=table if missed is None else [],
            resumed=missed is not None,
        ))
        if missed is not None:
            assert last_version is not None
            if meta.status == "started" and any(e.kind == "start" for e in missed):
                self.send_msg(p.Countdown(version=version, starts_at=meta.starts_at, ends_at=meta.ends_at,
                                          server_time=now, view=view))
            before = races.table_before(lines, missed, meta.started, total)
            seen = {e.seat: e for e in before}
            changed = [e for e in table if seen.get(e.seat) != e]
            if changed or version != last_version:
                self.send_msg(p.Progress(version=version, server_time=now, race_status=meta.phase(now),
                                         players=changed))
        self.hub.welcome(self, version, None if missed is None else table, lobby=meta.status == "lobby")
        if meta.status == "finished":
            blob = await self.store.results(self.race)
            if blob is not None:
                self.send_msg(p.Finished(version=meta.version, results=races.shown_results(meta, blob, now)))
        elif meta.started and now >= meta.ends_at:
            self.service.end_soon(self.race)
        return None if missed is None else len(missed)

    async def _reload(self, meta: RaceMeta | None = None) -> SeatSession:
        """Rebuild this player's game from Redis (first use, or after another connection moved it)."""
        assert self.race is not None and self.session is not None
        meta = meta or (self.hub.meta if self.hub else None) or await self.store.meta(self.race)
        state = await self.store.player(self.race, self.session.seat)
        assert meta is not None and state is not None
        if state.gen != self.gen or state.left:
            # The seat was given back in the lobby (and maybe taken by another player): never act for it.
            raise Refused(p.ErrorCode.BAD_TOKEN, "this connection's seat was given back in the lobby",
                          close=p.CloseCode.BAD_TOKEN)
        self.session.load(meta, state)
        return self.session

    # ----------------------------------------------------------- seeks
    async def on_seek(self, msg: p.Seek) -> None:
        """Wait in a seek pool on this connection (server/players/seeks.py)."""
        if self.race is not None:
            raise Refused(p.ErrorCode.ALREADY_JOINED, "this connection has joined a race: seek on a new one")
        if self.seeking is not None:
            raise Refused(p.ErrorCode.ALREADY_SEEKING, "this connection already waits on a seek; nothing "
                          "was stored")
        self.seeking = await self.service.seeks.seek(self, msg, self._client())
        entry = self.seeking.entry
        if entry.account is not None:  # the seek ends with the key it was made with (KeyHolders)
            self.account, self.key_hash = entry.account, entry.key_hash
            self.service.key_holders.add(self.account, self.key_hash, self)

    async def on_seek_cancel(self, msg: p.SeekCancel) -> None:
        if self.seeking is None:
            raise Refused(p.ErrorCode.NOT_SEEKING)
        waiting, self.seeking = self.seeking, None
        cancelled = await self.service.seeks.cancel(waiting)
        if not cancelled:
            self.seeking = waiting  # matched first: the connection keeps telling its news
        elif self.account is not None:  # a hello may follow, with another key or none
            self.service.key_holders.remove(self.account, self)
            self.account = None
        self.send_msg(p.SeekCancelled(cancelled=cancelled))

    # ----------------------------------------------------------- lobby
    async def on_create(self, msg: p.Create) -> None:
        try:
            meta, token = await self.service.create_race(msg, self._client())
        except races.CreateError as exc:
            raise Refused(exc.code, str(exc)) from None
        self.send_msg(p.Created(race=races.race_info(meta, now_ms()), creator_token=token))

    def _client(self) -> str:
        """The address this connection's creations (races, seeks) count against."""
        return self.service.client_of(self.ws.client.host if self.ws.client else None, self.ws.headers)

    def _player(self) -> tuple[str, int]:
        if self.race is None:
            raise Refused(p.ErrorCode.HELLO_REQUIRED)
        if self.seat is None:
            raise Refused(p.ErrorCode.FORBIDDEN, "spectators have no seat")
        return self.race, self.seat

    async def on_ready(self, msg: p.Ready) -> None:
        race, seat = self._player()
        try:
            self.version = await self.store.ready(race, seat, self.gen, msg.ready, now_ms(), self._countdown_ms())
        except StoreError as exc:
            if exc.code == SEAT_LEFT:
                self._seat_gone()
                return
            raise Refused(exc.code) from None

    async def on_leave(self, msg: p.Leave) -> None:
        """Give the lobby seat back: ``left``, then the connection closes (the seat's other
        connections hear of it from the hub)."""
        race, seat = self._player()
        try:
            self.version = await self.store.leave(race, seat, self.gen)
        except StoreError as exc:
            if exc.code == p.ErrorCode.RACE_CLOSED.value:
                raise Refused(exc.code, "the race has started: a racer gives up instead of leaving; "
                                        "the seat stays yours") from None
            raise Refused(exc.code) from None
        log("seat_left", race=race, seat=seat, peer=self.peer)
        self._seat_gone()

    def _seat_gone(self) -> None:
        """This connection's seat is no longer its own (given back in the lobby): say so and close."""
        self.send_msg(p.Left(version=self.version))
        self.close_after_queue(p.CloseCode.NORMAL)

    def _countdown_ms(self) -> int:
        return int(self.service.config.countdown * 1000)

    async def on_start(self, msg: p.Start) -> None:
        assert self.service.signer is not None
        try:
            claim = self.service.signer.verify(CREATOR, msg.creator_token, self.race, now_ms())
        except TokenError as exc:
            if self.race is not None and exc.code is p.ErrorCode.BAD_TOKEN:
                raise Refused(p.ErrorCode.FORBIDDEN, f"only the race's creator may start it ({exc})") from None
            raise Refused(exc.code, str(exc)) from None
        try:
            version = await self.store.start(claim.race, now_ms(), self._countdown_ms())
        except StoreError as exc:
            raise Refused(exc.code, "no player has joined yet" if exc.code == "forbidden" else None) from None
        log("race_started", race=claim.race, peer=self.peer)
        if self.race == claim.race and self.hub is not None and self.hub.welcomed(self):
            self.version = version  # the countdown comes from the hub, as to every connection of the race
            return
        # Not a connection of that race: the hub will not tell it, so the answer comes from here.
        meta = await self.store.meta(claim.race)
        assert meta is not None
        self.send_msg(p.Countdown(version=version, starts_at=meta.starts_at, ends_at=meta.ends_at,
                                  server_time=now_ms()))

    # ----------------------------------------------------------- moves
    async def on_move(self, msg: p.Move) -> None:
        """Check the move on the cached game and hand it to the store (session.py decides).

        The common case does not wait here: the store's future settles the move when Redis answers
        (:meth:`_committed`, which sends the ack) and the next frame is handled only after that
        (:meth:`run`). Why: waking this connection's task for every answer, then suspending it again
        for the next frame, cost more than the ack itself.
        """
        if self.race is None:
            raise Refused(p.ErrorCode.HELLO_REQUIRED)
        if self.session is None:
            raise Refused(p.ErrorCode.SPECTATOR_CANNOT_MOVE)
        session = self.session
        hub = self.hub
        meta = hub.meta if hub is not None else None
        if meta is None or meta.status == "lobby":  # settled once started: no await (see _current_meta)
            meta = await self._current_meta()
        if not session.loaded:
            await self._reload(meta)
        self._play(msg, session, meta)

    def _play(self, msg: p.Move, session: SeatSession, meta: RaceMeta, conflicts: int = 0) -> None:
        """Check the move and put it in flight: to the store, or (a ``seq`` already used) to the answer of
        a resend; the next frame waits for either (:meth:`run`)."""
        assert self.race is not None
        step = session.check(msg, meta, now_ms())
        if not isinstance(step, Pending):
            self._apart(self._resent(msg), msg)
            return
        self._moving = (msg, step, meta, conflicts)
        self.in_flight = self.store.commit_move(self.race, step.commit(session.seat), then=self._committed)

    def _apart(self, handling: Awaitable[None], msg: Any) -> None:
        """Put a frame's handling in flight as a task of its own, answering what it raises; the next
        frame waits until it is over."""
        task = asyncio.ensure_future(self._answer(handling, msg))
        self.in_flight = task
        task.add_done_callback(self._landed)

    async def _answer(self, handling: Awaitable[None], msg: Any) -> None:
        try:
            await handling
        except Exception as exc:
            self.failed(exc, msg)

    def _landed(self, task: "asyncio.Future[Any]") -> None:
        if self.in_flight is task:
            self.in_flight = None

    def _committed(self, future: "asyncio.Future[Any]") -> None:
        """The store's answer to the move in flight: the ack, or the slow path (a task :meth:`run` awaits)."""
        self.in_flight = None
        assert self._moving is not None
        msg, step, meta, conflicts = self._moving
        self._moving = None
        session = self.session
        assert session is not None
        try:
            result = future.result()
            ack = session.settle(step, result)
            if isinstance(result, Committed) and ack is not None:
                self._acked(result, ack)
                return
        except StoreError as exc:  # the race or the player refused it: nothing was stored
            step.revert()
            self.failed(Refused(exc.code), msg)
            return
        except asyncio.CancelledError:  # shutting down: whether Redis applied it is unknown
            session.forget()
            return
        except Exception as exc:
            # Unknown whether Redis applied it: forget the cached game, reload on the next move
            # (a resend of this seq is then acknowledged as a duplicate if it did go through).
            session.forget()
            self.failed(exc, msg)
            return
        finally:
            self._release()  # held frames not taken along by an answer (the slow path below, a shutdown)
        self._apart(self._after_commit(msg, result, meta, conflicts), msg)

    def _acked(self, result: Committed, ack: p.Ack) -> None:
        """A stored move: its ack out, and the race's end begun if this was its last player finishing."""
        metrics = self.service.metrics
        metrics.moves_accepted += 1
        self.send(p.encode(ack))
        metrics.frames_out["ack"] += 1  # send_msg's count, without its per-frame tag lookup
        hub = self.hub
        if hub is not None and self.session is not None:
            hub.learn(result.version, self.session.seat, result.line, result.held)
            self.service.moved_here(hub.race)
            if result.race_done:
                self.service.end_soon(hub.race)

    async def _after_commit(self, msg: p.Move, result: CommitResult, meta: RaceMeta, conflicts: int) -> None:
        """A move the store did not take as sent: another connection of the seat moved first (catch up,
        then check and send it again, as the first time), or this very move was stored before (answer it
        as a resend)."""
        assert self.race is not None and self.session is not None
        if isinstance(result, Conflict):
            log("move_conflict", race=self.race, seat=self.session.seat, stored=result.n)
        await self._reload(meta)
        if not isinstance(result, Conflict):  # a Duplicate
            await self._resent(msg)
            return
        if conflicts >= MOVE_RETRIES:
            raise Refused(p.ErrorCode.INTERNAL, "the move kept conflicting with other connections")
        self._play(msg, self.session, meta, conflicts + 1)

    async def _current_meta(self) -> RaceMeta:
        """The race's settings, read again from Redis only while they may still change (the lobby)."""
        assert self.hub is not None and self.race is not None
        meta = self.hub.meta
        if meta is None or meta.status == "lobby":
            meta = await self.store.meta(self.race)
            assert meta is not None
            self.hub.set_meta(meta)
        return meta

    async def _resent(self, msg: p.Move) -> None:
        """A ``seq`` already used: acknowledge the same move again, or refuse a different one."""
        assert self.race is not None and self.session is not None
        state = await self.store.player(self.race, self.session.seat)
        assert state is not None
        if state.n != self.session.n or not self.session.loaded:
            await self._reload()
        self.send_msg(self.session.resent(msg, state))

    async def on_give_up(self, msg: p.GiveUp) -> None:
        race, seat = self._player()
        try:
            self.version, race_done = await self.store.give_up(race, seat, now_ms())
        except StoreError as exc:
            raise Refused(exc.code) from None
        if self.session is not None:
            self.session.done = True
        self.send_msg(p.GaveUp(version=self.version))
        log("gave_up", race=race, seat=seat)
        if race_done:
            self.service.end_soon(race)

    # ----------------------------------------------------------- hints
    async def on_hint(self, msg: p.HintRequest) -> None:
        """A move for the player's position, from the solver; the player is marked helped.

        The reservation (rate limit, race and player checks) is one script
        before any work, so a refused request costs no solver time and
        writes nothing; the mark and the kept hint are written before the
        answer goes out, so nobody gets a hint without the mark.
        """
        if self.race is None:
            raise Refused(p.ErrorCode.HELLO_REQUIRED)
        if self.seat is None:
            raise Refused(p.ErrorCode.FORBIDDEN, "spectators cannot ask for hints")
        meta = await self._current_meta()
        if not meta.hints:
            raise Refused(p.ErrorCode.HINTS_NOT_ALLOWED)
        cfg = self.service.config
        try:
            n, previous = await self.store.take_hint(self.race, self.seat, now_ms(), int(cfg.hint_interval * 1000))
        except HintRefused as exc:
            if exc.code == p.ErrorCode.HINT_TOO_SOON.value:
                raise Refused(exc.code, f"one hint every {cfg.hint_interval:g} s: the next in "
                                        f"{exc.wait_ms / 1000:.1f} s") from None
            raise Refused(exc.code) from None
        session = self.session
        assert session is not None
        if session.game is None or n != session.n:
            await self._reload(meta)
        assert session.game is not None
        seq = session.seq
        found, text, seconds = await self.service.hints.run(session.game.position(), previous, cfg.hint_budget)
        try:
            version = await self.store.give_hint(self.race, self.seat, text, now_ms())
        except StoreError as exc:
            raise Refused(exc.code) from None
        self.version = max(self.version, version)
        verdict = found.verdict.value
        self.service.metrics.hint_seconds.observe(verdict, seconds)
        self.send_msg(p.HintAnswer(
            move=found.move.text() if found.move is not None else None, winning=found.from_winning_line,
            verdict=found.verdict.value, remaining=found.line_length if found.from_winning_line else 0,
            seq=seq, version=version,
        ))
        log("hint", race=self.race, seat=self.seat, verdict=verdict, seconds=round(seconds, 4),
            move=found.move.text() if found.move is not None else None)

    async def on_ping(self, msg: p.Ping) -> None:
        self.send_msg(p.Pong(nonce=msg.nonce, server_time=now_ms()))


MOVE_RETRIES = 2
"""Times a move is checked and sent again after a conflict before it is given up (a seat's connections
racing each other that long is a bug, not play)."""

_HANDLERS: dict[type, str] = {
    p.Hello: "on_hello",
    p.Create: "on_create",
    p.Ready: "on_ready",
    p.Start: "on_start",
    p.Move: "on_move",
    p.GiveUp: "on_give_up",
    p.Ping: "on_ping",
    p.HintRequest: "on_hint",
    p.Leave: "on_leave",
    p.Seek: "on_seek",
    p.SeekCancel: "on_seek_cancel",
}
"""The name of the handler of each client frame type: one table for every connection (not a dict of bound
methods in each), read by name so that a handler replaced on the class is the one called."""

_FAILED_AT: set[tuple[str, str, int]] = set()
"""Places (exception type, file, line) whose traceback this process has logged already."""


def _log_failure(exc: Exception, **fields: Any) -> None:
    """One ``frame_failed`` line; the traceback only the first time this place fails."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    where = (type(exc).__name__, tb.tb_frame.f_code.co_filename if tb else "?", tb.tb_lineno if tb else 0)
    first = where not in _FAILED_AT and len(_FAILED_AT) < 1000
    if first:
        _FAILED_AT.add(where)
    line = format_event("frame_failed", {**fields, "error": f"{where[0]}: {str(exc)[:200]}",
                                         "at": f"{where[1]}:{where[2]}"})
    logger.error(line, exc_info=exc if first else None)


def _tag(msg: Any) -> str | None:
    return type(msg).__struct_config__.tag if msg is not None else None
