"""Rematches on a real server and Redis: every racer of a finished race says yes and a new race of the
same players and settings on a new deal is made (only they may join it); one says no and nothing is
made; an offer nobody completes expires, and a new one may follow; every bad request typed, nothing
stored."""

from __future__ import annotations

from typing import Any

import redis
from redis_util import Client, LiveServer, create_race, eventually, live_server, register, seed_checked
from test_challenges import auth, stored

from shared import protocol as p


async def race_to_the_end(server: LiveServer, code: str, keys: list[str | None], names: list[str] | None = None) -> str:
    """Everyone joins (by key, else by name), says ready, and gives up at once: the race id, finished."""
    clients = []
    for i, key in enumerate(keys):
        c = await Client.connect(server)
        if key is not None:
            await c.hello(code, key=key)
        else:
            assert names is not None
            await c.hello(code, names[i])
        clients.append(c)
    for c in clients:
        await c.send(p.Ready(ready=True))
    for c in clients:
        await c.expect(p.Countdown)
    for c in clients:
        await c.give_up()
    finished = await clients[0].expect(p.Finished)
    for c in clients:
        await c.close()
    return finished.results.race


async def finished_race(server: LiveServer, keys: list[str], **fields: Any) -> str:
    created = await create_race(server, seats=len(keys), start_mode="all-ready", **fields)
    return await race_to_the_end(server, created.race.code, keys)


async def rematch(server: LiveServer, race: str, key: str | None, accept: bool = True) -> tuple[int, Any]:
    return await server.http("POST", f"/races/{race}/rematch", {"accept": accept}, auth(key) if key else None)


async def test_a_rematch_accepted_by_every_racer_makes_a_new_race_of_them(server: LiveServer) -> None:
    ann, bob = await register(server, "Ann"), await register(server, "Bob")
    status, sent = await server.http("POST", "/challenges", {"to": "bob", "time_limit": 120, "undo": False,
                                                             "hints": True}, auth(ann))
    status, accepted = await server.http("POST", f"/challenges/{sent['id']}/accept", {}, auth(bob))
    race = await race_to_the_end(server, accepted["code"], [ann, bob])
    old = await server.service.store.meta(race)

    status, body = await server.http("GET", f"/races/{race}/rematch")
    assert (status, body["status"], body["players"]) == (200, "none", ["Ann", "Bob"])
    status, body = await rematch(server, race, ann)
    assert (status, body["status"], body["accepted"], body["new_race"]) == (200, "open", ["Ann"], None)
    assert body["expires_at"] > 0
    status, body = await server.http("GET", f"/races/{accepted['code']}/rematch")  # by code too; anyone may look
    assert body["status"] == "open" and "deal" not in body
    status, body = await rematch(server, race, bob)
    assert (status, body["status"]) == (200, "accepted") and body["new_race"] and body["code"]
    assert sorted(body["accepted"]) == ["Ann", "Bob"]
    new_race, code = body["new_race"], body["code"]
    status, again = await rematch(server, race, ann)  # a late yes finds the same race
    assert (again["status"], again["new_race"]) == ("accepted", new_race)

    new = await server.service.store.meta(new_race)
    assert (new.variant, new.time_limit, new.undo, new.hints, new.rated, new.checked, new.seats) == (
        old.variant, old.time_limit, old.undo, old.hints, old.rated, old.checked, old.seats)
    assert new.entrant_set == {"ann", "bob"} and new.deal != old.deal and new.status == "lobby"
    racers = [await Client.connect(server), await Client.connect(server)]
    for client, key in zip(racers, (ann, bob)):
        await client.hello(code, key=key)
        await client.send(p.Ready(ready=True))
    for client in racers:
        assert (await client.expect(p.Countdown)).view is not None
        await client.close()


async def test_a_rematch_some_decline_makes_nothing(server: LiveServer, sync: redis.Redis) -> None:
    keys = [await register(server, name) for name in ("Ann", "Bob", "cy")]
    race = await finished_race(server, keys)
    active = await server.service.store.active_ids()
    assert (await rematch(server, race, keys[0]))[1]["status"] == "open"
    assert (await rematch(server, race, keys[1]))[1]["accepted"] == ["Ann", "Bob"]
    status, body = await rematch(server, race, keys[2], accept=False)
    assert (status, body["status"], body["declined"], body["new_race"]) == (200, "declined", ["cy"], None)
    await eventually(lambda: sync.zcard("results:pending") == 0, "the race applied to the accounts")
    before = stored(sync)
    status, body = await rematch(server, race, keys[0])
    assert (status, body["code"]) == (409, "rematch_closed")
    assert stored(sync) == before and await server.service.store.active_ids() == active


