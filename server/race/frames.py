"""Which handler takes each client frame, the rate limit every frame meets, and the answer to a failure.

Why apart from the connection (:mod:`.connection`): these are the rules of the conversation, the same
for every socket: the pump only calls them.
"""

from __future__ import annotations

import logging
from typing import Any, Awaitable, Callable

from shared import protocol as p

from ..ops.log import format_event, log, logger
from ..store import UNAVAILABLE, RaceMeta, StoreError
from . import rules as races
from .clock import now_ms
from .seat import Joined, Pump, Stage
from .seating import take_seat
from .session import Refused, SeatSession
from .tokens import CREATOR, TokenError
from .welcome import welcome


def joined(conn: Pump) -> Joined:
    """The race the connection joined; a frame of a race before any hello is refused."""
    if conn.joined is None:
        raise Refused(p.ErrorCode.HELLO_REQUIRED)
    return conn.joined


async def on_create(conn: Pump, msg: p.Create) -> None:
    try:
        meta, token = await conn.service.create_race(msg, conn.client())
    except races.CreateError as exc:
        raise Refused(exc.code, str(exc)) from None
    conn.send_msg(p.Created(race=races.race_info(meta, now_ms()), creator_token=token))


async def on_start(conn: Pump, msg: p.Start) -> None:
    """Start a race by its creator token (from any connection: the creator need not play)."""
    assert conn.service.signer is not None
    mine = conn.joined
    try:
        claim = conn.service.signer.verify(CREATOR, msg.creator_token, mine.race if mine else None, now_ms())
    except TokenError as exc:
        if mine is not None and exc.code is p.ErrorCode.BAD_TOKEN:
            raise Refused(p.ErrorCode.FORBIDDEN, f"only the race's creator may start it ({exc})") from None
        raise Refused(exc.code, str(exc)) from None
    try:
        version = await conn.store.start(claim.race, now_ms(), conn.countdown_ms())
    except StoreError as exc:
        raise Refused(exc.code, "no player has joined yet" if exc.code == "forbidden" else None) from None
    log("race_started", race=claim.race, peer=conn.peer)
    if mine is not None and mine.race == claim.race and mine.hub.welcomed(conn):
        mine.version = version  # the countdown comes from the hub, as to every connection of the race
        return
    # Not a connection of that race: the hub will not tell it, so the answer comes from here.
    meta = await conn.store.meta(claim.race)
    assert meta is not None
    conn.send_msg(p.Countdown(version=version, starts_at=meta.starts_at, ends_at=meta.ends_at, server_time=now_ms()))


async def on_ping(conn: Pump, msg: p.Ping) -> None:
    conn.send_msg(p.Pong(nonce=msg.nonce, server_time=now_ms()))


async def on_ready(conn: Pump, msg: p.Ready) -> None:
    await joined(conn).ready(msg)


async def on_leave(conn: Pump, msg: p.Leave) -> None:
    await joined(conn).leave(msg)


async def on_move(conn: Pump, msg: p.Move) -> None:
    await joined(conn).move(msg)


async def on_give_up(conn: Pump, msg: p.GiveUp) -> None:
    await joined(conn).give_up(msg)


async def on_hint(conn: Pump, msg: p.HintRequest) -> None:
    await joined(conn).hint(msg)


async def on_hello(conn: Pump, msg: p.Hello) -> None:
    """Join a race: take a seat (a player) or watch, join its hub, and be welcomed."""
    if conn.stage is Stage.JOINED:
        raise Refused(p.ErrorCode.ALREADY_JOINED)
    if conn.stage is Stage.SEEKING:
        raise Refused(p.ErrorCode.ALREADY_SEEKING, "this connection waits on a seek: join the race it "
                      "is given on a new connection")
    if msg.protocol != p.PROTOCOL_VERSION:
        raise Refused(p.ErrorCode.VERSION_MISMATCH,
                      f"this server speaks protocol {p.PROTOCOL_VERSION}, the client {msg.protocol}",
                      close=p.CloseCode.VERSION_MISMATCH)
    race = await conn.store.resolve(msg.race)
    meta = await conn.store.meta(race) if race else None
    if meta is None:
        raise Refused(p.ErrorCode.RACE_NOT_FOUND, f"no race has id or join code {msg.race!r}",
                      close=p.CloseCode.HELLO_REFUSED)
    taken, session = None, None
    if msg.role == "player":
        conn.member = conn.service.connection_id()
        taken = await take_seat(conn.service, msg, meta, conn.member)
        session = SeatSession(taken.seat, taken.gen)
        conn.seat, conn.gen = taken.seat, taken.gen
    hub = await conn.service.join_hub(meta.id, conn)
    joined = conn.joined = Joined(conn, meta.id, hub, session, taken.account if taken else None,
                                  taken.key_hash if taken else "")
    conn.stage = Stage.JOINED
    if joined.account is not None:
        conn.service.key_holders.add(joined.account, joined.key_hash, conn)

    async def player(meta: RaceMeta) -> SeatSession:
        """The seat loaded, and marked as answered (store.welcomed) once nothing but the welcome is left to
        do: the start gives back a seat whose welcome never went out, so the mark must not come after it
        (a start in between would give back the seat of a player just welcomed), nor fail unseen before
        it (a failed mark fails the hello, as any Redis failure in it does: its retry is answered)."""
        loaded = await joined.reload(meta)
        assert taken is not None
        await conn.store.welcomed(meta.id, taken.seat, taken.gen)
        return loaded
    replayed = await welcome(hub, conn, conn.send_msg, msg.last_version, end_soon=conn.service.end_soon,
                             token=taken.token if taken else "", player=player if session else None)
    log("joined", race=meta.id, seat=conn.seat, role=msg.role, peer=conn.peer, rejoined=msg.token is not None,
        last_version=msg.last_version, replayed=replayed)


