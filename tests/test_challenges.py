"""Challenges on a real server and Redis: one account invites another by name; accepted (the race of
the two is made on a checked deal, only they may join it, both race), declined, expired, refused (an
account that takes no challenges), cancelled; and every bad request typed, with nothing stored."""

from __future__ import annotations

import asyncio
import urllib.request
from typing import Any

import msgspec
import pytest
import redis
from redis_util import Client, LiveServer, eventually, live_server, register, seed_checked

from shared import protocol as p


def auth(key: str) -> dict[str, str]:
    return {"authorization": f"Bearer {key}"}


@pytest.fixture
async def accounts(server: LiveServer) -> dict[str, str]:
    """Three accounts' keys: ann challenges bob; cy is a third party."""
    return {name: await register(server, name) for name in ("Ann", "Bob", "cy")}


async def challenge(server: LiveServer, key: str, **body: Any) -> tuple[int, Any]:
    return await server.http("POST", "/challenges", {"to": "bob", **body}, auth(key))


async def made(server: LiveServer, key: str, **body: Any) -> p.Challenge:
    status, answer = await challenge(server, key, **body)
    assert status == 201, answer
    return msgspec.convert(answer, p.Challenge)


async def page_text(server: LiveServer, path: str) -> str:
    def get() -> str:
        with urllib.request.urlopen(server.url + path, timeout=10) as resp:
            return str(resp.read().decode())

    return await asyncio.to_thread(get)


def stored(sync: redis.Redis) -> dict[bytes, Any]:
    """Everything Redis holds but the creation buckets' clocks: each key with its value."""
    out: dict[bytes, Any] = {}
    for key in sync.keys("*"):
        kind = sync.type(key)
        out[key] = (sync.hgetall(key) if kind == b"hash" else sync.zrange(key, 0, -1, withscores=True)
                    if kind == b"zset" else sync.get(key) if kind == b"string" else kind)
    return out


async def test_an_accepted_challenge_makes_a_race_of_the_two_on_a_checked_deal(
        server: LiveServer, accounts: dict[str, str], sync: redis.Redis) -> None:
    ann, bob, cy = accounts["Ann"], accounts["Bob"], accounts["cy"]
    sent = await made(server, ann, time_limit=300, rated=True)
    assert (sent.challenger, sent.challenged, sent.status, sent.deal_source) == ("Ann", "Bob", "open", "pool")
    assert sent.rated and sent.time_limit == 300 and sent.race is None
    assert sent.expires_at - sent.created_at == 120_000  # the documented default

    status, listed = await server.http("GET", "/challenges", headers=auth(bob))
    assert status == 200 and listed["accepting"] is True
    assert [c["id"] for c in listed["incoming"]] == [sent.id] and listed["outgoing"] == []
    status, listed = await server.http("GET", "/challenges", headers=auth(ann))
    assert [c["id"] for c in listed["outgoing"]] == [sent.id] and listed["incoming"] == []
    # bob's public page shows who challenged him, for what (nothing of a deal exists yet)
    page = await page_text(server, "/player/bob")
    assert f'data-challenge="{sent.id}"' in page and "Ann</a> challenges" in page and "rated" in page
    assert "Open challenges" not in await page_text(server, "/player/Ann")  # sent, not received

    status, body = await server.http("POST", f"/challenges/{sent.id}/accept", {}, auth(bob))
    assert status == 200, body
    assert body["status"] == "accepted" and body["race"] and body["code"]
    assert "Open challenges" not in await page_text(server, "/player/bob")
    race, code = body["race"], body["code"]
    status, seen = await server.http("GET", f"/challenges/{sent.id}", headers=auth(ann))  # the challenger learns it
    assert status == 200 and (seen["status"], seen["race"], seen["code"]) == ("accepted", race, code)
    status, listed = await server.http("GET", "/challenges", headers=auth(bob))
    assert listed["incoming"] == []  # answered: no longer open

    meta = await server.service.store.meta(race)
    assert meta.checked and meta.rated and meta.time_limit == 300 and meta.seats == 2
    assert meta.entrant_set == {"ann", "bob"} and meta.start_mode == "all-ready" and meta.event == ""
    status, info = await server.http("GET", f"/races/{code}")
    assert "deal" not in info["race"] and info["race"]["checked"]

    stranger = await Client.connect(server)
    await stranger.send(p.Hello(protocol=p.PROTOCOL_VERSION, race=code, key=cy))
    assert (await stranger.error()).code == "not_an_entrant"
    racers = [await Client.connect(server), await Client.connect(server)]
    for client, key in zip(racers, (ann, bob)):
        await client.hello(code, key=key)
    for client in racers:
        await client.send(p.Ready(ready=True))
    for client in racers:
        countdown = await client.expect(p.Countdown)
        assert countdown.view is not None  # both race
    assert isinstance(await racers[0].move("S"), p.Ack)
    for client in racers:
        await client.close()

    status, again = await server.http("POST", f"/challenges/{sent.id}/accept", {}, auth(bob))
    assert (status, again["code"]) == (409, "challenge_closed") and "accepted already" in again["message"]


