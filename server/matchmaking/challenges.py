"""Challenges: one account invites another, by name, to a race of two (docs/protocol.md, "Challenges").

HTTP, every request with its account's key as ``Authorization: Bearer``:
``POST /challenges`` (make one), ``GET /challenges`` (the account's open ones, received and sent),
``GET /challenges/{id}`` (one, to its two accounts), ``POST /challenges/{id}/accept`` and
``/decline`` (the challenged account), ``POST /challenges/{id}/cancel`` (the challenger), and
``POST /players/{name}/challenges`` (take challenges or refuse them all).

How the two learn of each other: by asking (``GET /challenges``, ``GET /challenges/{id}``), about once a
second while a client waits. A challenge is a rare, short-lived thing outside any race: the pub/sub
subscription of a process follows races its hubs serve, and pub/sub is at most once, so a push would
need a per-account channel, a stream per waiting client in every process and still this read to catch
what it missed (as ``Hubs.catch_up`` in server/race/listening.py does for races). One small read a
second of a waiting client is cheap, works from any process on a Redis Cluster, and loses nothing when
a process dies.

The accept is two steps of the challenge's one-key script around making the race: ``claim`` (only the
challenged account, only while open and unexpired: an accept under way blocks a second one and a
decline), then ``accept`` with the race, or ``release`` when no race could be made (an empty checked
pool: the challenge stays open, the answer says to try again).
"""

from __future__ import annotations

import logging
import secrets
from typing import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import Response

from shared import protocol as p
from shared.variants import UnknownVariant, get_variant

from ..ops.http import json_body, json_response
from ..race.requests import client_of, service_of
from ..deals.checked import RETRY_POOL_SECONDS, CheckedDeal, PoolUnavailable, fresh_deal_number, solver_can_check
from ..ops.log import log
from ..race.clock import now_ms
from ..race.rules import CreateError, new_id
from ..race.service import Service
from ..store.challenges import ChallengeRefused
from ..store import RaceMeta
from ..store.records import ChallengeRecord
from ..accounts.keys import account_of, valid_name
from ..players.registration import bearer_account, own_account

CLAIM_MS = 30_000
"""How long an accept may take to make its race (a checked deal solved on demand, at most
``--checked-wait``) before another accept may try: a process that died mid-accept blocks no one longer."""

OPEN_TO_ONE = 3
"""Open challenges one account may have sent to one other account at a time: more would only pile up on
the other's list and page (``too_many_challenges``)."""
OPEN_IN_ALL = 10
"""Open challenges one account may have sent in all at a time."""

_CLOSED_WORDS = {"accepted": "it was accepted already", "declined": "it was declined",
                 "cancelled": "its challenger cancelled it", "accepting": "it is being accepted right now",
                 "withdrawn": "its challenger stopped waiting for the answer"}


def challenge_body(record: ChallengeRecord, now: int) -> p.Challenge:
    """The wire form of a challenge: what its two accounts see (no deal exists before the accept)."""
    return p.Challenge(id=record.id, challenger=record.challenger_name, challenged=record.challenged_name,
                       variant=record.variant, time_limit=record.time_limit, rated=record.rated,
                       undo=record.undo, hints=record.hints, deal_source=record.deal_source,  # type: ignore[arg-type]
                       status=record.shown_status(now), created_at=record.created_at,  # type: ignore[arg-type]
                       expires_at=record.expires_at, race=record.race or None, code=record.code or None)


def refused(exc: ChallengeRefused, to: str = "") -> p.Refusal:
    """A refused step in the player's words (``to``: the challenged player's name, for the caps); the
    others as the store refused them."""
    if exc.code == p.ErrorCode.CHALLENGE_CLOSED:
        return p.Refusal(p.ErrorCode.CHALLENGE_CLOSED, "that challenge is closed: "
                         f"{_CLOSED_WORDS.get(exc.challenge_status, exc.challenge_status)}")
    if exc.code == p.ErrorCode.TOO_MANY_CHALLENGES:
        already = f"{OPEN_TO_ONE} open challenges to {to}" if exc.challenge_status == "to_one" else \
            f"{OPEN_IN_ALL} open challenges"
        return p.Refusal(p.ErrorCode.TOO_MANY_CHALLENGES, f"you have {already} already: wait for an answer, or "
                         "cancel one (thieves challenges cancel ID)")
    return exc