async def on_seek(conn: Pump, msg: p.Seek) -> None:
    """Wait in a seek pool on this connection: the lobby's handler's business (server/players/seeks.py), the
    connection only knows it is seeking."""
    if conn.stage is Stage.JOINED:
        raise Refused(p.ErrorCode.ALREADY_JOINED, "this connection has joined a race: seek on a new one")
    if conn.lobby is None:
        raise Refused(p.ErrorCode.FORBIDDEN, "this server takes no seeks")
    await conn.lobby.seek(conn, msg, conn.client())
    conn.stage = Stage.SEEKING


async def on_seek_cancel(conn: Pump, msg: p.SeekCancel) -> None:
    if conn.stage is not Stage.SEEKING or conn.lobby is None:
        raise Refused(p.ErrorCode.NOT_SEEKING)
    if await conn.lobby.cancel(conn, msg):
        conn.stage = Stage.HELLO  # a hello may follow, with another key or none


HANDLERS: dict[type, str] = {
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
"""The name of the handler (in this module) of each client frame type: one table for every connection (not a
dict of bound methods in each), read by name so that a handler replaced in the module is the one called."""


def dispatch(conn: Pump, msg: Any) -> Awaitable[None]:
    """A decoded frame's handling, by its handler (to await: no coroutine of its own in between)."""
    handler: Callable[[Pump, Any], Awaitable[None]] = globals()[HANDLERS[type(msg)]]
    return handler(conn, msg)


def admit(conn: Pump) -> None:
    """The rate limit, one rule for every frame type: a dropped frame uses the flood allowance, never
    the error budget."""
    if not conn.bucket.take():
        flood = conn.error_budgets()[1]
        raise Refused(p.ErrorCode.RATE_LIMITED, close=None if flood.take() else p.CloseCode.FLOODING)


def answer_failure(conn: Pump, exc: Exception, msg: Any) -> None:
    """Answer a frame whose handling raised: a typed refusal, ``unavailable``, or ``internal``."""
    race = conn.joined.race if conn.joined is not None else None
    if isinstance(exc, p.ProtocolError):
        # A refused hello always ends the connection, whichever check refused it (docs: "Close codes").
        refused_hello = exc.ref == "hello" and race is None
        conn.refuse(exc.code, str(exc), ref=exc.ref, close=p.CloseCode.HELLO_REFUSED if refused_hello else None)
    elif isinstance(exc, p.Refusal):  # any layer's refusal, answered as it says (Refused adds a close)
        # A refused move is play (a misclick, a race lost by a hair), not abuse; a rate-limited frame
        # is counted by the flood allowance instead.
        conn.refuse(exc.value, exc.message, ref=_tag(msg), seq=getattr(msg, "seq", None), close=exc.close,
                    counts=not isinstance(msg, p.Move) and exc.value != p.ErrorCode.RATE_LIMITED.value)
    elif isinstance(exc, UNAVAILABLE):
        conn.service.metrics.redis_errors += 1
        conn.store.down = True
        log("redis_unavailable", logging.WARNING, peer=conn.peer, race=race, error=exc)
        # A hello that failed closes 1013 (docs: "Close codes") even once it has joined its race: it
        # failed before its welcome, and the client's retry, on a new connection, is the way to one.
        failed_hello = race is None or isinstance(msg, p.Hello)
        conn.refuse(p.ErrorCode.UNAVAILABLE, ref=_tag(msg), seq=getattr(msg, "seq", None),
                    counts=False, close=p.CloseCode.TRY_AGAIN_LATER if failed_hello else None)
    else:
        # One line per frame (a client repeating the frame must not fill the log), the traceback
        # once per place of failure; counted like a bad frame, so that repeating it gets the client closed.
        _log_failure(exc, peer=conn.peer, race=race, ref=_tag(msg))
        conn.refuse(p.ErrorCode.INTERNAL, ref=_tag(msg), seq=getattr(msg, "seq", None))


def refuse(conn: Pump, code: p.ErrorCode | str, message: str | None = None, *, ref: str | None = None,
           seq: int | None = None, close: p.CloseCode | None = None, counts: bool = True) -> None:
    """Answer a refused frame with ``reject`` (moves) or ``error``, log it, and close on abuse."""
    value = code.value if isinstance(code, p.ErrorCode) else code
    message = message or p.explain(value)
    race = conn.joined.race if conn.joined is not None else None
    conn.service.log_refused(value, peer=conn.peer, race=race, seat=conn.seat, ref=ref, detail=message)
    if ref == "move" and seq is not None:
        conn.service.metrics.rejected(value)
        conn.send_msg(p.Reject(seq=seq, reason=value, message=message,
                               version=conn.joined.version if conn.joined is not None else 0))
    else:
        conn.send_msg(p.Error(code=value, message=message, ref=ref))
    if close is None and counts and not conn.error_budgets()[0].take():
        close = p.CloseCode.TOO_MANY_ERRORS
    if close is not None:
        log("closing", logging.WARNING, peer=conn.peer, race=race, code=int(close), why=close.name)
        conn.close_after_queue(close)


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
