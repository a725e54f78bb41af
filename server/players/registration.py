"""HTTP: ``POST /players`` (an account and its key), ``POST /players/{name}/key`` (a new key) and
``GET /players/{name}/key`` (is this key the current one).

The key is answered once and never stored in clear; both answers are the same typed body
(``AccountKeyAnswer``). Registration counts against the client address's bucket, like race
creation, so one address cannot fill the name space.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from shared import protocol as p
from shared.names import account_name

from ..ops.http import bearer, json_body, json_response
from ..race.requests import client_of, service_of
from ..race.clock import now_ms
from ..store.accounts import Account, RegisterRefused
from ..store.fairplay import FairPlayStore, address_hash
from ..accounts.keys import account_of, check_key as key_account, new_key


async def register_player(request: Request) -> Response:
    """Create an account: 201 with its key; 400 bad name, 409 taken, 429 limited (nothing stored)."""
    body = await json_body(request, p.Register)
    name = account_name(body.name)  # raises NameRefused (bad_name, 400)
    service = service_of(request)
    cfg = service.config.accounts
    key, key_hash = new_key(name)
    client = client_of(request)
    try:
        await service.accounts.create(name, key_hash, client, service.registrations)
    except RegisterRefused as exc:
        if exc.code == p.ErrorCode.REGISTER_RATE_LIMITED.value:
            raise p.Refusal(p.ErrorCode.REGISTER_RATE_LIMITED,
                            f"an address may register {cfg.register_burst} accounts at once, then one "
                            f"every {cfg.register_interval:g} s: the next in {exc.wait_ms / 1000:.1f} s",
                            retry_after=max(1, -(-exc.wait_ms // 1000))) from None
        raise p.Refusal(p.ErrorCode.ACCOUNT_NAME_TAKEN,
                        taken_words(name, await service.accounts.look_alike(name))) from None
    # Where it was registered from (a salted hash), for the fair-play flags' linked accounts.
    await FairPlayStore(service.accounts.redis).note_registration(
        account_of(name), address_hash(client, await service.store.token_secret()))
    return json_response(p.AccountKeyAnswer(name=name, key=key), 201)


def taken_words(name: str, holder: str | None) -> str:
    """Why ``name`` cannot be registered, naming the account that has it: a look-alike is said to look
    like it (``B0B looks like bob, which is taken``), not to be the same name in another case."""
    if holder is None or holder == name:
        return f"{name} is taken: an account has that name"
    if holder.casefold() == name.casefold():
        return f"{name} is taken: the account {holder} has it (names are the same in any case)"
    return f"{name} looks like {holder}, which is taken"


async def bearer_account(request: Request) -> Account:
    """The account whose key the request carries as its bearer token; raises ``bad_key`` (401) saying
    why not (:class:`BadKey` is one)."""
    given = bearer(request)
    if given is None:
        raise p.Refusal(p.ErrorCode.BAD_KEY, "send your account key as 'Authorization: Bearer <key>'")
    return await key_account(service_of(request).accounts, given)


def own_account(me: Account, name: str) -> None:
    """Refuse (``bad_key``, 401) a key used on another account's path ``name``."""
    if account_of(name) != me.account:
        raise p.Refusal(p.ErrorCode.BAD_KEY, "that key belongs to another account")


async def key_owner(request: Request) -> Account:
    """The account ``{name}`` of the path when the bearer token is its current key; raises
    ``player_not_found`` (404) or ``bad_key`` (401)."""
    account = account_of(request.path_params["name"])
    if not await service_of(request).accounts.exists(account):
        raise p.Refusal(p.ErrorCode.PLAYER_NOT_FOUND)
    found = await bearer_account(request)
    own_account(found, account)
    return found


async def check_key(request: Request) -> Response:
    """Whether the bearer token is the account's current key, changing nothing: a client tells a key
    replaced on another machine (``account rotate``) or mistyped from a good one before relying on it."""
    found = await key_owner(request)
    return json_response(p.KeyCheck(name=found.name))


async def rotate_key(request: Request) -> Response:
    """A new key for the account whose current key is the bearer token; the old one stops working
    (a key replaced meanwhile is ``bad_key``, an account gone ``player_not_found``: the store's refusal)."""
    service = service_of(request)
    found = await key_owner(request)
    account = found.account
    key, key_hash = new_key(found.name)
    await service.accounts.rotate(account, found.key_hash, key_hash, now_ms())
    return json_response(p.AccountKeyAnswer(name=found.name, key=key))
