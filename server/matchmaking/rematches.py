"""Rematches: after a race every racer may offer one; once every racer has said yes, a new race is made
for the same players with the same settings and a new deal (docs/protocol.md, "Rematches").

``GET /races/{id}/rematch`` (anyone: the offer as it stands) and ``POST /races/{id}/rematch``
``{"accept": true|false}`` (a racer, with its account's key as ``Authorization: Bearer``). The offer is
one hash under the finished race's hash tag (a one-key script per answer), open for the server's
``--challenge-time``; the answer that completes it makes the race, as an accepted challenge does.

What a rematch may show: the new race plays a fresh secret deal, and the offer names only the players
and their answers, nothing of the old deal. A race whose deal stays secret after its end (an event's
heat, a daily deal's play) offers no rematch at all; nor does a race with a player without an account
(the new race admits its players by their accounts).
"""

from __future__ import annotations

import secrets

import msgspec
from starlette.requests import Request
from starlette.responses import Response

from shared import protocol as p

from ..ops.http import json_body, json_response
from ..race.requests import service_of
from ..ops.log import log
from ..race.clock import now_ms
from ..race.service import Service
from ..store import RaceMeta
from ..store.records import RematchRecord
from .challenges import make_claimed, race_deal
from ..players.registration import bearer_account


async def _finished(request: Request) -> tuple[RaceMeta, p.Results]:
    """The finished race and its results; raises the refusal that says why it offers no rematch."""
    service = service_of(request)
    race = await service.store.resolve(request.path_params["race"])
    meta = await service.store.meta(race) if race else None
    if meta is None:
        raise p.Refusal(p.ErrorCode.RACE_NOT_FOUND)
    blob = await service.store.results(meta.id) if meta.status == "finished" else None
    if blob is None:
        raise p.Refusal(p.ErrorCode.RACE_NOT_OVER, "a rematch is offered once the race is over")
    if meta.event:
        raise p.Refusal(p.ErrorCode.NO_REMATCH, "a heat of an event or a play of the daily deal offers no rematch")
    results = msgspec.msgpack.decode(blob, type=p.Results)
    if any(s.account is None for s in results.standings):
        raise p.Refusal(p.ErrorCode.NO_REMATCH, "a rematch is for accounts: a racer of this race has none")
    return meta, results


def rematch_body(meta: RaceMeta, results: p.Results, record: RematchRecord | None, now: int) -> p.Rematch:
    names = {s.account: s.name for s in results.standings}
    players = [s.name for s in sorted(results.standings, key=lambda s: s.seat)]
    if record is None:
        return p.Rematch(race=meta.id, status="none", players=players)
    return p.Rematch(race=meta.id, status=record.shown_status(now), players=players,  # type: ignore[arg-type]
                     accepted=[names.get(a, a) for a, said in record.answers.items() if said == "yes"],
                     declined=[names.get(a, a) for a, said in record.answers.items() if said == "no"],
                     expires_at=record.expires_at, new_race=record.race or None, code=record.code or None)


async def get_rematch(request: Request) -> Response:
    """The rematch offer of a finished race as it stands (``none`` before anyone offered one)."""
    meta, results = await _finished(request)
    record = await service_of(request).challenges.rematch(meta.id)
    return json_response(rematch_body(meta, results, record, now_ms()))


async def answer_rematch(request: Request) -> Response:
    """A racer offers or accepts (``accept: true``) or declines a rematch; the last yes makes the race."""
    me = await bearer_account(request)
    meta, results = await _finished(request)
    accounts = [s.account for s in sorted(results.standings, key=lambda s: s.seat) if s.account]
    if me.account not in accounts:
        raise p.Refusal(p.ErrorCode.NOT_A_RACER)
    body = await json_body(request, p.RematchAnswer)
    service = service_of(request)
    store = service.challenges
    claim = secrets.token_hex(8)
    # A refusal (rematch_closed) is answered as the store gives it.
    kind = await store.answer_rematch(meta.id, me.account, body.accept, now_ms(),
                                      service.config.matchmaking.challenge_time * 1000, len(accounts), claim)
    if kind == "make":
        new = await make_claimed(lambda: _new_race(service, meta, accounts),
                                 lambda: store.rematch_release(meta.id, claim), meta.id)
        await store.rematch_made(meta.id, claim, new.id, new.code)
        log("rematch_made", race=meta.id, new_race=new.id, code=new.code)
    else:
        log("rematch_answer", race=meta.id, account=me.account, accept=body.accept)
    return json_response(rematch_body(meta, results, await store.rematch(meta.id), now_ms()))


async def _new_race(service: Service, meta: RaceMeta, accounts: list[str]) -> RaceMeta:
    """The rematch: the same players and settings, a new secret deal (a checked one if the race's was)."""
    deal = await race_deal(service, meta.variant, meta.checked)
    return await service.create_for(accounts, deal, meta.time_limit, "all-ready", "", rated=meta.rated,
                                    undo=meta.undo, hints=meta.hints)