async def test_a_declined_offer_reads_expired_once_its_time_is_up(server: LiveServer, sync: redis.Redis) -> None:
    """docs/protocol.md: a declined offer stays ``declined`` until the offer's time, then reads ``expired``
    (it read ``declined`` for its whole 10 minutes kept, while a yes already began a new offer)."""
    from server.store.keys import rematch_key

    keys = [await register(server, name) for name in ("Ann", "Bob")]
    race = await finished_race(server, keys)
    assert (await rematch(server, race, keys[0]))[1]["status"] == "open"
    assert (await rematch(server, race, keys[1], accept=False))[1]["status"] == "declined"
    assert (await server.http("GET", f"/races/{race}/rematch"))[1]["status"] == "declined"
    sync.hset(rematch_key(race), "expires_at", 1)  # the offer's time is up (no wait on the clock)
    status, body = await server.http("GET", f"/races/{race}/rematch")
    assert (status, body["status"], body["declined"]) == (200, "expired", ["Bob"])
    status, body = await rematch(server, race, keys[1])  # as the doc says: the next yes begins a new offer
    assert (status, body["status"], body["accepted"], body["declined"]) == (200, "open", ["Bob"], [])


async def test_an_offer_not_every_racer_takes_expires_and_another_may_follow(redis_url: str) -> None:
    async with live_server(redis_url, challenge_time=1) as server:
        await seed_checked(server)
        keys = [await register(server, name) for name in ("Ann", "Bob")]
        race = await finished_race(server, keys)
        status, body = await server.http("POST", f"/races/{race}/rematch", {"accept": False}, auth(keys[1]))
        assert (status, body["status"]) == (200, "none")  # nothing offered: nothing to decline
        assert (await rematch(server, race, keys[0]))[1]["status"] == "open"

        async def expired() -> bool:
            return bool((await server.http("GET", f"/races/{race}/rematch"))[1]["status"] == "expired")

        await eventually(expired, "the offer to expire")
        assert await server.service.store.active_ids() == []
        status, body = await rematch(server, race, keys[1])  # a new offer, bob's
        assert (status, body["status"], body["accepted"]) == (200, "open", ["Bob"])


async def test_bad_rematch_requests_are_typed_and_store_nothing(server: LiveServer, sync: redis.Redis) -> None:
    ann, bob, cy = [await register(server, name) for name in ("Ann", "Bob", "cy")]
    race = await finished_race(server, [ann, bob])
    casual = await create_race(server, seats=2, start_mode="all-ready")
    casual_race = await race_to_the_end(server, casual.race.code, [ann, None], [None, "dan"])  # type: ignore[list-item]
    running = await create_race(server, seats=2)
    status, daily = await server.http("POST", "/daily/forty-thieves", headers=auth(cy))
    daily_race = await race_to_the_end(server, daily["code"], [cy])
    await eventually(lambda: sync.zcard("results:pending") == 0, "the races applied to the accounts")
    before = stored(sync)
    cases = [
        (race, None, 401, "bad_key"),
        (race, "ann." + "x" * 43, 401, "bad_key"),
        (race, cy, 403, "not_a_racer"),
        ("nosuchrace", ann, 404, "race_not_found"),
        (running.race.id, ann, 409, "race_not_over"),
        (casual_race, ann, 409, "no_rematch"),
        (daily_race, cy, 409, "no_rematch"),
    ]
    for which, key, want_status, want_code in cases:
        status, body = await rematch(server, which, key)
        assert (status, body["code"]) == (want_status, want_code), (which, body)
        assert body["message"]
    status, body = await server.http("POST", f"/races/{race}/rematch", {"accept": "yes"}, auth(ann))
    assert (status, body["code"]) == (400, "bad_field")
    assert (await server.http("GET", f"/races/{daily_race}/rematch"))[1]["code"] == "no_rematch"
    assert stored(sync) == before


def test_the_protocol_document_covers_every_rematch_field() -> None:
    from pathlib import Path

    import msgspec

    doc = (Path(__file__).resolve().parent.parent / "docs" / "protocol.md").read_text()
    section = doc[doc.index("## Rematches"):doc.index("## Events")]
    for struct in (p.RematchAnswer, p.Rematch):
        for f in msgspec.structs.fields(struct):
            assert f"`{f.encode_name}`" in section, f"{struct.__name__}.{f.encode_name}"