def lease_ms(service: Service) -> int:
    """How long a challenge stays open without its challenger asking about it: the presence lease, as
    for a racer whose connection is gone."""
    return int(service.config.races.presence_lease * 1000)


async def create_challenge(request: Request) -> Response:
    """Invite the account named ``to``: 201 with the open challenge; every refusal stores nothing."""
    me = await bearer_account(request)
    body = await json_body(request, p.ChallengeCreate)
    try:
        variant = get_variant(body.variant).key
    except UnknownVariant as exc:
        raise p.Refusal(p.ErrorCode.BAD_VARIANT, str(exc)) from None
    service = service_of(request)
    target = account_of(body.to.strip())
    if target == me.account:
        raise p.Refusal(p.ErrorCode.SELF_CHALLENGE)
    found = await service.accounts.get(target) if valid_name(target) else None
    if found is None:
        raise p.Refusal(p.ErrorCode.PLAYER_NOT_FOUND, f"no account is named {body.to!r} on this server")
    deal_source = body.deal_source or ("pool" if solver_can_check(variant) else "random")
    if not await service.challenges.accepting(target):
        raise p.Refusal(p.ErrorCode.CHALLENGES_REFUSED, f"{found.name} does not take challenges")
    now = now_ms()
    record = ChallengeRecord(
        id=new_id(), challenger=me.account, challenger_name=me.name, challenged=found.account,
        challenged_name=found.name, variant=variant, time_limit=body.time_limit, rated=body.rated,
        undo=body.undo, hints=body.hints, deal_source=deal_source, created_at=now,
        expires_at=now + service.config.matchmaking.challenge_time * 1000, lease_until=now + lease_ms(service))
    try:
        await service.challenges.take_slot(record, now, OPEN_TO_ONE, OPEN_IN_ALL)
    except ChallengeRefused as exc:
        raise refused(exc, found.name) from None
    try:
        # A challenge asks the server for a race (and perhaps the solver's time): it spends one of the
        # address's creation tokens, which also bounds how fast one address can send challenges.
        await service.spend_creation(client_of(request))
    except CreateError:
        await service.challenges.free_slot(record)
        raise
    while not await service.challenges.create(record):  # its id was taken: another (60 bits of chance)
        await service.challenges.free_slot(record)
        record.id = new_id()
        await service.challenges.take_slot(record, now, OPEN_TO_ONE, OPEN_IN_ALL)  # its own slot, freed above
    log("challenge_made", challenge=record.id, challenger=me.account, challenged=found.account, variant=variant)
    return json_response(challenge_body(record, now), 201)


async def list_challenges(request: Request) -> Response:
    """The account's open challenges, received and sent, newest first."""
    me = await bearer_account(request)
    service = service_of(request)
    now = now_ms()
    kept = await service.challenges.of_account(me.account, now)
    open_ = [c for c in kept if c.shown_status(now) == "open"]
    return json_response(p.ChallengeList(
        accepting=await service.challenges.accepting(me.account),
        incoming=[challenge_body(c, now) for c in open_ if c.challenged == me.account],
        outgoing=[challenge_body(c, now) for c in open_ if c.challenger == me.account]))


async def open_challenges_to(service: Service, account: str) -> list[p.Challenge]:
    """The open challenges an account has received (its public page lists them: who, what game, until
    when; no deal exists before an accept)."""
    now = now_ms()
    return [challenge_body(c, now) for c in await service.challenges.of_account(account, now)
            if c.challenged == account and c.shown_status(now) == "open"]


async def get_challenge(request: Request) -> Response:
    """One challenge, to its two accounts only (anyone else: ``not_challenged``)."""
    me = await bearer_account(request)
    record = await service_of(request).challenges.get(request.path_params["challenge"])
    if record is None:
        raise p.Refusal(p.ErrorCode.CHALLENGE_NOT_FOUND)
    if me.account not in (record.challenger, record.challenged):
        raise p.Refusal(p.ErrorCode.NOT_CHALLENGED, "that challenge is between two other players")
    if me.account == record.challenger and record.status == "open":  # it still waits for the answer
        try:
            await service_of(request).challenges.seen(record, now_ms(), lease_ms(service_of(request)))
        except ChallengeRefused:  # closed meanwhile (answered, expired, withdrawn): read it as it is now
            record = await service_of(request).challenges.get(record.id) or record
    return json_response(challenge_body(record, now_ms()))


