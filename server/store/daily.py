"""The daily deal in Redis (the layout: keys.DailyKeys): the day's deal, and each account's one play."""

from __future__ import annotations

from typing import Any

from .keys import DailyKeys
from .records import text
from .scripts import register


class DailyStore:
    def __init__(self, redis: Any) -> None:
        self.redis = redis
        self._day = register(redis, "daily_day")

    async def deal(self, variant: str, date: str) -> tuple[int, str] | None:
        """The day's deal and its winning line ("" for an unchecked deal), if it was drawn."""
        deal, line = await self.redis.hmget(DailyKeys(variant, date).day, "deal", "line")
        return (int(deal), text(line or b"")) if deal is not None else None

    async def draw(self, variant: str, date: str, deal: int, line: str, now: int) -> tuple[int, str]:
        """The day's deal: ``deal`` if this is the first draw of the day, else the one drawn before."""
        got, got_line = await self._day(keys=[DailyKeys(variant, date).day], args=[deal, line, now])
        return int(got), text(got_line or b"")

    async def claim(self, variant: str, date: str, account: str, race: str) -> str:
        """The account's race of the day: ``race`` if it had none, else the one it has (plays once)."""
        k = DailyKeys(variant, date)
        if await self.redis.hsetnx(k.plays, account, race):
            return race
        return text(await self.redis.hget(k.plays, account))

    async def play_of(self, variant: str, date: str, account: str) -> str | None:
        race = await self.redis.hget(DailyKeys(variant, date).plays, account)
        return text(race) if race is not None else None

    async def plays(self, variant: str, date: str) -> dict[str, str]:
        return {text(a): text(r) for a, r in (await self.redis.hgetall(DailyKeys(variant, date).plays)).items()}
