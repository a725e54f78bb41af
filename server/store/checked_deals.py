"""The races' store's pools of checked deals: one list a variant, filled by the checked pool's workers
(server/deals/) and taken from when a race is made."""

from __future__ import annotations

from .keys import checked_key
from .race_base import RaceStoreBase


class CheckedDeals(RaceStoreBase):
    """The checked deals waiting to be dealt, by variant."""

    async def checked_push(self, variant: str, entry: str, target: int) -> int:
        """Add a checked deal unless the pool holds ``target`` already: the new depth, or -1."""
        return int(await self._checked_push(keys=[checked_key(variant)], args=[target, entry]))

    async def checked_pop(self, variant: str) -> bytes | None:
        """Take the oldest checked deal (atomic: two callers never get the same one)."""
        raw = await self.redis.lpop(checked_key(variant))
        return bytes(raw) if raw is not None else None

    async def checked_depths(self, variants: list[str]) -> dict[str, int]:
        """How many checked deals each variant's pool holds, in one round trip."""
        if not variants:
            return {}
        async with self.redis.pipeline(transaction=False) as pipe:
            for variant in variants:
                pipe.llen(checked_key(variant))
            depths = await pipe.execute()
        return {v: int(n) for v, n in zip(variants, depths)}