async def test_a_declined_challenge_makes_nothing_and_the_challenger_is_told(
        server: LiveServer, accounts: dict[str, str]) -> None:
    ann, bob = accounts["Ann"], accounts["Bob"]
    sent = await made(server, ann, variant="Sixty Thieves", deal_source="random")
    assert sent.variant == "sixty-thieves" and sent.deal_source == "random"
    status, body = await server.http("POST", f"/challenges/{sent.id}/decline", {}, auth(bob))
    assert (status, body["status"]) == (200, "declined")
    status, seen = await server.http("GET", f"/challenges/{sent.id}", headers=auth(ann))
    assert (seen["status"], seen["race"]) == ("declined", None)
    status, body = await server.http("POST", f"/challenges/{sent.id}/accept", {}, auth(bob))
    assert (status, body["code"]) == (409, "challenge_closed") and "declined" in body["message"]
    assert await server.service.store.active_ids() == []  # no race was made

    cancelled = await made(server, ann)
    status, body = await server.http("POST", f"/challenges/{cancelled.id}/cancel", {}, auth(ann))
    assert (status, body["status"]) == (200, "cancelled")
    status, body = await server.http("POST", f"/challenges/{cancelled.id}/accept", {}, auth(bob))
    assert (status, body["code"]) == (409, "challenge_closed") and "cancelled" in body["message"]


async def test_an_unanswered_challenge_expires(redis_url: str) -> None:
    async with live_server(redis_url, challenge_time=1) as server:
        await seed_checked(server)
        ann, bob = await register(server, "Ann"), await register(server, "Bob")
        sent = await made(server, ann)
        assert sent.expires_at - sent.created_at == 1000

        async def expired() -> bool:
            status, seen = await server.http("GET", f"/challenges/{sent.id}", headers=auth(ann))
            return bool(seen["status"] == "expired")

        await eventually(expired, "the challenge to expire")
        status, listed = await server.http("GET", "/challenges", headers=auth(bob))
        assert listed["incoming"] == []
        for action in ("accept", "decline"):
            status, body = await server.http("POST", f"/challenges/{sent.id}/{action}", {}, auth(bob))
            assert (status, body["code"]) == (410, "challenge_expired")
        ttl = server.service.redis.pttl(f"challenge:{{{sent.id}}}")
        assert 0 < await ttl <= 600_000 + 1000  # Redis forgets it some minutes later
        assert await server.service.store.active_ids() == []


async def test_an_account_that_refuses_challenges_gets_none(
        server: LiveServer, accounts: dict[str, str], sync: redis.Redis) -> None:
    ann, bob = accounts["Ann"], accounts["Bob"]
    status, body = await server.http("POST", "/players/Bob/challenges", {"accept": False}, auth(bob))
    assert (status, body) == (200, {"accept": False, "name": "Bob"})
    status, body = await server.http("POST", "/players/Bob/challenges", {"accept": False}, auth(ann))
    assert (status, body["code"]) == (401, "bad_key")  # nobody sets another's
    before = stored(sync)
    status, body = await challenge(server, ann)
    assert (status, body["code"]) == (403, "challenges_refused") and "Bob does not take challenges" in body["message"]
    assert stored(sync) == before
    status, listed = await server.http("GET", "/challenges", headers=auth(bob))
    assert listed["accepting"] is False
    status, body = await server.http("POST", "/players/bob/challenges", {"accept": True}, auth(bob))
    assert status == 200 and body["accept"] is True
    await made(server, ann)


