"""The daily deal on a real server and Redis: one deal a day, one play per account on its own clock,
the board, and the reveal once the day is over."""

from __future__ import annotations

import urllib.parse

import msgspec
from redis_util import Client, LiveServer, live_server, register, seed_checked

from server.events.daily import day_end, event_name, today
from server.deals.checked import CheckedDeal
from server.race.clock import now_ms
from server.store import StoreError
from shared import protocol as p
from shared.pool import load_pool

VARIANT = "forty-thieves"


async def _play_post(server: LiveServer, key: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    return await server.http("POST", f"/daily/{VARIANT}", headers={"authorization": f"Bearer {key}"})


async def _play(server: LiveServer, key: str, line: list[str], moves: int) -> p.DailyPlay:
    """Ask for today's play, join it, start it (ready), play ``moves`` of the winning line, give up unless won."""
    status, body = await _play_post(server, key)
    assert status == 200, body
    play = msgspec.convert(body, p.DailyPlay)
    c = await Client.connect(server)
    await c.hello(play.code, key=key)
    await c.send(p.Ready(ready=True))
    await c.expect(p.Countdown)
    for text in line[:moves]:
        assert isinstance(await c.move(text), p.Ack)
    if moves < len(line):
        await c.give_up()
    finished = await c.expect(p.Finished)
    assert finished.results.deal == 0 and finished.results.records == [], "nothing revealed before the day is over"
    await c.close()
    return play


async def test_several_accounts_play_the_days_deal_once_each_at_different_times(server: LiveServer) -> None:
    keys = {n: await register(server, n) for n in ("ann", "bob", "cy")}
    first = await _play_post(server, keys["ann"])
    again = await _play_post(server, keys["ann"])
    assert first[1]["race"] == again[1]["race"], "one play a day: asking again gives the same race"
    drawn = await server.tournaments.daily.deal(VARIANT, today(now_ms()))
    assert drawn is not None
    line = list(load_pool(VARIANT).lines[drawn[0]])
    await _play(server, keys["ann"], line, len(line))  # wins
    bob = await _play(server, keys["bob"], line, 2)  # later, on his own clock
    cy = await _play(server, keys["cy"], line, 0)
    metas = [await server.service.store.meta(r) for r in (first[1]["race"], bob.race, cy.race)]
    assert len({m.deal for m in metas if m}) == 1 and len({m.commitment for m in metas if m}) == 3
    status, body = await server.http("GET", f"/races/{bob.race}/results")
    assert status == 200 and body["deal"] == 0 and body["records"] == []
    status, body = await server.http("GET", f"/daily/{VARIANT}")
    board = msgspec.convert(body, p.DailyBoard)
    assert not board.revealed and board.deal is None
    assert [line_.name for line_ in board.lines] == ["ann", "bob", "cy"]
    assert board.lines[0].status == "finished" and board.lines[0].time_ms is not None
    assert all(line_.moves is None for line_ in board.lines)
    again = await _play_post(server, keys["bob"])
    assert again[1]["race"] == bob.race, "bob cannot play the day's deal twice"


async def test_the_deal_and_every_game_are_revealed_once_the_day_is_over(server: LiveServer) -> None:
    # A play of yesterday's deal, made as POST /daily made today's (the clock cannot be moved back here; a
    # real one could not be begun today: its ends_by, the day's end, is past, and it is made without).
    yesterday = today(now_ms() - 86_400_000)
    key = await register(server, "ann")
    service = server.service
    deal = CheckedDeal(VARIANT, 7, ())
    await server.tournaments.daily.draw(VARIANT, yesterday, 7, "", now_ms())
    race = await service.create_for(["ann"], deal, 60, "all-ready", event_name(VARIANT, yesterday),
                                    reveal_at=day_end(yesterday))
    await server.tournaments.daily.claim(VARIANT, yesterday, "ann", race.id)
    c = await Client.connect(server)
    await c.hello(race.code, key=key)
    await c.send(p.Ready(ready=True))
    await c.expect(p.Countdown)
    assert isinstance(await c.move("S"), p.Ack)
    await c.give_up()
    finished = await c.expect(p.Finished)
    assert finished.results.deal == 7 and finished.results.records[0].moves == ["S"]
    status, body = await server.http("GET", f"/daily/{VARIANT}?date={yesterday}")
    board = msgspec.convert(body, p.DailyBoard)
    assert board.revealed and board.deal == 7 and board.lines[0].moves == ["S"]
    await c.close()


async def test_a_play_ends_with_its_day_and_cannot_begin_once_the_day_is_over(server: LiveServer) -> None:
    """When the day's board shows the deal and the games (at midnight UTC), nobody may still be playing
    that deal: a play begun late ends at midnight, and one not begun by then never begins. Midnight is
    brought near here by making plays as POST /daily does with an ``ends_by`` seconds away (the clock
    cannot be moved)."""
    key = await register(server, "ann")
    status, body = await _play_post(server, key)
    made = await server.service.store.meta(body["race"])
    assert status == 200 and made is not None and made.ends_by == day_end(today(now_ms())) == body["reveal_at"]

    service, deal = server.service, CheckedDeal(VARIANT, 7, ())
    midnight = now_ms() + 20_000  # the play's 60 s would run past it
    late = await service.create_for(["ann"], deal, 60, "all-ready", event_name(VARIANT, "2026-12-05"),
                                    reveal_at=midnight, ends_by=midnight)
    c = await Client.connect(server)
    await c.hello(late.code, key=key)
    await c.send(p.Ready(ready=True))
    countdown = await c.expect(p.Countdown)
    assert countdown.ends_at == midnight and countdown.ends_at - countdown.starts_at < 60_000
    await c.close()

    over = await service.create_for(["ann"], deal, 60, "all-ready", event_name(VARIANT, "2026-12-04"),
                                    reveal_at=now_ms(), ends_by=now_ms())
    c = await Client.connect(server)
    await c.hello(over.code, key=key)
    before = await service.store.meta(over.id)
    await c.send(p.Ready(ready=True))
    error = await c.error()
    assert error.code == "day_over" and "day of this daily deal is over" in error.message
    assert await service.store.meta(over.id) == before, "nothing changed: still a lobby, nobody ready"
    assert (await service.store.lines(over.id))[1][0].status == "waiting"
    # The maker's start (a race started by whoever made it) is refused the same way.
    try:
        await service.store.start(over.id, now_ms(), 0)
        raise AssertionError("started after its end")
    except StoreError as exc:
        assert exc.code == "day_over"
    assert await service.store.meta(over.id) == before
    await c.close()


async def test_bad_daily_requests_are_typed(server: LiveServer) -> None:
    status, body = await server.http("POST", f"/daily/{VARIANT}")
    assert (status, body["code"]) == (401, "bad_key")
    key = await register(server, "ann")
    status, body = await server.http("POST", "/daily/nope", headers={"authorization": f"Bearer {key}"})
    assert (status, body["code"]) == (400, "bad_variant")
    for bad in ("yesterday", "20261201", "2026-12-01T00:00", "2026-12-1", "２０２６-１２-０１", "2026-02-30"):
        status, body = await server.http("GET", f"/daily/{VARIANT}?date={urllib.parse.quote(bad)}")
        assert (status, body["code"]) == (400, "bad_field"), f"{bad!r} is not a day written YYYY-MM-DD"
    other = await register(server, "bob")
    status, body = await _play_post(server, key)
    intruder = await Client.connect(server)
    await intruder.send(p.Hello(protocol=p.PROTOCOL_VERSION, race=body["code"], key=other))
    assert (await intruder.error()).code == "not_an_entrant", "a play of the daily deal is its account's alone"


async def _post_daily(server: LiveServer, variant: str, key: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    return await server.http("POST", f"/daily/{variant}", headers={"authorization": f"Bearer {key}"})


async def test_a_new_play_spends_a_creation_token_and_asking_again_does_not(redis_url: str) -> None:
    """Making a play may set the solver working (the day's first), so it counts as a race creation of
    the address (issue 22: the endpoint had no limit at all); the same play asked for again is free."""
    async with live_server(redis_url, create_burst=1, create_interval=60.0) as server:
        await seed_checked(server, 1, (VARIANT,))
        ann, bob = await register(server, "ann"), await register(server, "bob")
        status, first = await _post_daily(server, VARIANT, ann)
        assert status == 200, first
        status, again = await _post_daily(server, VARIANT, ann)
        assert (status, again["race"]) == (200, first["race"]), "asking again answers the same play, at no cost"
        status, body = await _post_daily(server, VARIANT, bob)
        assert (status, body["code"]) == (429, "create_rate_limited"), body
        assert 1 <= int({k.lower(): v for k, v in server.last_headers.items()}["retry-after"]) <= 60
        assert await server.tournaments.daily.play_of(VARIANT, first["date"], "bob") is None, "nothing made for bob"


async def test_the_daily_deal_falls_back_to_a_secret_random_deal_when_no_checked_one_is_found(
        redis_url: str) -> None:
    """Eighty Thieves with an empty pool: the solver seldom wins one of its deals in the time, and the
    day's first player got 503 pool_empty after solving for --checked-wait seconds (issue 22). As
    documented, the day's deal is then a secret random one, and the play comes at once."""
    async with live_server(redis_url, checked_wait=0.5) as server:
        key = await register(server, "ann")
        status, body = await _post_daily(server, "eighty-thieves", key)
        assert status == 200, body
        play = msgspec.convert(body, p.DailyPlay)
        drawn = await server.tournaments.daily.deal("eighty-thieves", play.date)
        meta = await server.service.store.meta(play.race)
        assert drawn is not None and meta is not None and meta.deal == drawn[0] and meta.variant == "eighty-thieves"
        bob = await register(server, "bob")
        status, body = await _post_daily(server, "eighty-thieves", bob)
        other = await server.service.store.meta(body["race"])
        assert status == 200 and other is not None and other.deal == meta.deal, "one deal a day for everyone"
