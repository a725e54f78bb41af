"""Account names and keys: what a valid name is, how a key is made, kept and checked.

A key is ``<lower-case name>.<secret>``: the name part says which account to look up, the secret
(256 random bits) proves it. Only the secret's SHA-256 is stored: a fast hash is enough for a
random secret of that size (nothing to guess from a leaked hash), unlike a password.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets

from shared.protocol import ACCOUNT_NAME_PATTERN, CodedError, ErrorCode

from ..store.accounts import Account, AccountStore

_NAME = re.compile(ACCOUNT_NAME_PATTERN)
_SECRET = re.compile(r"[A-Za-z0-9_-]{1,128}")
"""A key's secret: ``secrets.token_urlsafe`` text (43 characters today; any other character is no key's)."""


class BadKey(CodedError, ValueError):
    """A key that proves nothing (``bad_key``)."""


def account_of(name: str) -> str:
    """An account's id: its name in lower case (names are unique ignoring case)."""
    return name.casefold()


def valid_name(name: str) -> bool:
    return bool(_NAME.fullmatch(name))


def new_key(name: str) -> tuple[str, str]:
    """A fresh key for account ``name`` and the hash to store."""
    secret = secrets.token_urlsafe(32)
    return f"{account_of(name)}.{secret}", hash_secret(secret)


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def split_key(key: str) -> tuple[str, str]:
    """``(account, secret)`` of a key; raises :class:`BadKey` for one of the wrong shape."""
    account, dot, secret = key.strip().rpartition(".")
    if not dot or not valid_name(account) or not _SECRET.fullmatch(secret):
        raise BadKey(ErrorCode.BAD_KEY, "the account key is malformed: it should look like name.secret")
    return account, secret


def name_refused(account: Account, name: str | None) -> str | None:
    """Why ``name``, given beside ``account``'s key (in a ``hello`` or a ``seek``), is refused (another
    account's name), or None. The key decides who plays: a name that says otherwise is a mistake the player must hear of
    (``bad_field``), never one silently dropped for the key's."""
    if name is None or account_of(name.strip()) == account.account:
        return None
    return f"this key is {account.name!r}'s; leave out the name or give that one"


async def check_key(accounts: AccountStore, key: str) -> Account:
    """The account ``key`` belongs to; raises :class:`BadKey` for an unknown, forged or replaced key."""
    account, secret = split_key(key)
    found = await accounts.get(account)
    if found is None or not hmac.compare_digest(found.key_hash, hash_secret(secret)):
        raise BadKey(ErrorCode.BAD_KEY, ErrorCode.BAD_KEY.explanation)
    return found
