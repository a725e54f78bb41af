"""The private pool of checked deals, with real servers, real worker processes and a real Redis.

Budgets are small (0.1 s a deal: about one random Forty Thieves deal in
nine is won within it) and targets tiny, so a pool fills in seconds.
"""

from __future__ import annotations

import asyncio
import json
import time
import urllib.request
from typing import Any

import pytest
from redis_util import Client, LiveServer, create_race, live_server, seed_checked, start_race
from test_metrics import scrape

from server.deals.checked import CheckedDeal
from server.store import checked_key
from shared import protocol as p
from shared.pool import pool_deals
from shared.record import GameRecord, replay

FILL = dict(checked_pool_size=2, checked_variants="forty-thieves", checked_budget=0.1)


async def _depth(server: LiveServer, variant: str = "forty-thieves") -> int:
    return int(await server.service.redis.llen(checked_key(variant)))


async def _wait_depth(server: LiveServer, want: int, seen: list[int] | None = None) -> None:
    """Until the pool holds ``want`` deals (a generous bound: the solver's luck varies)."""
    deadline = time.monotonic() + 120
    while (depth := await _depth(server)) != want:
        if seen is not None:
            seen.append(depth)
        assert time.monotonic() < deadline, f"the pool stayed at {depth} of {want}"
        await asyncio.sleep(0.05)


async def _entries(server: LiveServer, variant: str = "forty-thieves") -> list[CheckedDeal]:
    raw = await server.service.redis.lrange(checked_key(variant), 0, -1)
    return [CheckedDeal.loads(r) for r in raw]


def _wins(deal: CheckedDeal) -> bool:
    return replay(GameRecord(deal.variant, deal.deal, deal.line)).game.is_won()


async def _finish(server: LiveServer, created: p.Created) -> p.Results:
    """One player joins, the race starts, the player gives up: the results."""
    ann = await Client.connect(server)
    await ann.hello(created.race.id, "ann")
    await start_race(server, created.creator_token, [ann])
    await ann.give_up()
    results = (await ann.expect(p.Finished)).results
    await ann.close()
    return results


async def test_the_filler_keeps_the_pool_at_its_target_and_a_race_takes_the_oldest_deal(redis_url: str) -> None:
    async with live_server(redis_url, **FILL) as server:
        seen: list[int] = []
        await _wait_depth(server, 2, seen)
        assert all(d <= 2 for d in seen)
        entries = await _entries(server)
        assert len({e.deal for e in entries}) == 2
        for e in entries:
            assert e.variant == "forty-thieves" and e.deal not in pool_deals("forty-thieves") and _wins(e)
        assert await _depth(server, "sixty-thieves") == 0, "only the configured variants are filled"
        _, metrics = await scrape(server)
        assert metrics['thieves_checked_pool_depth{variant="forty-thieves"}'] == 2
        assert metrics['thieves_checked_added_total{variant="forty-thieves"}'] == 2
        assert metrics['thieves_checked_tried_total{variant="forty-thieves",verdict="won"}'] >= 2

        created = await create_race(server, seats=1, deal_source="pool")
        assert created.race.checked and created.race.deal_source == "pool"
        meta = await server.service.store.meta(created.race.id)
        assert meta is not None and meta.deal == entries[0].deal, "the oldest deal of the private pool"
        assert (await _entries(server))[:1] == entries[1:], "popped: no other race can get it"
        status, body = await server.http("GET", f"/races/{created.race.id}")
        assert status == 200 and "deal" not in body["race"] and "line" not in json.dumps(body)

        results = await _finish(server, created)
        assert (results.checked, results.deal, results.winning_line) == (True, entries[0].deal, list(entries[0].line))
        assert replay(GameRecord("forty-thieves", results.deal, results.winning_line)).game.is_won()
        await _wait_depth(server, 2)  # refilled
        _, metrics = await scrape(server)
        assert metrics['thieves_checked_races_total{variant="forty-thieves",source="pool"}'] == 1


async def test_two_servers_on_one_redis_never_overfill_nor_share_a_deal(redis_url: str) -> None:
    async with live_server(redis_url, **FILL) as one, live_server(redis_url, **FILL) as two:
        seen: list[int] = []
        await _wait_depth(one, 2, seen)
        for _ in range(20):  # both fillers keep going while either could push one too many
            seen.append(await _depth(one))
            await asyncio.sleep(0.05)
        assert max(seen) == 2
    async with live_server(redis_url, checked_pool_size=0, checked_wait=0.0) as one, \
            live_server(redis_url, checked_pool_size=0, checked_wait=0.0) as two:
        await one.service.redis.delete(checked_key("forty-thieves"))
        seeded = await seed_checked(one, 6, ("forty-thieves",))
        creations = [create_race(server, seats=1, deal_source="pool") for server in (one, two) * 3]
        created = await asyncio.gather(*creations)
        deals = [(await one.service.store.meta(c.race.id)).deal for c in created]  # type: ignore[union-attr]
        assert sorted(deals) == sorted(d.deal for d in seeded), "each deal went to exactly one race"
        assert await _depth(one) == 0