async def decline_challenge(request: Request) -> Response:
    return await _answer(request, "decline")


async def cancel_challenge(request: Request) -> Response:
    return await _answer(request, "cancel")


async def _answer(request: Request, action: str) -> Response:
    """Decline (the challenged account) or cancel (the challenger) an open challenge."""
    me = await bearer_account(request)
    service = service_of(request)
    challenge = request.path_params["challenge"]
    try:
        await service.challenges.step(challenge, action, now_ms(), me.account)
    except ChallengeRefused as exc:
        raise refused(exc) from None
    log(f"challenge_{action}d" if action == "decline" else "challenge_cancelled", challenge=challenge,
        account=me.account)
    record = await service.challenges.get(challenge)
    if record is None:  # pragma: no cover - kept KEEP_MS past its expiry
        raise p.Refusal(p.ErrorCode.CHALLENGE_NOT_FOUND)
    await service.challenges.free_slot(record)
    return json_response(challenge_body(record, now_ms()))


async def accept_challenge(request: Request) -> Response:
    """The challenged account accepts: the race of the two is made (a checked deal by default), only they
    may join it, and it starts when both are ready. The answer names it; the challenger learns it from
    ``GET /challenges/{id}``."""
    me = await bearer_account(request)
    service = service_of(request)
    challenge = request.path_params["challenge"]
    claim = secrets.token_hex(8)
    try:
        await service.challenges.step(challenge, "claim", now_ms(), me.account, claim, CLAIM_MS)
    except ChallengeRefused as exc:
        raise refused(exc) from None
    record = await service.challenges.get(challenge)
    assert record is not None  # claimed just now: kept KEEP_MS past its expiry

    async def make() -> RaceMeta:
        deal = await race_deal(service, record.variant, record.deal_source == "pool")
        return await service.create_for([record.challenger, record.challenged], deal, record.time_limit,
                                        "all-ready", "", rated=record.rated, undo=record.undo, hints=record.hints)

    meta = await make_claimed(make, lambda: service.challenges.step(challenge, "release", now_ms(), me.account,
                                                                     claim), challenge)
    try:
        await service.challenges.step(challenge, "accept", now_ms(), me.account, claim, meta.id, meta.code)
    except ChallengeRefused as exc:  # our claim lapsed and another accept took over: this race stays unused
        log("challenge_accept_lost", logging.WARNING, challenge=challenge, race=meta.id)
        raise refused(exc) from None
    log("challenge_accepted", challenge=challenge, race=meta.id, code=meta.code)
    await service.challenges.free_slot(record)
    record.status, record.race, record.code = "accepted", meta.id, meta.code
    return json_response(challenge_body(record, now_ms()))


async def make_claimed(make: Callable[[], Awaitable[RaceMeta]], release: Callable[[], Awaitable[None]],
                       what: str) -> RaceMeta:
    """Make the race of a claimed challenge or rematch offer (``what`` names it in the log). When it cannot
    be made the claim is given back (``release``), so that the next answer may try: an empty checked pool
    is ``pool_empty`` with ``Retry-After``; any other failure is raised once the claim is given back (if
    that fails too, the claim lapses by itself)."""
    try:
        return await make()
    except PoolUnavailable as exc:
        await release()
        raise p.Refusal(exc.code, f"{exc}; nothing was made: answer again in a few seconds",
                        retry_after=RETRY_POOL_SECONDS) from None
    except BaseException:
        try:
            await release()
        except Exception as exc:
            log("claim_release_failed", logging.WARNING, of=what, error=exc)
        raise


async def race_deal(service: Service, variant: str, checked: bool) -> CheckedDeal:
    """A new race's secret deal: a checked one from the private pool, or a secret random number."""
    if checked:
        return await service.checked.take(variant)
    return CheckedDeal(variant, fresh_deal_number(), ())


async def set_accepting(request: Request) -> Response:
    """``POST /players/{name}/challenges {"accept": bool}``: the account (its own key) takes challenges or
    refuses them all."""
    me = await bearer_account(request)
    own_account(me, request.path_params["name"])
    body = await json_body(request, p.ChallengeSetting)
    await service_of(request).challenges.set_accepting(me.account, body.accept)
    log("challenges_setting", account=me.account, accept=body.accept)
    return json_response(p.ChallengeSetting(accept=body.accept, name=me.name))
