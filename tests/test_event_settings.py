"""An event's settings are typed once (server/store/events.py ``EventSettings``): the record takes them
from the request body by name, and the description shows them by name (server/events/format.py
``public_settings``), so the request, the record and the description cannot drift apart unnoticed."""

from __future__ import annotations

import dataclasses

import msgspec
import pytest

from server.events.format import SHOWN_OTHERWISE, public_settings
from server.store.events import EventMeta, EventSettings
from shared import protocol as p

SETTINGS = [f.name for f in dataclasses.fields(EventSettings)]


def test_every_setting_comes_from_the_request_and_is_shown() -> None:
    body = {f.name for f in msgspec.structs.fields(p.EventCreate)}
    info = {f.name for f in msgspec.structs.fields(p.EventInfo)}
    assert [s for s in SETTINGS if s not in EventSettings.RESHAPED and s not in body] == [], \
        "a setting the request does not name is kept reshaped"
    assert body - set(SETTINGS) == {"starts_at"}, "every field of the request is kept (its start: scheduled_at)"
    meta = EventMeta.create(p.EventCreate(name="Cup"), "E", 5)
    assert set(public_settings(meta)) <= info, "every shown setting is a field of the description"
    assert set(SHOWN_OTHERWISE) <= set(SETTINGS)


@pytest.mark.parametrize("status", ["registration", "running", "finished"])
def test_a_request_kept_and_shown(status: str) -> None:
    req = p.EventCreate(name="Cup", format="arena", variant="sixty-thieves", rounds=2, heat_size=4, time_limit=90,
                        join_seconds=5, break_seconds=7, deal_source="random", deals=[11, 12], rated=True,
                        late_entry=False, check_in=True, duration=600, group_size=3, starts_at=10**13,
                        repeat="0 * * * *")
    meta = EventMeta.create(req, "E", 5, series="S", occurrence=1)
    kept = {s: getattr(meta, s) for s in SETTINGS}
    assert kept == {**{s: getattr(req, s) for s in SETTINGS if s not in EventSettings.RESHAPED},
                    "deals": "11,12", "scheduled_at": 10**13, "repeat": "0 * * * *", "conditions": ""}
    assert (meta.status, meta.round, meta.round_state, meta.created_at, meta.series, meta.occurrence) == (
        "registration", 0, "waiting", 5, "S", 1)
    pairs = meta.hash_fields()
    stored = {k.encode(): v if isinstance(v, bytes) else str(v).encode() for k, v in zip(pairs[::2], pairs[1::2])}
    assert EventMeta.from_hash(stored) == meta, "read back as Redis keeps it"
    meta.status = status  # type: ignore[assignment]
    shown = public_settings(meta)
    assert shown == {"name": "Cup", "format": "arena", "variant": "sixty-thieves", "rounds": 2, "heat_size": 4,
                     "time_limit": 90, "join_seconds": 5, "break_seconds": 7, "rated": True, "late_entry": False,
                     "check_in": True, "deal_source": "deals", "deals": [11, 12] if status == "finished" else None,
                     "starts_at": 10**13, "repeat": "0 * * * *", "conditions": None}, \
        "the organiser's deals only once it is over"


def test_a_plain_request_shows_nulls_for_what_it_did_not_ask() -> None:
    meta = EventMeta.create(p.EventCreate(name="Cup"), "E", 5)
    shown = public_settings(meta)
    assert (shown["deal_source"], shown["deals"], shown["starts_at"], shown["repeat"]) == ("pool", None, None, None)
