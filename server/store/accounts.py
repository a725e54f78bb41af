"""Accounts in Redis: registration, the key check and key rotation (the layout: keys.AccountKeys).

Each script touches one account's keys only (one hash tag, one cluster slot). The registration
limit is a token bucket under the client address's own hash tag, so it is taken by a separate
call: the name is checked first (a refused name takes no token), the token next, then the name's
look (its index key, :func:`~server.store.keys.name_index_key`, set only if free or already this
account's: of two look-alike registrations exactly one gets it), the account last; a name lost to
a registration racing this one gives its token back.

The index is what "is this name an account's?" asks (``name_registered``), so a casual player
cannot take a name that looks like an account's. A registration that died between the index and
the account leaves the index naming an account that does not exist: look-alikes stay refused, and
the very name can still be registered. :meth:`AccountStore.reindex` (at a start) adds the index of
accounts made before it existed, or whose skeleton a newer ICU moved: only when the index was not
built by this process's look version (``NAMES_INDEXED``), so an ordinary restart does not read the
whole keyspace. A registration by a process of another look version (a rolling upgrade) clears the
mark (or the claim of a scan under way, whose end then leaves the index unmarked), so the next start
indexes that account by the new look too.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

from shared import protocol as p
from shared.names import LOOK_VERSION, name_key

from ..ops.log import log
from .client import hget_each
from .keys import ACCOUNT_MATCH, KEYS_REPLACED, NAMES_INDEXED, AccountKeys, name_index_key, register_keys
from .limits import Bucket
from .records import reply, text
from .scripts import register

SCANNING = " scanning "
"""The index mark while a start indexes: ``<look version> scanning <nonce>`` (:meth:`AccountStore.reindex`)."""


@dataclass(frozen=True)
class Account:
    """What a key check needs of an account."""

    account: str
    """The lower-case name: the account's id."""
    name: str
    """The name as registered."""
    key_hash: str


class RegisterRefused(p.Refusal):
    """A registration or a key change refused: ``code`` (an ErrorCode value) and, when limited, how long
    to wait."""

    code: str

    def __init__(self, code: str, wait_ms: int = 0) -> None:
        super().__init__(code)
        self.wait_ms = wait_ms


