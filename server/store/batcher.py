"""Group commit: the moves that arrive while one round trip is under way go together in the next."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import msgspec

from ..ops.metrics import Timer
from .keys import Keys
from .records import CommitResult, StoreError, decode_commit

_pack = msgspec.msgpack.Encoder().encode


class MoveBatcher:
    """Moves that arrive while a round trip is under way go together in the next one.

    Why: redis-py spends most of a call's cost in Python, per command and per
    argument (design.md: about 8,000 sequential EVALSHA a second on one
    connection). Pending moves are grouped by race, one script call per race
    (a script never touches two races' keys), all calls in one pipeline: one
    write and one read for everything waiting. On a Redis Cluster redis-py
    refuses script calls in a pipeline ("Calling pipelined function evalsha
    is blocked"), so there the per-race calls go out concurrently, each to
    its race's node. Each move is still checked and applied atomically, in
    arrival order.
    """

    def __init__(self, redis: Any, script: Any, tick_ms: int, cluster: bool = False,
                 timer: Timer | None = None) -> None:
        self.redis = redis
        self.script = script
        self.tick_ms = tick_ms
        self.cluster = cluster
        self.timer = timer
        self._pending: dict[str, list[tuple[int, bytes, asyncio.Future[CommitResult]]]] = {}
        self._flusher: asyncio.Task[None] | None = None

    def call(self, race: str, seat: int, fields: list[Any]) -> "asyncio.Future[CommitResult]":
        """Commit one move (``fields`` as moves.lua reads them): a future of its result, which raises
        :class:`StoreError` for a refusal. A plain function returning the future, not a coroutine: one
        coroutine frame fewer to make and resume per move."""
        fut: asyncio.Future[CommitResult] = asyncio.get_running_loop().create_future()
        items = self._pending.get(race)
        if items is None:
            items = self._pending[race] = []
        items.append((seat, _pack(fields), fut))
        if self._flusher is None:
            self._flusher = asyncio.ensure_future(self._flush())
        return fut

    def _calls(self, batch: dict[str, list[tuple[int, bytes, asyncio.Future[CommitResult]]]]) -> list[tuple[list[str], list[Any]]]:
        out = []
        for race, items in batch.items():
            k = Keys(race)
            keys = [k.meta, k.progress, k.history, k.tick]
            for seat, _, _ in items:
                keys += [k.player(seat), k.log(seat)]
            out.append((keys, [_pack_list([fields for _, fields, _ in items]), self.tick_ms]))
        return out

    async def _round_trip(self, calls: list[tuple[list[str], list[Any]]]) -> list[Any]:
        if self.cluster:
            return list(await asyncio.gather(*(self.script(keys=k, args=a) for k, a in calls),
                                             return_exceptions=True))
        async with self.redis.pipeline(transaction=False) as pipe:
            for keys, args in calls:
                await self.script(keys=keys, args=args, client=pipe)
            return list(await pipe.execute(raise_on_error=False))

    async def _flush(self) -> None:
        try:
            while self._pending:
                batch, self._pending = self._pending, {}
                started = time.perf_counter()
                try:
                    results = await self._round_trip(self._calls(batch))
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
                for items, result in zip(batch.values(), results):
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
            self._flusher = None


def _pack_list(packed_items: list[bytes]) -> bytes:
    """A msgpack array of already packed items (no decode and re-encode)."""
    n = len(packed_items)
    head = bytes([0x90 | n]) if n < 16 else (b"\xdc" + n.to_bytes(2, "big"))
    return head + b"".join(packed_items)
