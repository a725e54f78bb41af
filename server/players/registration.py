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
from shared.names import NameRefused, account_name

from ..answers import bearer, client_of, error_response, json_body, json_response, service_of
from ..race.clock import now_ms
from ..store.accounts import Account, RegisterRefused
from ..accounts.keys import BadKey, account_of, check_key as key_account, new_key


async def register_player(request: Request) -> Response:
    """Create an account: 201 with its key; 400 bad name, 409 taken, 429 limited (nothing stored)."""
    body = await json_body(request, p.Register)
    if isinstance(body, Response):
        return body
    try:
        name = account_name(body.name)
    except NameRefused as exc:
        return error_response(exc.code, 400, str(exc))
    service = service_of(request)
    cfg = service.config
    key, key_hash = new_key(name)
    client = client_of(request)
    try:
        await service.accounts.create(name, key_hash, client, service.registrations)
    except RegisterRefused as exc:
        if exc.code == p.ErrorCode.REGISTER_RATE_LIMITED.value:
            wait = max(1, -(-exc.wait_ms // 1000))
            response = error_response(p.ErrorCode.REGISTER_RATE_LIMITED, 429,
                                      f"an address may register {cfg.register_burst} accounts at once, then one "
                                      f"every {cfg.register_interval:g} s: the next in {exc.wait_ms / 1000:.1f} s")
            response.headers["Retry-After"] = str(wait)
            return response
        return error_response(p.ErrorCode.ACCOUNT_NAME_TAKEN, 409,
                              taken_words(name, await service.accounts.look_alike(name)))
    return json_response(p.AccountKeyAnswer(name=name, key=key), 201)


def taken_words(name: str, holder: str | None) -> str:
    """Why ``name`` cannot be registered, naming the account that has it: a look-alike is said to look
    like it (``B0B looks like bob, which is taken``), not to be the same name in another case."""
    if holder is None or holder == name:
        return f"{name} is taken: an account has that name"
    if holder.casefold() == name.casefold():
        return f"{name} is taken: the account {holder} has it (names are the same in any case)"
    return f"{name} looks like {holder}, which is taken"


async def bearer_account(request: Request) -> Account | Response:
    """The account whose key the request carries as its bearer token, or the 401 that says why not."""
    given = bearer(request)
    if given is None:
        return error_response(p.ErrorCode.BAD_KEY, 401, "send your account key as 'Authorization: Bearer <key>'")
    try:
        return await key_account(service_of(request).accounts, given)
    except BadKey as exc:
        return error_response(p.ErrorCode.BAD_KEY, 401, str(exc))


async def key_owner(request: Request) -> Account | Response:
    """The account ``{name}`` of the path when the bearer token is its current key; else the 404 or
    401 that says why not."""
    account = account_of(request.path_params["name"])
    if not await service_of(request).accounts.exists(account):
        return error_response(p.ErrorCode.PLAYER_NOT_FOUND, 404)
    found = await bearer_account(request)
    if isinstance(found, Response):
        return found
    if found.account != account:
        return error_response(p.ErrorCode.BAD_KEY, 401, "that key belongs to another account")
    return found


async def check_key(request: Request) -> Response:
    """Whether the bearer token is the account's current key, changing nothing: a client tells a key
    replaced on another machine (``account rotate``) or mistyped from a good one before relying on it."""
    found = await key_owner(request)
    return found if isinstance(found, Response) else json_response(p.KeyCheck(name=found.name))


async def rotate_key(request: Request) -> Response:
    """A new key for the account whose current key is the bearer token; the old one stops working."""
    service = service_of(request)
    found = await key_owner(request)
    if isinstance(found, Response):
        return found
    account = found.account
    key, key_hash = new_key(found.name)
    try:
        await service.accounts.rotate(account, found.key_hash, key_hash, now_ms())
    except RegisterRefused as exc:
        return error_response(p.ErrorCode(exc.code), 401 if exc.code == "bad_key" else 404)
    return json_response(p.AccountKeyAnswer(name=found.name, key=key))
