"""The event state table (shared/event_states.py) and its enforcement by Redis: every transition from
every state, through the real step script, is done exactly when the table allows it, and a refused
one leaves the event's hash exactly as it was."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from server.store import StoreError
from server.store.events import EventMeta, EventStore
from server.store.keys import EventKeys
from shared import event_states as states
from shared.scoring import ScoredRound

STATES = [states.REGISTRATION, states.BETWEEN_ROUNDS, states.OPENING, states.OPEN, states.RACING, states.FINISHED,
          states.CANCELLED]
NOW = 1_000_000


T = states.Transition


def test_the_table_leads_from_registration_to_finished_along_each_formats_path() -> None:
    path = [(T.START_ROUNDS, states.BETWEEN_ROUNDS), (T.CLAIM_ROUND, states.OPENING),
            (T.TAKE_OVER_CLAIM, states.OPENING), (T.OPEN_ROUND, states.OPEN), (T.START_HEATS, states.RACING),
            (T.SCORE_ROUND, states.BETWEEN_ROUNDS), (T.CLAIM_ROUND, states.OPENING), (T.OPEN_ROUND, states.OPEN),
            (T.START_HEATS, states.RACING), (T.SCORE_LAST_ROUND, states.FINISHED)]
    state = states.REGISTRATION
    for name, target in path:
        assert states.next_state(state, name) == target, name
        state = target
    state = states.REGISTRATION
    for name, target in [(T.START_PAIRING, states.RACING), (T.PAIR, states.RACING), (T.CLOSE, states.FINISHED)]:
        assert states.next_state(state, name) == target, name
        state = target
    assert all(states.next_state(states.FINISHED, name) is None for name in states.TRANSITIONS), "finished is final"
    assert states.next_state(states.REGISTRATION, T.CANCEL) == states.CANCELLED
    assert all(states.next_state(s, T.CANCEL) is None for s in STATES if s != states.REGISTRATION), \
        "only an event that has not started can be cancelled"
    assert all(states.next_state(states.CANCELLED, name) is None for name in states.TRANSITIONS), "cancelled is final"
    assert set(states.TRANSITIONS) == set(T), "every transition has its rule"


def test_the_transitions_keep_the_names_redis_stores() -> None:
    """The enum's values are what the step scripts compare and event_cancel.lua names ('cancel'):
    renaming a member is free, changing a value is not."""
    assert {t.value for t in T} == {"start_rounds", "start_pairing", "claim_round", "take_over_claim", "open_round",
                                    "start_heats", "score_round", "score_last_round", "pair", "close", "cancel"}
    assert all(isinstance(t, str) and str(t) == t.value for t in T), "a member goes to Redis as its value"
    assert "['claim_round'] = {from = {['running/done'] = true}" in states.lua_table()


def _meta(event: str, state: states.State, **fields: Any) -> EventMeta:
    return EventMeta(id=event, name="Cup", format="duplicate", variant="forty-thieves", rounds=3, heat_size=4,
                     time_limit=60, join_seconds=1, break_seconds=0, deal_source="random", deals="", rated=False,
                     late_entry=True, status=state[0], round=1, round_state=state[1], created_at=NOW, **fields)


async def _hash(redis: Any, event: str) -> dict[bytes, bytes]:
    return dict(await redis.hgetall(EventKeys(event).meta))


async def check_the_table_is_enforced(redis: Any) -> None:
    """Every (state, transition): done iff the table allows it; refused ones raise illegal_transition
    and change nothing (the claim guard and a stale read answer False and change nothing either)."""
    events = EventStore(redis)
    for i, (state, name) in enumerate(itertools.product(STATES, states.TRANSITIONS)):
        event = f"t{i}"
        meta = _meta(event, state, claim_until=NOW - 1)
        await events.create(meta)
        before = await _hash(redis, event)
        target = states.next_state(state, name)
        if target is None:
            with pytest.raises(StoreError) as refused:
                await events.step(meta, name, NOW, round=meta.round + 1)
            assert refused.value.code == "illegal_transition", (state, name)
            assert await _hash(redis, event) == before, f"{name} from {state} refused by Redis, nothing changed"
        else:
            assert await events.step(meta, name, NOW, round=meta.round + 1), (state, name)
            after = await events.meta(event)
            assert after is not None and (after.status, after.round_state) == target, (state, name)
            assert after.round == 2 and after.version == meta.version + 1
    # A move the table allows, but from a state read before another process moved: a conflict, no change.
    stale = _meta("stale", states.OPEN)
    await events.create(stale)
    assert await events.step(stale, T.START_HEATS, NOW)
    moved = await _hash(redis, "stale")
    assert not await events.step(stale, T.START_HEATS, NOW), "the second of two processes loses"
    assert await _hash(redis, "stale") == moved
    # A live claim is not taken over; one that ran out is.
    claimed = _meta("claimed", states.OPENING, claim_until=NOW + 1)
    await events.create(claimed)
    before = await _hash(redis, "claimed")
    assert not await events.step(claimed, T.TAKE_OVER_CLAIM, NOW)
    assert await _hash(redis, "claimed") == before
    assert await events.step(claimed, T.TAKE_OVER_CLAIM, NOW + 1)
    # The state is the table's to set: a step may not set it (or the version) as one of its fields.
    sneaky = _meta("sneaky", states.OPEN)
    await events.create(sneaky)
    before = await _hash(redis, "sneaky")
    for field in states.PROTECTED_FIELDS:
        with pytest.raises(StoreError, match="illegal_transition"):
            await events.step(sneaky, T.START_HEATS, NOW, **{field: "finished" if field == "status" else 7})
        assert await _hash(redis, "sneaky") == before, field
    # Scoring a round writes its results only with a move the table allows.
    scoring = _meta("scoring", states.OPEN)
    await events.create(scoring)
    before = await _hash(redis, "scoring")
    with pytest.raises(StoreError, match="illegal_transition"):
        await events.score(scoring, T.SCORE_ROUND, NOW,
                           [ScoredRound("ann", "r1", 1, "finished", 104, 5000, 5000, points2=2)])
    assert await _hash(redis, "scoring") == before and not await events.results("scoring")


async def test_redis_refuses_every_transition_the_table_does_not_allow(redis_url: str) -> None:
    import redis.asyncio as aioredis

    client = aioredis.from_url(redis_url)
    try:
        await check_the_table_is_enforced(client)
    finally:
        await client.aclose()
