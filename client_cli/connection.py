"""The socket loop: the only place the client talks to the race server.

:class:`RaceLink` opens the WebSocket, says ``hello``, feeds every frame to
its :class:`~client_cli.race_state.RaceState`, and when the connection
drops it reconnects by itself with exponential backoff and jitter, sending
its player token and the last race version it saw so the server resumes
the same seat and sends only what was missed. Moves that were in flight
are resent after the ``welcome`` unless the server's ``seq`` shows they
were already played, so a move is applied once or not at all.

Screens never touch the socket: they call :meth:`RaceLink.send_move` and
friends, and redraw when ``on_update`` tells them the state changed.
"""

from __future__ import annotations

import asyncio
import enum
import random
from dataclasses import dataclass
from typing import Callable

import msgspec
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus, InvalidURI

from shared import protocol as p

from .api import server_url
from .race_state import RaceState
from .wording import network_words, unreachable_words

BACKOFF_FIRST = 0.25
BACKOFF_MAX = 5.0
"""Seconds between reconnection attempts: quick at first (a blip), never
slower than this (a restarting server should see its racers back soon)."""

OPEN_TIMEOUT = 5.0

FATAL_CLOSE_CODES = frozenset(
    {
        p.CloseCode.HELLO_REFUSED,
        p.CloseCode.VERSION_MISMATCH,
        p.CloseCode.BAD_TOKEN,
        p.CloseCode.TOO_MANY_ERRORS,
        p.CloseCode.FLOODING,
    }
)
"""Closes after which the same hello would be refused again."""


class LinkState(enum.Enum):
    CONNECTING = "connecting"
    ONLINE = "online"
    RECONNECTING = "reconnecting"
    CLOSED = "closed"


@dataclass(frozen=True)
class LinkStatus:
    """What the status bar shows about the connection."""

    state: LinkState
    detail: str = ""
    attempt: int = 0
    retry_in: float | None = None

    def text(self) -> str:
        if self.state is LinkState.ONLINE:
            return "● online"
        if self.state is LinkState.CONNECTING:
            return "◌ connecting…"
        if self.state is LinkState.RECONNECTING:
            wait = f" in {self.retry_in:.1f}s" if self.retry_in is not None else " now"
            return f"◌ offline, retry {self.attempt}{wait}"
        return f"✗ offline{': ' + self.detail if self.detail else ''}"


def backoff_delay(attempt: int, rng: random.Random | None = None) -> float:
    """Delay before reconnection ``attempt`` (1-based): doubling, capped, ±20% jitter
    so that a whole race dropped at once does not come back in one burst."""
    base = min(BACKOFF_MAX, BACKOFF_FIRST * 2 ** (attempt - 1))
    return base * (0.8 + 0.4 * (rng or random).random())


def websocket_url(server: str) -> str:
    """The race WebSocket of a server in any spelling :func:`~client_cli.api.server_url` reads."""
    return "ws" + server_url(server)[len("http"):] + WS_PATH


WS_PATH = "/ws"


def failure_words(exc: BaseException) -> str:
    """Why a connection could not be opened, short enough for one line of the table."""
    if isinstance(exc, (TimeoutError, asyncio.TimeoutError)):
        return f"no answer within {OPEN_TIMEOUT:g} s"
    if isinstance(exc, InvalidStatus):
        return f"HTTP {exc.response.status_code} instead of a race server's WebSocket"
    if isinstance(exc, InvalidHandshake):
        return "not a race server's WebSocket"
    return network_words(exc)


@dataclass(frozen=True)
class Drop:
    """How one connection ended: why (in words), and whether a WebSocket opened at all."""

    reason: str
    reached: bool