class AccountStore:
    """Account records, shared by every server process."""

    def __init__(self, redis: Any) -> None:
        self.redis = redis
        self._register = register(redis, "register")
        self._rotate = register(redis, "rotate")
        self._claim_name = register(redis, "claim_name")
        self._mark_indexed = register(redis, "mark_indexed")

    async def get(self, account: str) -> Account | None:
        """The account with lower-case name ``account``, or None."""
        name, key_hash = await self.redis.hmget(AccountKeys(account).main, "name", "key_hash")
        if name is None or key_hash is None:
            return None
        return Account(account, text(name), text(key_hash))

    async def key_hashes(self, accounts: list[str]) -> list[str | None]:
        """Each account's key hash (None for one that does not exist), in one round trip."""
        hashes = await hget_each(self.redis, [AccountKeys(a).main for a in accounts], "key_hash")
        return [None if h is None else text(h) for h in hashes]

    async def key_since(self, account: str) -> int:
        """When the account's key last replaced another (ms; 0: never)."""
        return int(await self.redis.hget(AccountKeys(account).main, "key_since") or 0)

    async def exists(self, account: str) -> bool:
        return bool(await self.redis.exists(AccountKeys(account).main))

    async def registered(self, name: str) -> bool:
        """Whether an account has ``name`` or a name that looks like it (any case, any look-alike)."""
        return bool(await self.redis.exists(name_index_key(name_key(name)))
                    or await self.redis.exists(AccountKeys(name.casefold()).main))

    async def look_alike(self, name: str) -> str | None:
        """The registered name of the account whose name is ``name`` or looks like it (``B0B``: ``bob``),
        or ``None``: a refusal names the name that is taken, not only ``name``."""
        held = await self.redis.get(name_index_key(name_key(name)))
        account = text(held) if held is not None else name.casefold()
        shown = await self.redis.hget(AccountKeys(account).main, "name")
        return text(shown) if shown is not None else None

    async def create(self, name: str, key_hash: str, client: str, limit: Bucket) -> None:
        """Register ``name`` with the key whose hash is ``key_hash``, spending a token of ``limit``
        (the registrations' bucket); raises :class:`RegisterRefused`."""
        account = name.casefold()
        keys, index = AccountKeys(account), name_index_key(name_key(name))
        if (await self.redis.hget(keys.main, "key_hash") not in (None, key_hash.encode())
                or await self.redis.get(index) not in (None, account.encode())):
            raise RegisterRefused("account_name_taken")
        bucket = register_keys(client)
        if wait_ms := await limit.take(bucket):
            raise RegisterRefused("register_rate_limited", wait_ms)
        kind, rest = reply(await self._claim_name(keys=[index], args=[account]))
        if kind == "ok":
            kind, rest = reply(await self._register(keys=[keys.main], args=[name, key_hash]))
        if kind != "ok":
            await limit.give_back(bucket)
            raise RegisterRefused(rest[0])
        mark = await self.redis.get(NAMES_INDEXED)  # read after the account is stored (see reindex)
        if mark is not None and mark.partition(SCANNING.encode())[0] != LOOK_VERSION.encode():
            # Indexed (or being indexed) by another look version, which may not find this name's look: the
            # next start reindexes.
            await self.redis.delete(NAMES_INDEXED)

    async def reindex(self) -> int:
        """Index every account's name by its look (accounts registered before the index, or whose
        skeleton moved with a new ICU), unless the index is marked as built by this look version; an
        index held by another account is left to it. How many index keys were added.

        Why the mark: the scan reads every key of the keyspace (races, moves, events), at every start
        of every process; names change look only with ICU, Unicode or :func:`name_key` itself."""
        if await self.redis.get(NAMES_INDEXED) == LOOK_VERSION.encode():
            return 0
        # A claim while scanning: a registration by a process of another look version that the scan may miss
        # (stored after the scan passed its key) clears it, and then the end of the scan does not mark.
        claim = f"{LOOK_VERSION}{SCANNING}{secrets.token_hex(8)}"
        await self.redis.set(NAMES_INDEXED, claim)
        added, batch = 0, []
        async for key in self.redis.scan_iter(match=ACCOUNT_MATCH, count=1000):
            if text(key).endswith("}"):  # not :history, :entries
                batch.append(text(key))
            if len(batch) >= 1000:
                added += await self._index(batch)
                batch = []
        added += await self._index(batch) if batch else 0
        if not await self._mark_indexed(keys=[NAMES_INDEXED], args=[claim, LOOK_VERSION]):
            log("names_index_unmarked", reason="an account was registered under another look version during the "
                "scan; the next start indexes again")
        return added

    async def _index(self, mains: list[str]) -> int:
        """Index these accounts' names (two pipelined round trips, whatever the count)."""
        names = [text(n) for n in await hget_each(self.redis, mains, "name") if n is not None]
        async with self.redis.pipeline(transaction=False) as pipe:
            for name in names:
                pipe.set(name_index_key(name_key(name)), name.casefold(), nx=True)
            return sum(1 for done in await pipe.execute() if done)

    async def rotate(self, account: str, old_hash: str, new_hash: str, now: int) -> None:
        """Replace the key if ``old_hash`` is the current one's; raises :class:`RegisterRefused`."""
        kind, rest = reply(await self._rotate(keys=[AccountKeys(account).main], args=[old_hash, new_hash, now]))
        if kind != "ok":
            raise RegisterRefused(rest[0])
        # Every process closes the connections that joined with the old key at once (at most once: a
        # process that misses it finds out at its next heartbeat: KeyHolders.check, race/keyholders.py).
        await self.redis.publish(KEYS_REPLACED, f"{account} {old_hash}")
