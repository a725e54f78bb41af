"""Which of this process's connections joined with which account key, so that a replaced key stops them.

Why its own part: a connection must stop acting once the key it joined with is replaced (issue 22). The
news comes over pub/sub at once (:meth:`KeyHolders.replaced`, called by this process's subscription),
and since pub/sub is at most once the heartbeat also compares the hashes with Redis's
(:meth:`KeyHolders.check`). It needs the accounts' key hashes and nothing else of the process.
"""

from __future__ import annotations

from typing import Callable, Protocol

from shared import protocol as p

from ..ops.log import log
from ..store.accounts import AccountStore


class Holder(Protocol):
    """What cutting a connection needs of it (a hub's Listener is one)."""

    def send(self, data: bytes) -> None: ...
    def close_after_queue(self, code: p.CloseCode) -> None: ...


class KeyHolders:
    """This process's player connections that joined with an account's key, with that key's hash."""

    def __init__(self, accounts: AccountStore) -> None:
        self._accounts = accounts
        self._by_account: dict[str, dict[Holder, str]] = {}

    def add(self, account: str, key_hash: str, conn: Holder) -> None:
        self._by_account.setdefault(account, {})[conn] = key_hash

    def remove(self, account: str, conn: Holder) -> None:
        held = self._by_account.get(account)
        if held is not None:
            held.pop(conn, None)
            if not held:
                del self._by_account[account]

    def accounts(self) -> list[str]:
        return list(self._by_account)

    def cut(self, account: str, stale: Callable[[str], bool]) -> int:
        """Tell the connections of ``account`` whose key hash is ``stale`` ``bad_key`` and close them
        (4008); how many."""
        held = self._by_account.get(account, {})
        cut = [conn for conn, key_hash in held.items() if stale(key_hash)]
        frame = p.encode(p.error(p.ErrorCode.BAD_KEY, "this account's key was replaced: rejoin with the new key"))
        for conn in cut:
            self.remove(account, conn)
            conn.send(frame)
            conn.close_after_queue(p.CloseCode.KEY_REPLACED)
        if cut:
            log("key_replaced_closing", account=account, connections=len(cut))
        return len(cut)

    def replaced(self, account: str, old_hash: str) -> None:
        """``account``'s key was replaced (by any process): its connections here that joined with the
        old key may not act any more."""
        self.cut(account, lambda key_hash: key_hash == old_hash)

    async def check(self) -> None:
        """The same for a replacement whose pub/sub message this process missed (Redis away a moment):
        each account's key hash as Redis has it, one round trip for all."""
        accounts = self.accounts()
        for account, current in zip(accounts, await self._accounts.key_hashes(accounts)):
            self.cut(account, lambda key_hash: key_hash != current)
