"""The races' store's play: a player's moves (through the move batcher), giving up and hints, and the
announcement of moves whose note the moves script held back."""

from __future__ import annotations

import asyncio

from .batcher import Settled
from .keys import Keys
from .race_base import RaceStoreBase
from .records import CommitResult, HintRefused, MoveCommit, StoreError, reply


class RacePlay(RaceStoreBase):
    """What a racer does in a running race, stored."""

    def commit_move(self, race: str, commit: MoveCommit, *,
                    then: Settled | None = None) -> "asyncio.Future[CommitResult]":
        """Append one validated move (``commit.status``: the player's after it: racing, blocked, finished).

        Raises :class:`StoreError` when the race or the player refuses it
        (race over, player finished, a stale ``seq``). Returns the batcher's future (await it, or
        have ``then`` called with it as soon as it is done: see :meth:`MoveBatcher.call`).
        """
        return self._moves.call(race, commit, then)

    async def give_up(self, race: str, seat: int, now: int) -> tuple[int, bool]:
        k = Keys(race)
        kind, rest = reply(await self._give_up(
            keys=[k.meta, k.player(seat), k.progress, k.history], args=[seat, now, k.chan]
        ))
        if kind != "ok":
            raise StoreError(rest[0])
        await self.replicas.confirm(self.redis, k.meta)
        return int(rest[0]), bool(rest[1])

    async def take_hint(self, race: str, seat: int, now: int, interval_ms: int) -> tuple[int, str | None]:
        """Reserve a hint for the seat (rate limit, race and player checks):
        ``(log length, the previous hint's JSON or None)``; raises :class:`HintRefused`."""
        k = Keys(race)
        kind, rest = reply(await self._hint_take(keys=[k.meta, k.player(seat), k.hint(seat)],
                                                  args=[now, interval_ms]))
        if kind != "ok":
            raise HintRefused(rest[0], int(rest[1]) if len(rest) > 1 else 0)
        return int(rest[0]), rest[1] or None

    async def give_hint(self, race: str, seat: int, hint_json: str, now: int) -> int:
        """Keep the hint for the next one and mark the player helped; the race version."""
        k = Keys(race)
        kind, rest = reply(await self._hint_give(
            keys=[k.meta, k.player(seat), k.progress, k.history, k.hint(seat)],
            args=[seat, hint_json, now, k.chan],
        ))
        if kind != "ok":
            raise StoreError(rest[0])
        return int(rest[0])

    async def announce(self, race: str) -> None:
        """Publish the race's note of its version now (for moves whose note the moves script held back:
        server/race/hub.py), in the moves' next round trip rather than a call of its own."""
        await self._moves.script_call(self._announce, [Keys(race).meta])
