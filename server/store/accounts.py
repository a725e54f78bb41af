"""Accounts in Redis: registration, the key check and key rotation (the layout: keys.AccountKeys).

Each script touches one account's keys only (one hash tag, one cluster slot). The registration
limit is a token bucket under the client address's own hash tag, so it is taken by a separate
call: the name is checked first (a refused name takes no token), the token next, the account
last, and a name lost to a registration racing this one gives its token back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .keys import AccountKeys, register_keys
from .records import reply, text
from .scripts import register


@dataclass(frozen=True)
class Account:
    """What a key check needs of an account."""

    account: str
    """The lower-case name: the account's id."""
    name: str
    """The name as registered."""
    key_hash: str


class RegisterRefused(Exception):
    """A registration refused: ``code`` (an ErrorCode value) and, when limited, how long to wait."""

    def __init__(self, code: str, wait_ms: int = 0) -> None:
        self.code = code
        self.wait_ms = wait_ms
        super().__init__(code)


class AccountStore:
    """Account records, shared by every server process."""

    def __init__(self, redis: Any) -> None:
        self.redis = redis
        self._register = register(redis, "register")
        self._rotate = register(redis, "rotate")
        self._take_token = register(redis, "take_token")

    async def get(self, account: str) -> Account | None:
        """The account with lower-case name ``account``, or None."""
        name, key_hash = await self.redis.hmget(AccountKeys(account).main, "name", "key_hash")
        if name is None or key_hash is None:
            return None
        return Account(account, text(name), text(key_hash))

    async def exists(self, account: str) -> bool:
        return bool(await self.redis.exists(AccountKeys(account).main))

    async def create(self, name: str, key_hash: str, client: str, burst: int, interval_ms: int) -> None:
        """Register ``name`` with the key whose hash is ``key_hash``; raises :class:`RegisterRefused`."""
        keys = AccountKeys(name.casefold())
        if await self.redis.hget(keys.main, "key_hash") not in (None, key_hash.encode()):
            raise RegisterRefused("account_name_taken")
        bucket = register_keys(client)
        if burst > 0:
            kind, rest = reply(await self._take_token(keys=[bucket], args=[burst, interval_ms]))
            if kind != "ok":
                raise RegisterRefused("register_rate_limited", int(rest[0]))
        kind, rest = reply(await self._register(keys=[keys.main], args=[name, key_hash]))
        if kind != "ok":
            if burst > 0:
                await self.redis.hincrbyfloat(bucket, "tokens", 1)
            raise RegisterRefused(rest[0])

    async def rotate(self, account: str, old_hash: str, new_hash: str) -> None:
        """Replace the key if ``old_hash`` is the current one's; raises :class:`RegisterRefused`."""
        kind, rest = reply(await self._rotate(keys=[AccountKeys(account).main], args=[old_hash, new_hash]))
        if kind != "ok":
            raise RegisterRefused(rest[0])
