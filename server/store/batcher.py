"""Group commit: the moves that arrive while one round trip is under way go together in the next."""

from __future__ import annotations

import asyncio
import functools
import time
from typing import Any

import msgspec
from redis.exceptions import NoScriptError, ResponseError

from ..ops.metrics import Timer
from .keys import Keys
from .records import CommitResult, StoreError, decode_commit

_pack = msgspec.msgpack.Encoder().encode
LANES = 2
_MOVE_HEAD = b"\x99"
"""A msgpack array of nine: the race's number in the call, then a move's eight fields (moves.lua)."""
_Item = tuple[int, bytes, "asyncio.Future[CommitResult]"]
"""A pending move: its seat, its packed fields, its caller's future."""
"""Round trips under way at once: while one lane waits for Redis, the moves that arrive go out on the other."""


class MoveBatcher:
    """Moves that arrive while a round trip is under way go together in the next one.

    Why: redis-py spends most of a call's cost in Python, per command and per
    argument (design.md: about 8,000 sequential EVALSHA a second on one
    connection). On one Redis every pending move goes in one script call
    (moves.lua takes the moves of many races): one write and one read for
    everything waiting, and Redis runs one script, not one a race. On a Redis
    Cluster a script's keys must share a slot, so there it is one call a race,
    sent concurrently, each to its race's node (redis-py refuses script calls
    in a cluster pipeline). Each move is still checked and applied atomically, in
    arrival order.
    """

    def __init__(self, redis: Any, script: Any, tick_ms: int, cluster: bool = False,
                 timer: Timer | None = None) -> None:
        self.redis = redis
        self.script = script
        self.tick_ms = tick_ms
        self.cluster = cluster
        self.timer = timer
        self._pending: dict[str, list[_Item]] = {}
        self._idle = [_Lane() for _ in range(LANES)]
        """The lanes not flushing now (each flushes what is pending, one round trip at a time)."""
        self._loop: asyncio.AbstractEventLoop | None = None

    def call(self, race: str, seat: int, fields: list[Any]) -> "asyncio.Future[CommitResult]":
        """Commit one move (``fields`` as moves.lua reads them): a future of its result, which raises
        :class:`StoreError` for a refusal. A plain function returning the future, not a coroutine: one
        coroutine frame fewer to make and resume per move."""
        loop = self._loop
        if loop is None or not loop.is_running():  # asyncio.get_running_loop() makes a system call (getpid)
            loop = self._loop = asyncio.get_running_loop()
        fut: asyncio.Future[CommitResult] = loop.create_future()
        items = self._pending.get(race)
        if items is None:
            items = self._pending[race] = []
        items.append((seat, _pack(fields)[1:], fut))  # the fields without their array header (see _calls)
        if self._idle:
            lane = self._idle.pop()
            lane.task = loop.create_task(self._flush(lane))
        return fut

    def _calls(self, batch: dict[str, list[_Item]]) -> list[tuple[list[str], list[Any], list[_Item]]]:
        """The script calls for a batch: every race in one on one Redis, a race each on a Cluster (a
        script's keys share one slot there). Each: its keys, its args, and its moves in reply order."""
        groups = [[race] for race in batch] if self.cluster else [list(batch)]
        out = []
        for races in groups:
            keys: list[str] = []
            for race in races:
                k = Keys(race)
                keys += [k.meta, k.progress, k.history, k.tick]
            moves: list[bytes] = []
            items: list[_Item] = []
            for r, race in enumerate(races, 1):
                k = Keys(race)
                for item in batch[race]:
                    keys += [k.player(item[0]), k.log(item[0])]
                    moves.append(_MOVE_HEAD + _pack(r) + item[1])
                items += batch[race]
            out.append((keys, [_pack_list(moves), self.tick_ms, len(races)], items))
        return out

    async def _round_trip(self, calls: list[tuple[list[str], list[Any], list[_Item]]], lane: "_Lane") -> list[Any]:
        if self.cluster:
            return list(await asyncio.gather(*(self.script(keys=k, args=a) for k, a, _ in calls),
                                             return_exceptions=True))
        if lane.conn is None:
            lane.conn = await self.redis.connection_pool.get_connection()
        conn = lane.conn
        return list(await conn.retry.call_with_retry(lambda: self._exchange(conn, calls),
                                                     lambda _error: conn.disconnect()))

    async def _exchange(self, conn: Any, calls: list[tuple[list[str], list[Any], list[_Item]]]) -> list[Any]:
        """One write of every call, then their replies in order (a call Redis has no script for is
        loaded and sent again).

        Why not redis-py's pipeline: for a batch of a few moves a race, its per-command packing, per-flush
        SCRIPT EXISTS round trip and pool checkout cost more than the moves' own checks (measured: about
        a fifth of the server's CPU a move). The commands' bytes are built here from cached pieces (a
        key's RESP bulk string is the same every move), through the same connection, parser and retry.
        """
        sha = self.script.sha
        await conn.send_packed_command(b"".join(_evalsha(sha, keys, args) for keys, args, _ in calls),
                                       check_health=False)
        results: list[Any] = []
        for _call in calls:
            try:
                results.append(await conn.read_response())
            except NoScriptError:
                results.append(None)
            except ResponseError as exc:
                results.append(exc)
        for i, (keys, args, _) in enumerate(calls):
            if results[i] is None:  # Redis forgot the script (flushed, restarted): loaded again by redis-py
                try:
                    results[i] = await self.script(keys=keys, args=args)
                except ResponseError as exc:
                    results[i] = exc
        return results

    async def _flush(self, lane: "_Lane") -> None:
        try:
            while self._pending:
                batch, self._pending = self._pending, {}
                started = time.perf_counter()
                try:
                    calls = self._calls(batch)
                    results = await self._round_trip(calls, lane)
                except BaseException as exc:  # the round trip failed: every caller hears it
                    error = exc if isinstance(exc, Exception) else ConnectionError(repr(exc))
                    for items in batch.values():
                        for _, _, fut in items:
                            if not fut.done():
                                fut.set_exception(error)
                    if not isinstance(exc, Exception):
                        raise
                    continue
                if self.timer is not None:
                    self.timer("moves", time.perf_counter() - started)
                for (_, _, items), result in zip(calls, results):
                    for i, (_, _, fut) in enumerate(items):
                        if fut.done():
                            continue
                        if isinstance(result, BaseException):
                            fut.set_exception(result)
                            continue
                        try:
                            fut.set_result(decode_commit(result[i]))
                        except StoreError as exc:
                            fut.set_exception(exc)
        finally:
            lane.task = None
            self._idle.append(lane)