async def test_bad_challenges_are_typed_and_store_nothing(
        server: LiveServer, accounts: dict[str, str], sync: redis.Redis) -> None:
    ann, bob, cy = accounts["Ann"], accounts["Bob"], accounts["cy"]
    before = stored(sync)
    cases: list[tuple[dict[str, Any], dict[str, str] | None, int, str]] = [
        ({"to": "ANN"}, auth(ann), 400, "self_challenge"),
        ({"to": "nobody"}, auth(ann), 404, "player_not_found"),
        ({"to": "no such name!"}, auth(ann), 404, "player_not_found"),
        ({"to": "bob", "variant": "chess"}, auth(ann), 400, "bad_variant"),
        ({"to": "bob", "time_limit": 0}, auth(ann), 400, "bad_field"),
        ({"to": "bob", "time_limit": 86_401}, auth(ann), 400, "bad_field"),
        ({"to": "bob", "deal_source": "number"}, auth(ann), 400, "bad_field"),
        ({"to": "bob"}, None, 401, "bad_key"),
        ({"to": "bob"}, auth("ann." + "x" * 43), 401, "bad_key"),
    ]
    for body, headers, want_status, want_code in cases:
        status, answer = await server.http("POST", "/challenges", body, headers)
        assert (status, answer["code"]) == (want_status, want_code), (body, answer)
        assert answer["message"]
    assert stored(sync) == before

    sent = await made(server, ann)
    before = stored(sync)
    for path, key in ((f"/challenges/{sent.id}/accept", cy), (f"/challenges/{sent.id}/decline", cy),
                      (f"/challenges/{sent.id}/accept", ann), (f"/challenges/{sent.id}/cancel", bob)):
        status, answer = await server.http("POST", path, {}, auth(key))
        assert (status, answer["code"]) == (403, "not_challenged"), (path, answer)
    status, answer = await server.http("GET", f"/challenges/{sent.id}", headers=auth(cy))
    assert (status, answer["code"]) == (403, "not_challenged")
    status, answer = await server.http("POST", "/challenges/nosuchid/accept", {}, auth(bob))
    assert (status, answer["code"]) == (404, "challenge_not_found")
    status, answer = await server.http("POST", f"/challenges/{sent.id}/accept", {})
    assert (status, answer["code"]) == (401, "bad_key")
    assert stored(sync) == before


def test_the_protocol_document_covers_every_challenge_field() -> None:
    """docs/protocol.md, "Challenges", names every field of the challenge bodies."""
    from pathlib import Path

    doc = (Path(__file__).resolve().parent.parent / "docs" / "protocol.md").read_text()
    section = doc[doc.index("## Challenges"):doc.index("## Events")]
    for struct in (p.ChallengeCreate, p.Challenge, p.ChallengeList, p.ChallengeSetting):
        for f in msgspec.structs.fields(struct):
            assert f"`{f.encode_name}`" in section, f"{struct.__name__}.{f.encode_name}"


async def test_two_accepts_at_once_make_one_race(server: LiveServer, accounts: dict[str, str]) -> None:
    """The first accept claims the challenge while its race is made; the other is challenge_closed."""
    sent = await made(server, accounts["Ann"])
    answers = await asyncio.gather(*(server.http("POST", f"/challenges/{sent.id}/accept", {}, auth(accounts["Bob"]))
                                     for _ in range(2)))
    assert sorted(status for status, _ in answers) == [200, 409]
    assert [body["code"] for status, body in answers if status == 409] == ["challenge_closed"]
    assert len(await server.service.store.active_ids()) == 1


