"""Which seat a ``hello`` takes: back by its token, the one an account holds, or a new one.

Why apart from the connection: taking a seat is a chain of checks (the key, the name, the token and
its generation, the entrants of an event heat) that ends in one store call, and none of it is about
the socket; the connection only keeps what it was given (:class:`Taken`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from shared import protocol as p
from shared.names import NameRefused, display_name
from shared.variants import get_variant

from ..accounts.keys import BadKey, check_key, name_refused
from ..store import RaceMeta, StoreError
from ..store.accounts import Account
from .clock import now_ms
from .session import Refused
from .tokens import PLAYER, TokenError

if TYPE_CHECKING:
    from .service import Service


@dataclass(frozen=True)
class Taken:
    """A player's seat as its hello took it, with its renewed token."""

    seat: int
    gen: int
    token: str
    account: str | None
    key_hash: str


async def take_seat(service: "Service", msg: p.Hello, meta: RaceMeta, member: str) -> Taken:
    """The seat a player's hello takes (by token, by account, or a new one) and its renewed token;
    raises :class:`Refused` (the hello's connection closes)."""
    now = now_ms()
    account = await _account(service, msg) if msg.key is not None else None
    if msg.token is not None:
        seat, gen = await _claim(service, msg.token, meta, account, member, now)
    else:
        seat, gen = await _join(service, msg, meta, account, member, now)
    # A renewed token: a seat held for a long lobby and a long race must not expire under its player.
    assert service.signer is not None
    token = service.signer.sign(PLAYER, meta.id, seat, now + service.config.races.token_ttl * 1000, gen)
    return Taken(seat, gen, token, account.account if account is not None else None,
                 account.key_hash if account is not None else "")


async def _account(service: "Service", msg: p.Hello) -> Account:
    assert msg.key is not None
    try:
        account = await check_key(service.accounts, msg.key)
    except BadKey as exc:
        raise Refused(p.ErrorCode.BAD_KEY, str(exc), close=p.CloseCode.HELLO_REFUSED) from None
    if (why := name_refused(account, msg.name)) is not None:
        raise Refused(p.ErrorCode.BAD_FIELD, why, close=p.CloseCode.HELLO_REFUSED)
    return account


async def _claim(service: "Service", token: str, meta: RaceMeta, account: Account | None, member: str,
                 now: int) -> tuple[int, int]:
    """Take back the seat a player token names: ``(seat, gen)``."""
    signer, store = service.signer, service.store
    assert signer is not None
    named = signer.seat_of(token)
    held = await store.seat(meta.id, named[1]) if named and named[0] == meta.id and named[1] >= 0 else None
    try:
        claim = signer.verify(PLAYER, token, meta.id, now, held.gen if held else 0)
    except TokenError as exc:
        raise Refused(exc.code, str(exc), close=p.CloseCode.BAD_TOKEN) from None
    if held is None or held.status == "left":
        raise Refused(p.ErrorCode.BAD_TOKEN, "no such seat" if held is None else
                      "the seat was given back in the lobby: join again", close=p.CloseCode.BAD_TOKEN)
    if account is not None and held.account != account.account:
        raise Refused(p.ErrorCode.BAD_KEY, "the token's seat belongs to another player than this key",
                      close=p.CloseCode.HELLO_REFUSED)
    if account is None and held.account and \
            claim.expires - service.config.races.token_ttl * 1000 < await service.accounts.key_since(held.account):
        # Given before the account's key was replaced: whoever held the old key held this token too.
        raise Refused(p.ErrorCode.BAD_TOKEN, "the account's key was replaced after this token was given: "
                      "join with the new key", close=p.CloseCode.BAD_TOKEN)
    try:
        await store.presence(meta.id, claim.seat, held.gen, member, True, service.lease_expiry(), now)
    except StoreError as exc:  # the seat was given back between the two reads
        raise Refused(p.ErrorCode.BAD_TOKEN, f"the seat is no longer yours ({exc.code})",
                      close=p.CloseCode.BAD_TOKEN) from None
    return claim.seat, held.gen


async def _join(service: "Service", msg: p.Hello, meta: RaceMeta, account: Account | None, member: str,
                now: int) -> tuple[int, int]:
    """A new seat (or, for an account, the one it holds already): ``(seat, gen)``."""
    if account is None:
        if meta.rated:
            raise Refused(p.ErrorCode.ACCOUNT_REQUIRED, close=p.CloseCode.HELLO_REFUSED)
        if msg.name is None or not msg.name.strip():
            raise Refused(p.ErrorCode.BAD_FIELD, "a new player needs a name (or an account key)",
                          close=p.CloseCode.HELLO_REFUSED)
        try:
            name = display_name(msg.name)
        except NameRefused as exc:
            raise Refused(exc.code, str(exc), close=p.CloseCode.HELLO_REFUSED) from None
        if await service.accounts.registered(name):
            raise Refused(p.ErrorCode.NAME_REGISTERED, close=p.CloseCode.HELLO_REFUSED)
    else:
        name = account.name
    if meta.entrants and (account is None or account.account not in meta.entrant_set):
        raise Refused(p.ErrorCode.NOT_AN_ENTRANT, close=p.CloseCode.HELLO_REFUSED)
    try:
        home0 = get_variant(meta.variant).home_at_start
        seated = await service.store.join(meta.id, name, home0, member, service.lease_expiry(), now,
                                          account.account if account is not None else None, msg.join_id)
    except StoreError as exc:
        raise Refused(exc.code, close=p.CloseCode.HELLO_REFUSED) from None
    return seated.seat, seated.gen