class _Lane:
    """One flusher: its task while it runs, and its own pooled connection (single Redis), taken at its
    first flush and kept (closing the client closes it)."""

    __slots__ = ("task", "conn")

    def __init__(self) -> None:
        self.task: asyncio.Task[None] | None = None
        self.conn: Any = None


@functools.lru_cache(maxsize=1 << 16)
def _bulk(value: str | bytes) -> bytes:
    """A RESP bulk string: a race's keys recur in every flush, so each is encoded once."""
    data = value.encode() if isinstance(value, str) else value
    return b"$%d\r\n%s\r\n" % (len(data), data)


def _evalsha(sha: str, keys: list[str], args: list[Any]) -> bytes:
    """``EVALSHA sha numkeys keys... args...`` as RESP (args: bytes, or whole numbers)."""
    parts = [b"*%d\r\n$7\r\nEVALSHA\r\n" % (3 + len(keys) + len(args)), _bulk(sha), _bulk(str(len(keys)))]
    parts += [_bulk(key) for key in keys]
    for arg in args:
        data = arg if isinstance(arg, bytes) else str(arg).encode()
        parts.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(parts)


def _pack_list(packed_items: list[bytes]) -> bytes:
    """A msgpack array of already packed items (no decode and re-encode)."""
    n = len(packed_items)
    head = bytes([0x90 | n]) if n < 16 else (b"\xdc" + n.to_bytes(2, "big"))
    return head + b"".join(packed_items)