def _post(server: LiveServer, body: dict[str, Any]) -> tuple[int, str | None, dict[str, Any]]:
    req = urllib.request.Request(server.url + "/races", data=json.dumps(body).encode(), method="POST",
                                 headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, resp.headers.get("Retry-After"), json.loads(resp.read())
    except urllib.error.HTTPError as err:
        return err.code, err.headers.get("Retry-After"), json.loads(err.read())


async def test_an_empty_pool_with_no_deal_found_in_time_is_a_typed_retryable_error(redis_url: str) -> None:
    async with live_server(redis_url, checked_pool_size=0, checked_wait=0.0) as server:
        redis = server.service.redis
        before = sorted(await redis.keys("*"))
        status, retry, body = await asyncio.to_thread(_post, server, {"deal_source": "pool"})
        assert (status, retry, body["code"]) == (503, "5", "pool_empty") and "try again" in body["message"]
        c = await Client.connect(server)
        await c.send(p.Create(variant="sixty-thieves", deal_source="pool"))
        err = await c.error()
        assert (err.code, err.ref) == ("pool_empty", "create") and "sixty-thieves" in err.message
        await c.close()
        after = [k for k in await redis.keys("*") if not bytes(k).endswith(b":bucket")]
        assert sorted(after) == before, "a refused creation stores nothing but its spent creation token"
        status, _, body = await asyncio.to_thread(_post, server, {"deal_source": "pool", "deal": 5})
        assert (status, body["code"]) == (400, "bad_deal")
        _, metrics = await scrape(server)
        assert metrics['thieves_checked_races_total{variant="forty-thieves",source="none"}'] == 1
        assert metrics['thieves_checked_races_total{variant="sixty-thieves",source="none"}'] == 1
        assert not any(k.startswith("thieves_checked_pool_depth") for k in metrics), "no variant is kept filled"

        seeded = await seed_checked(server, 1, ("sixty-thieves",))
        created = await create_race(server, seats=1, variant="sixty-thieves", deal_source="pool")
        results = await _finish(server, created)
        assert (results.variant, results.deal) == ("sixty-thieves", seeded[0].deal), "one key per variant"


async def test_a_variant_whose_search_found_nothing_rests_before_the_next(redis_url: str) -> None:
    """Each pool race of Eighty Thieves (seldom won by the solver in the time) solved for --checked-wait
    seconds and failed: a flood kept a core busy (issue 22). After a search that found nothing the variant
    rests three times as long: the next creation answers pool_empty at once, having solved nothing."""
    async with live_server(redis_url, checked_wait=0.5) as server:
        body = {"deal_source": "pool", "variant": "eighty-thieves"}
        status, retry, answer = await asyncio.to_thread(_post, server, body)
        assert (status, answer["code"]) == (503, "pool_empty"), answer

        async def tried() -> float:
            _, metrics = await scrape(server)
            return sum(v for k, v in metrics.items()
                       if k.startswith('thieves_checked_tried_total{variant="eighty-thieves"'))

        before = await tried()
        assert before >= 1
        status, retry, answer = await asyncio.to_thread(_post, server, body)
        assert (status, answer["code"]) == (503, "pool_empty") and "the last search found none" in answer["message"]
        assert await tried() == before, "nothing was solved for the second"


async def test_an_empty_pool_is_solved_on_demand(redis_url: str) -> None:
    """The test servers keep no pool: a pool race solves a fresh deal in the worker."""
    async with live_server(redis_url) as server:
        c = await Client.connect(server)
        await c.send(p.Create(seats=1, deal_source="pool"))
        created = await c.expect(p.Created, timeout=120)  # no bound on the solver's luck, only a generous one
        await c.close()
        results = await _finish(server, created)
        assert results.checked and results.deal not in pool_deals("forty-thieves")
        assert results.winning_line
        assert replay(GameRecord("forty-thieves", results.deal, results.winning_line)).game.is_won()
        _, metrics = await scrape(server)
        assert metrics['thieves_checked_races_total{variant="forty-thieves",source="on_demand"}'] == 1
        assert await _depth(server) == 0, "on-demand deals go to the race, not the pool"


@pytest.mark.parametrize("bad", ["not json", '{"variant": "forty-thieves", "deal": 0, "line": ["S"]}'])
async def test_a_broken_pool_entry_is_skipped(redis_url: str, bad: str) -> None:
    async with live_server(redis_url, checked_pool_size=0, checked_wait=0.0) as server:
        await server.service.redis.rpush(checked_key("forty-thieves"), bad)
        seeded = await seed_checked(server, 1, ("forty-thieves",))
        created = await create_race(server, seats=1, deal_source="pool")
        meta = await server.service.store.meta(created.race.id)
        assert meta is not None and meta.deal == seeded[0].deal and await _depth(server) == 0
