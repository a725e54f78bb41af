"""Fair play in Redis: what an entry condition reads of an account, where an account was registered
from, and each finished race's fair-play analysis (docs/events.md, "Fair play").

Each call touches one key (an account's hash, or one race's analysis under the race's own hash tag), so
all of it works on one Redis and on a Redis Cluster alike. The registration address is kept only as a
salted hash: linking two accounts needs equality, never the address itself.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from .keys import AccountKeys, Keys

REG_FIELD = "reg_from"
"""The account hash's field holding its registration address's hash."""


@dataclass(frozen=True)
class AccountFacts:
    """What an entry condition and the linked-accounts check read of one account."""

    account: str
    exists: bool
    created_at: int
    rated: int
    """Finished rated races in the variant asked for."""
    mu: float | None
    sigma: float | None
    reg_from: str
    """The registration address's hash ("" for an account registered before it was kept)."""


def address_hash(address: str, salt: bytes) -> str:
    """A registration address as kept: equal addresses give equal texts, and the text gives no address."""
    return hashlib.sha256(salt + address.encode()).hexdigest()[:24]


def analysis_key(race: str) -> str:
    """A finished race's fair-play analysis (msgpack ``shared.protocol.FairPlayGame`` list), under the
    race's hash tag; it lives as long as the race's results."""
    return f"{Keys(race).meta}:fairplay"


class FairPlayStore:
    """Account facts, registration addresses and the analyses' cache, shared by every server process."""

    def __init__(self, redis: Any) -> None:
        self.redis = redis

    async def note_registration(self, account: str, reg_hash: str) -> None:
        """Keep where ``account`` was registered from (its address's hash)."""
        await self.redis.hset(AccountKeys(account).main, REG_FIELD, reg_hash)

    async def facts(self, accounts: list[str], variant: str) -> list[AccountFacts]:
        """Each account's facts in ``variant``, in one pipeline (one key each: a cluster splits it)."""
        v = f"v:{variant}:"
        async with self.redis.pipeline(transaction=False) as pipe:
            for account in accounts:
                pipe.hmget(AccountKeys(account).main, "key_hash", "created_at", v + "rated", v + "mu", v + "sigma",
                           REG_FIELD)
            rows = await pipe.execute()
        out = []
        for account, (key_hash, created, rated, mu, sigma, reg) in zip(accounts, rows):
            out.append(AccountFacts(account=account, exists=key_hash is not None, created_at=int(created or 0),
                                    rated=int(rated or 0), mu=float(mu) if mu else None,
                                    sigma=float(sigma) if sigma else None, reg_from=(reg or b"").decode()))
        return out

    async def analysis(self, race: str) -> bytes | None:
        value = await self.redis.get(analysis_key(race))
        return bytes(value) if value is not None else None

    async def keep_analysis(self, race: str, blob: bytes, ttl: int) -> None:
        """Keep a race's analysis for ``ttl`` seconds (the race's retention): it is computed once."""
        await self.redis.set(analysis_key(race), blob, ex=max(1, ttl))