def test_the_end_screen_says_where_the_offer_stands() -> None:
    """client_cli/rematch.py's words for each state, and whether m does something then."""
    from client_cli.rematch import rematch_words

    def offer(status: str, accepted: tuple[str, ...] = (), declined: tuple[str, ...] = ()) -> p.Rematch:
        return p.Rematch(race="r", status=status, players=["Ann", "Bob", "cy"],  # type: ignore[arg-type]
                         accepted=list(accepted), declined=list(declined), code="ABCDEF")

    assert rematch_words(offer("none"), "Ann") == ("m: offer Bob, cy a rematch", True)
    assert rematch_words(offer("open", ("Ann",)), "Ann") == ("rematch offered: waiting for Bob, cy", False)
    assert rematch_words(offer("open", ("Ann", "cy")), "Bob") == ("Ann, cy want a rematch: m accepts, n declines",
                                                                  True)
    assert rematch_words(offer("declined", ("Ann",), ("cy",)), "Ann") == ("no rematch: cy declined", False)
    assert rematch_words(offer("expired", ("Ann",)), "Bob") == ("the rematch offer expired: m offers another", True)
    assert rematch_words(offer("accepted"), "Bob") == ("rematch: race ABCDEF, joining…", False)


async def test_an_empty_checked_pool_makes_nothing_and_the_answer_may_come_again(redis_url: str) -> None:
    """A challenge or rematch whose checked deal cannot be had now (empty pool, no time to solve one) is
    answered ``pool_empty`` with Retry-After, stays open, and the same answer later makes the race."""
    async with live_server(redis_url, checked_wait=0.0) as server:
        ann, bob = await register(server, "Ann"), await register(server, "Bob")
        status, sent = await server.http("POST", "/challenges", {"to": "bob"}, auth(ann))
        status, body = await server.http("POST", f"/challenges/{sent['id']}/accept", {}, auth(bob))
        assert (status, body["code"]) == (503, "pool_empty") and server.last_headers["retry-after"] == "5"
        assert (await server.http("GET", f"/challenges/{sent['id']}", headers=auth(ann)))[1]["status"] == "open"
        await seed_checked(server, count=1, variants=("forty-thieves",))
        status, body = await server.http("POST", f"/challenges/{sent['id']}/accept", {}, auth(bob))
        assert (status, body["status"]) == (200, "accepted")

        race = await race_to_the_end(server, body["code"], [ann, bob])
        await rematch(server, race, ann)
        status, body = await rematch(server, race, bob)
        assert (status, body["code"]) == (503, "pool_empty") and "answer again" in body["message"]
        assert (await server.http("GET", f"/races/{race}/rematch"))[1]["status"] == "open"
        await seed_checked(server, count=1, variants=("forty-thieves",))
        status, body = await rematch(server, race, bob)
        assert (status, body["status"]) == (200, "accepted")


async def test_a_heat_of_an_event_offers_no_rematch(redis_url: str) -> None:
    """An event keeps its deals secret until it is over, so its heats offer no rematch (nor does the
    offer's endpoint show anything of them)."""
    token = "organiser-token-for-rematch"
    async with live_server(redis_url, organiser_token=token) as server:
        keys = {name: await register(server, name) for name in ("ann", "bob")}
        status, event = await server.http("POST", "/events", {"name": "Cup", "rounds": 2, "heat_size": 2,
                                                              "join_seconds": 1}, auth(token))
        assert status == 201, event
        for key in keys.values():
            assert (await server.http("POST", f"/events/{event['id']}/entrants", {}, auth(key)))[0] == 200
        assert (await server.http("POST", f"/events/{event['id']}/start", {}, auth(token)))[0] == 200

        async def drawn() -> bool:
            return bool((await server.http("GET", f"/events/{event['id']}"))[1]["schedule"])

        await eventually(drawn, "round 1 drawn")
        heat = (await server.http("GET", f"/events/{event['id']}"))[1]["schedule"][0]["heats"][0]
        clients = []
        for account in heat["entrants"]:
            c = await Client.connect(server)
            await c.hello(heat["code"], key=keys[account])
            clients.append(c)
        for c in clients:
            await c.expect(p.Countdown, timeout=30)
        for c in clients:
            await c.give_up()
        await clients[0].expect(p.Finished)
        for c in clients:
            await c.close()
        for method, key in (("GET", None), ("POST", keys["ann"])):
            status, body = await server.http(method, f"/races/{heat['race']}/rematch",
                                             {"accept": True} if method == "POST" else None, auth(key) if key else None)
            assert (status, body["code"]) == (409, "no_rematch"), body