class RaceLink:
    """One race's connection, kept alive until the race ends or a hello is refused."""

    def __init__(
        self,
        server: str,
        state: RaceState,
        on_update: Callable[[str], None],
        on_status: Callable[[LinkStatus], None],
        on_welcome: Callable[[p.Welcome], None] | None = None,
    ) -> None:
        """``on_welcome`` sees every welcome before anything else does: the place to keep its token
        (renewed on each rejoin), so that a client killed right after it can still take the seat back."""
        self.server = server_url(server)
        self.url = websocket_url(server)
        self.state = state
        self.on_update = on_update
        self.on_status = on_status
        self.on_welcome = on_welcome
        self.status = LinkStatus(LinkState.CONNECTING)
        self._ws: ClientConnection | None = None
        self._closing = False
        self._welcomed = False
        self.ever_online = False
        """A ``welcome`` arrived at least once: later drops are retried, a first failure is not."""
        self._asked_afresh = False
        """A refused saved seat was followed by one immediate hello without its token."""
        self._outbox: asyncio.Queue[msgspec.Struct] = asyncio.Queue()

    # ---------------------------------------------------------------- sending
    @property
    def online(self) -> bool:
        return self._ws is not None and self._welcomed

    def post(self, message: msgspec.Struct) -> bool:
        """Queue a frame for the open connection, in order; ``False`` when offline."""
        if not self.online:
            return False
        self._outbox.put_nowait(message)
        return True

    def send_move(self, text: str) -> None:
        """Number and send a move; offline, it waits and goes out after the next welcome."""
        move = self.state.new_move(text)
        if self.online:
            self._outbox.put_nowait(move)

    def give_up(self) -> bool:
        return self.post(p.GiveUp())

    def set_ready(self, ready: bool) -> bool:
        if self.post(p.Ready(ready=ready)):
            self.state.ready = ready
            return True
        return False

    def leave(self) -> bool:
        """Ask to give the seat back (lobby only); the server answers ``left`` and closes."""
        return self.post(p.Leave())

    def start_race(self) -> bool:
        token = self.state.creator_token
        return bool(token) and self.post(p.Start(creator_token=token))

    # ------------------------------------------------------------------ loop
    def _set_status(self, status: LinkStatus) -> None:
        self.status = status
        self.on_status(status)

    async def run(self) -> None:
        """Connect, read, reconnect; returns when the race is over or cannot be joined.

        A first connection that reaches no race server ends the loop with
        ``state.fatal`` saying so: retrying for ever against a wrong address
        or a server that is not running only hides the mistake. Once a
        welcome has arrived, a drop is retried (the seat and game wait), and
        the status says why the last attempt failed.
        """
        attempt = 0
        while not self._closing:
            drop = await self._session()
            if not self.ever_online and not drop.reached and not self._closing and not self.state.fatal:
                self.state.fatal = unreachable_words(self.server, drop.reason)
            if self._closing or self.state.fatal or self.state.results is not None or self.state.left:
                detail = self.state.fatal or ("race over" if self.state.results is not None
                                              else "seat left" if self.state.left else "closed")
                self._set_status(LinkStatus(LinkState.CLOSED, detail))
                return
            if self.state.seat_gone and not self._welcomed and not self._asked_afresh:
                self._asked_afresh = True
                continue  # the saved seat is gone: ask for a new one at once (state.hello has no token now)
            attempt = 1 if self._welcomed else attempt + 1
            self._welcomed = False
            delay = backoff_delay(attempt)
            self._set_status(LinkStatus(LinkState.RECONNECTING, drop.reason, attempt, delay))
            await asyncio.sleep(delay)
            self._set_status(LinkStatus(LinkState.RECONNECTING, drop.reason, attempt, None))

    async def _session(self) -> Drop:
        """One connection from open to close; how it ended."""
        try:
            async with connect(
                self.url,
                open_timeout=OPEN_TIMEOUT,
                compression=None,
                max_size=2**20,
                proxy=None,
            ) as ws:
                self._ws = ws
                self._outbox = asyncio.Queue()
                writer = asyncio.create_task(self._write(ws))
                try:
                    await ws.send(p.encode(self.state.hello()))
                    async for data in ws:
                        if isinstance(data, str):
                            continue
                        await self._receive(ws, data)
                        if self.state.fatal:
                            await ws.close()
                            break
                finally:
                    writer.cancel()
                return Drop(self._close_reason(ws.close_code, ws.close_reason), True)
        except ConnectionClosed as exc:
            reason = self._close_reason(exc.rcvd.code if exc.rcvd else None, exc.rcvd.reason if exc.rcvd else "")
            return Drop(reason, True)
        except (OSError, TimeoutError, InvalidHandshake, asyncio.TimeoutError) as exc:
            return Drop(failure_words(exc), False)
        except InvalidURI as exc:
            self.state.fatal = f"bad server URL: {exc}"
            return Drop(self.state.fatal, False)
        finally:
            self._ws = None

    async def _write(self, ws: ClientConnection) -> None:
        """The one writer of a connection: frames leave in the order they were posted."""
        while True:
            message = await self._outbox.get()
            try:
                await ws.send(p.encode(message))
            except ConnectionClosed:
                return

    def _close_reason(self, code: int | None, reason: str) -> str:
        if code is None:
            return "connection lost"
        try:
            known = p.CloseCode(code)
        except ValueError:
            return f"closed ({code}{': ' + reason if reason else ''})"
        seat_gone = known is p.CloseCode.BAD_TOKEN and self.state.seat_gone
        if known in FATAL_CLOSE_CODES and not self.state.fatal and not seat_gone:
            self.state.fatal = known.explanation
        return known.explanation

    async def _receive(self, ws: ClientConnection, data: bytes) -> None:
        try:
            msg = p.decode_server(data)
        except p.ProtocolError as exc:
            self.on_update(f"bad frame from server: {exc}")
            return
        self.state.apply(msg)
        kind = type(msg).__name__.lower()
        if isinstance(msg, p.Welcome) and self.on_welcome is not None:
            self.on_welcome(msg)
        if isinstance(msg, p.Welcome):
            self._welcomed = self.ever_online = True
            self._set_status(LinkStatus(LinkState.ONLINE))
            for move in self.state.resend():
                self._outbox.put_nowait(move)
        self.on_update(kind)

    def close(self) -> None:
        """Stop reconnecting and close the socket (the app is quitting)."""
        self._closing = True
        ws = self._ws
        if ws is not None:
            asyncio.ensure_future(ws.close())
