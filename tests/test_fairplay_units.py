"""The fair-play rules without a server (docs/events.md, "Fair play"): the entry conditions' words, the
scouting rule, linked accounts, and the foresight statistic on games whose makers are known (bench/fairplay.py's
players: a greedy honest one, and one that uses the true order at three decisive moments)."""

from __future__ import annotations

from typing import Any

from cluster_util import LocalCluster

from bench.fairplay import few, greedy, scout
from server.fairplay.conditions import DailyCondition, bad_conditions, missing
from server.fairplay.foresight import Budget, analyse, stored_line_share
from server.fairplay.linked import linked_groups, link_words
from server.fairplay.report import FORESIGHT_THRESHOLD
from server.fairplay.scouting import scouting_words, stock_use
from server.store import Keys, redis_client
from server.store.fairplay import AccountFacts, FairPlayStore, address_hash, analysis_key
from server.store.keys import AccountKeys
from shared import protocol as p

VARIANT = "forty-thieves"
DAY_MS = 86_400_000
DEAL = 301_759_746
"""A random deal the solver wins (bench/fairplay.py's secret deals, seed 39)."""


def _facts(account: str, created_at: int = 0, rated: int = 0, mu: float | None = None, sigma: float | None = None,
           reg: str = "") -> AccountFacts:
    return AccountFacts(account=account, exists=True, created_at=created_at, rated=rated, mu=mu, sigma=sigma,
                        reg_from=reg)


def test_conditions_say_what_is_missing_and_nothing_when_met() -> None:
    cond = p.EntryConditions(min_rated_races=3, min_account_age=2 * 86_400, min_rating=1100)
    now = 10 * DAY_MS
    fresh = _facts("new", created_at=now - 3_600_000, rated=1)
    assert missing(cond, fresh, VARIANT, now) == [
        "3 finished rated races of forty-thieves (you have 1: 2 more)",
        "an account at least 2 days old (yours is 1 hour old)",
        "a forty-thieves rating of at least 1100 (yours: none yet)"]
    strong = _facts("old", created_at=0, rated=50, mu=40.0, sigma=2.0)
    assert missing(cond, strong, VARIANT, now) == []
    assert missing(p.EntryConditions(max_rating=1200), strong, VARIANT, now) == [
        "a forty-thieves rating of at most 1200 (yours: 2360)"]
    assert missing(p.EntryConditions(max_rating=1000), _facts("x"), VARIANT, now) == [], "unrated counts as 1000"
    assert bad_conditions(p.EntryConditions(min_rating=1200, max_rating=1100)) is not None
    assert bad_conditions(p.EntryConditions(min_rating=1100, max_rating=1100)) is None
    daily = DailyCondition(min_rated_races=3, min_account_age=86_400)
    assert daily.counts(strong, VARIANT, now) and not daily.counts(fresh, VARIANT, now)


def test_a_scout_is_one_that_draws_the_stock_and_stops_and_a_greedy_player_is_not() -> None:
    use = stock_use(VARIANT, DEAL, scout(DEAL))
    assert (use.seen, use.size, use.plays_while_drawing) == (64, 64, 0), "two decks: cards counted, not faces"
    assert "saw 64 of 64 stock cards with 0 other moves" in (scouting_words(use, "gave_up", 90) or "")
    assert scouting_words(use, "racing", None) is not None, "a scout that stalls instead of giving up"
    honest = greedy(DEAL, 0.0, 1)
    assert scouting_words(stock_use(VARIANT, DEAL, honest), "gave_up", 2_000) is None
    assert scouting_words(stock_use(VARIANT, DEAL, ["S"] * 20), "gave_up", 100) is None, "a quarter of the stock"


def test_linked_accounts_share_an_address_or_were_registered_together() -> None:
    a, b = address_hash("203.0.113.7", b"salt"), address_hash("198.51.100.9", b"salt")
    assert a != b and a == address_hash("203.0.113.7", b"salt") and "203" not in a
    facts = [_facts("scout", 1_000, reg=a), _facts("helped", 900_000, reg=a), _facts("twin", 1_004, reg=b),
             _facts("alone", 500_000, reg=b)]
    groups = linked_groups(facts, together_ms=5_000)
    assert groups == {"scout": ["helped", "twin"], "helped": ["scout"], "twin": ["scout", "alone"],
                      "alone": ["twin"]}
    words = link_words({f.account: f for f in facts}, "scout", groups["scout"], 5_000)
    assert words == ("linked to helped (registered from the same address); twin (registered 4 ms apart) on the "
                     "same deal")
    assert linked_groups(facts, together_ms=0) == {"scout": ["helped"], "helped": ["scout"], "twin": ["alone"],
                                                   "alone": ["twin"]}


def test_foresight_flags_a_player_who_used_the_order_at_three_moments_and_not_a_greedy_one() -> None:
    knowing = analyse(VARIANT, DEAL, few(DEAL, 3, 40), [], 7, Budget())
    assert knowing.foresight - knowing.costly >= FORESIGHT_THRESHOLD, knowing
    hit = next(d for d in knowing.settled if d.foresight)
    assert hit.chosen_wins and not hit.natural_wins and hit.unseen and hit.position
    honest = analyse(VARIANT, DEAL, greedy(DEAL, 0.0, 1), [], 7, Budget())
    assert honest.deviations == 0 and honest.foresight == 0, "greedy play never leaves the natural move"
    spent = analyse(VARIANT, DEAL, few(DEAL, 3, 40), [], 7, Budget(cpu_budget=0.0))
    assert not spent.complete and spent.settled == [], "the CPU budget bounds the analysis"


def test_the_stored_line_share_is_how_much_of_the_line_the_game_begins_with() -> None:
    assert stored_line_share(["ab", "S", "cd"], ["ab", "S", "cd"]) == 1.0
    assert stored_line_share(["ab", "S", "xy"], ["ab", "S", "cd", "ef"]) == 0.5
    assert stored_line_share(["ab"], []) == 0.0


async def test_the_fairplay_store_on_one_redis(redis_url: str) -> None:
    await _store_round_trip(redis_client(redis_url))


async def test_the_fairplay_store_on_a_cluster(empty_cluster: LocalCluster) -> None:
    """Each call touches one key (an account's hash, one race's analysis): a cluster serves it as one Redis."""
    await _store_round_trip(redis_client(empty_cluster.url, cluster=True))


async def _store_round_trip(client: Any) -> None:
    try:
        store = FairPlayStore(client)
        for account, created in (("ann", 5), ("bob", 7)):  # two accounts, two slots
            await client.hset(AccountKeys(account).main, mapping={"name": account, "key_hash": "h",
                                                                  "created_at": created, "v:forty-thieves:rated": 2})
        await store.note_registration("ann", "place")
        ann, bob, ghost = await store.facts(["ann", "bob", "ghost"], VARIANT)
        assert (ann.exists, ann.created_at, ann.rated, ann.reg_from, ann.mu) == (True, 5, 2, "place", None)
        assert (bob.reg_from, ghost.exists) == ("", False)
        assert await store.analysis("r1") is None
        await store.keep_analysis("r1", b"blob", 60)
        assert await store.analysis("r1") == b"blob" and 0 < await client.ttl(analysis_key("r1")) <= 60
        assert analysis_key("r1").startswith(Keys("r1").meta), "the race's own hash tag"
    finally:
        await client.aclose()
