"""A listener's welcome to a race, and after a drop the replay of what it missed: written once.

Both kinds of spectator (a WebSocket connection, :mod:`server.race.connection`, and a browser's event
stream, :mod:`server.web.sse`) and every player are welcomed by :func:`welcome`; only the encoding of
the frames differs, so the caller hands over how to send one (``emit``). Why once: the two copies this
replaced had already drifted apart (a WebSocket welcome missed the race's end when it was announced
while the welcome was being read; the stream's caught it by reading the race a second time, every time).
"""

from __future__ import annotations

from typing import Awaitable, Callable

import msgspec

from shared import protocol as p
from shared.variants import get_variant

from ..store import EventKind, RaceMeta
from . import rules as races
from .clock import now_ms
from .hub import Listener, RaceHub
from .session import SeatSession

Emit = Callable[[msgspec.Struct], None]
"""Sends one frame to the listener being welcomed, in its encoding."""


async def welcome(hub: RaceHub, listener: Listener, emit: Emit, last_version: int | None, *,
                  end_soon: Callable[[str], None], token: str = "",
                  player: Callable[[RaceMeta], Awaitable[SeatSession]] | None = None) -> int | None:
    """Send ``welcome`` to ``listener`` (joined to ``hub`` already); after a drop, replay what it missed.

    With a ``last_version`` the history still covers, the welcome carries
    no table (the client keeps its own) and the frames it missed follow:
    ``countdown`` if the start was among them, and one ``progress`` with
    exactly the lines that differ from the table it had. Otherwise the
    welcome is a full snapshot. ``player`` loads a player's seat (its
    ``seq``, and its board once the race runs). Returns how many events
    were replayed (None: a snapshot). Raises :class:`LookupError` if the
    race is gone.
    """
    store, race = hub.parts.store, hub.race
    meta = await store.meta(race)
    if meta is None:
        raise LookupError(race)
    hub.set_meta(meta)
    version, lines = await store.lines(race)
    total = get_variant(meta.variant).total_cards
    table = races.progress_lines(lines, meta.started, total)
    missed = None
    if last_version is not None and last_version <= version:
        missed = await store.history(race, last_version, version)
        if missed and any(e.kind == EventKind.LEAVE.value for e in missed):
            missed = None  # a seat left the table: only a full table drops its line
    view, seq = None, 0
    if player is not None:
        session = await player(meta)
        seq = session.seq
        if meta.started:
            view = session.view()
    now = now_ms()
    resumed = missed is not None
    emit(p.Welcome(
        protocol=p.PROTOCOL_VERSION, race=races.race_info(meta, now), role="player" if player else "spectator",
        seat=listener.seat, token=token, version=last_version if resumed and last_version is not None else version,
        server_time=now, view=view, seq=seq, progress=[] if resumed else table, resumed=resumed,
    ))
    if missed is not None:
        assert last_version is not None
        if meta.status == "started" and any(e.kind == EventKind.START.value for e in missed):
            emit(p.Countdown(version=version, starts_at=meta.starts_at, ends_at=meta.ends_at, server_time=now,
                             view=view))
        seen = {e.seat: e for e in races.table_before(lines, missed, meta.started, total)}
        changed = [e for e in table if seen.get(e.seat) != e]
        if changed or version != last_version:
            emit(p.Progress(version=version, server_time=now, race_status=meta.phase(now), players=changed))
    hub.welcome(listener, version, table if resumed else None, lobby=meta.status == "lobby")
    if meta.status != "finished":
        if meta.started and now >= meta.ends_at:
            end_soon(race)
        if not hub.announced(EventKind.END):
            return None if missed is None else len(missed)
        # The hub announced the end while this welcome was read: the announcement passed the listener by.
        meta = await store.meta(race)
    if meta is not None and meta.status == "finished":
        blob = await store.results(race)
        if blob is not None:
            emit(p.Finished(version=meta.version, results=races.shown_results(meta, blob, now_ms())))
    return None if missed is None else len(missed)
