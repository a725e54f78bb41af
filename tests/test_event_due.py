"""What an event's format is due to do next (server/events/due.py), as tables: pure functions of the
event's state (an arena's: and its races) and the time, for every format of the shipped list
(server/events/formats/__init__.py). The formats' ``advance`` takes these steps; the end-to-end event
tests (tests/test_events.py, test_swiss_events.py, test_event_play.py) play them on a real server."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from server.events.due import (Due, arena_closes, arena_next_at, arena_pairs, arena_race_steps, round_due,
                               round_due_now)
from server.events.formats import ALL, ARENA
from server.events.rounds import RoundsFormat
from server.store.events import ArenaRace, EventMeta
from shared.event_states import Transition as T

NOW = 1_000_000
ROUND_FORMATS = [f.name for f in ALL if isinstance(f, RoundsFormat)]


def _meta(fmt: str, status: str, round_state: str, **fields: Any) -> EventMeta:
    base = EventMeta(id="E", name="Cup", format=fmt, variant="forty-thieves", rounds=3,  # type: ignore[arg-type]
                     heat_size=2, time_limit=60, join_seconds=1, break_seconds=0, deal_source="random", deals="",
                     rated=False, late_entry=True, status=status, round=1,  # type: ignore[arg-type]
                     round_state=round_state, created_at=0)  # type: ignore[arg-type]
    return replace(base, **fields)


def test_the_shipped_list_has_round_formats_and_an_arena() -> None:
    assert ROUND_FORMATS == ["duplicate", "swiss"] and ARENA in ALL


ROUND_TABLE = [
    # (status, round_state, fields, now, due, due now)
    ("registration", "waiting", {}, NOW, None, None),
    ("running", "done", {"round": 0, "next_at": NOW}, NOW, Due(T.CLAIM_ROUND, NOW), T.CLAIM_ROUND),
    ("running", "done", {"round": 1, "next_at": NOW + 1}, NOW, Due(T.CLAIM_ROUND, NOW + 1), None),
    ("running", "done", {"round": 2, "next_at": NOW - 5}, NOW, Due(T.CLAIM_ROUND, NOW - 5), T.CLAIM_ROUND),
    ("running", "done", {"round": 3, "next_at": NOW}, NOW, None, None),  # (all played: never left so)
    ("running", "opening", {"claim_until": NOW + 60_000}, NOW, Due(T.TAKE_OVER_CLAIM, NOW + 60_000), None),
    ("running", "opening", {"claim_until": NOW}, NOW, Due(T.TAKE_OVER_CLAIM, NOW), T.TAKE_OVER_CLAIM),
    ("running", "open", {"starts_at": NOW + 1000}, NOW, Due(T.START_HEATS, NOW + 1000), None),
    ("running", "open", {"starts_at": NOW}, NOW, Due(T.START_HEATS, NOW), T.START_HEATS),
    ("running", "running", {"round": 1}, NOW, Due(T.SCORE_ROUND, 0), T.SCORE_ROUND),
    ("running", "running", {"round": 2}, 0, Due(T.SCORE_ROUND, 0), T.SCORE_ROUND),
    ("running", "running", {"round": 3}, NOW, Due(T.SCORE_LAST_ROUND, 0), T.SCORE_LAST_ROUND),
    ("finished", "done", {"round": 3}, NOW, None, None),
    ("cancelled", "waiting", {"round": 0}, NOW, None, None),
]


@pytest.mark.parametrize("fmt", ROUND_FORMATS)
@pytest.mark.parametrize("status, round_state, fields, now, due, due_now", ROUND_TABLE)
def test_what_a_round_based_event_is_due_for(fmt: str, status: str, round_state: str, fields: dict[str, Any],
                                             now: int, due: Due | None, due_now: T | None) -> None:
    meta = _meta(fmt, status, round_state, **fields)
    assert round_due(meta) == due
    assert round_due_now(meta, now) == due_now


def _race(n: int, starts_at: int, started: bool = False, scored: bool = False) -> ArenaRace:
    return ArenaRace(race=f"r{n}", code=f"C{n}", entrants=["ann", "bob"], starts_at=starts_at, started=started,
                     scored=scored)


PAIRED, STARTED, SCORED = _race(1, NOW + 500), _race(2, NOW - 500, True), _race(3, NOW - 900, True, True)
DUE_TO_START = _race(4, NOW)

ARENA_TABLE = [
    # (ends_at, races, now, pairs, steps, closes, next_at)
    (NOW + 10_000, [], NOW, True, [], False, NOW + 10_000),
    (NOW + 10_000, [PAIRED], NOW, True, [], False, NOW + 500),
    (NOW + 10_000, [DUE_TO_START, PAIRED], NOW, True, [(DUE_TO_START, "start")], False, NOW + 500),
    (NOW + 10_000, [SCORED, STARTED, DUE_TO_START], NOW, True, [(STARTED, "score"), (DUE_TO_START, "start")],
     False, NOW + 10_000),
    (NOW, [SCORED, STARTED], NOW, False, [(STARTED, "score")], False, None),  # over: the last race scored first
    (NOW, [SCORED], NOW, False, [], True, None),
    (NOW, [], NOW + 1, False, [], True, None),  # nobody was ever paired
    (NOW - 1, [PAIRED], NOW + 500, False, [(PAIRED, "start")], False, None),  # paired before the end: still raced
]


@pytest.mark.parametrize("ends_at, races, now, pairs, steps, closes, next_at", ARENA_TABLE)
def test_what_an_arena_is_due_for(ends_at: int, races: list[ArenaRace], now: int, pairs: bool,
                                  steps: list[tuple[ArenaRace, str]], closes: bool, next_at: int | None) -> None:
    meta = _meta(ARENA.name, "running", "running", ends_at=ends_at)
    assert arena_pairs(meta, now) is pairs
    assert arena_race_steps(races, now) == steps
    assert arena_closes(meta, races, now) is closes
    assert arena_next_at(meta, races, now) == next_at