async def test_open_challenges_are_capped_per_victim_and_in_all(
        server: LiveServer, accounts: dict[str, str], sync: redis.Redis) -> None:
    """One account could send another any number of challenges (120 of 120 made, all on the other's page):
    at most OPEN_TO_ONE open to one account and OPEN_IN_ALL in all; a refusal is typed, in the player's
    words, and stores nothing; an answered or cancelled challenge frees its place."""
    from server.matchmaking.challenges import OPEN_IN_ALL, OPEN_TO_ONE

    ann, bob = accounts["Ann"], accounts["Bob"]
    sent = [await made(server, ann) for _ in range(OPEN_TO_ONE)]
    before = stored(sync)
    status, body = await challenge(server, ann)
    assert (status, body["code"]) == (429, "too_many_challenges")
    assert body["message"] == (f"you have {OPEN_TO_ONE} open challenges to Bob already: wait for an answer, "
                               "or cancel one (thieves challenges cancel ID)")
    assert stored(sync) == before
    status, listed = await server.http("GET", "/challenges", headers=auth(bob))
    assert len(listed["incoming"]) == OPEN_TO_ONE
    assert (await server.http("POST", f"/challenges/{sent[0].id}/decline", {}, auth(bob)))[0] == 200
    await made(server, ann)  # the declined one's place
    assert (await server.http("POST", f"/challenges/{sent[1].id}/cancel", {}, auth(ann)))[0] == 200
    await made(server, ann)  # the cancelled one's
    assert (await challenge(server, ann))[1]["code"] == "too_many_challenges"
    cy = await made(server, accounts["cy"], to="Ann")  # others' challenges are theirs to count

    others = ["cy"] + [f"p{i}" for i in range(OPEN_IN_ALL // OPEN_TO_ONE + 1)]
    for name in others[1:]:
        await register(server, name)
    open_ = OPEN_TO_ONE
    for name in others:
        for _ in range(min(OPEN_TO_ONE, OPEN_IN_ALL - open_)):
            await made(server, ann, to=name)
            open_ += 1
    assert open_ == OPEN_IN_ALL
    before = stored(sync)
    status, body = await challenge(server, ann, to=others[-1])
    assert (status, body["code"]) == (429, "too_many_challenges")
    assert f"you have {OPEN_IN_ALL} open challenges already" in body["message"]
    assert stored(sync) == before
    assert (await server.http("POST", f"/challenges/{cy.id}/accept", {}, auth(ann)))[0] == 200


async def test_a_challenge_nobody_waits_for_is_withdrawn(
        server: LiveServer, accounts: dict[str, str], sync: redis.Redis) -> None:
    """The challenger's client asks about its challenge every second; once it stops (a closed terminal, a
    killed process) for the presence lease, the challenge is withdrawn: it reads ``cancelled``, leaves the
    other's list, an accept is refused in words, and its place among the challenger's open ones is free.
    While the challenger asks, it stays open."""
    from server.matchmaking.challenges import OPEN_TO_ONE
    from server.store.keys import AccountKeys, challenge_key

    ann, bob = accounts["Ann"], accounts["Bob"]
    kept, gone = await made(server, ann), await made(server, ann)
    for _ in range(OPEN_TO_ONE - 2):
        await made(server, ann)
    assert (await server.http("GET", f"/challenges/{kept.id}", headers=auth(ann)))[1]["status"] == "open"
    lease = int(sync.hget(challenge_key(kept.id), "lease_until"))
    assert lease > kept.created_at  # renewed by the challenger's read
    # The lease of ``gone`` runs out (its challenger stopped asking): set in Redis, as no test waits 15 s.
    sync.hset(challenge_key(gone.id), "lease_until", 1)
    sync.zadd(AccountKeys("ann").sent, {f"{gone.id}:bob": 1})
    status, listed = await server.http("GET", "/challenges", headers=auth(bob))
    assert gone.id not in [c["id"] for c in listed["incoming"]] and kept.id in [c["id"] for c in listed["incoming"]]
    status, body = await server.http("POST", f"/challenges/{gone.id}/accept", {}, auth(bob))
    assert (status, body["code"]) == (409, "challenge_closed")
    assert body["message"] == "that challenge is closed: its challenger stopped waiting for the answer"
    status, seen = await server.http("GET", f"/challenges/{gone.id}", headers=auth(ann))
    assert seen["status"] == "cancelled"
    await made(server, ann)  # its place is free again
    status, body = await server.http("POST", f"/challenges/{kept.id}/accept", {}, auth(bob))
    assert (status, body["status"]) == (200, "accepted")
