"""The composition root: one server process's parts, built and wired here and nowhere else.

The race service (server/race/) knows races only: it offers races the server makes for given accounts
(``create_for``, ``start_races``, ``end_race``) and runs the periodic jobs it is given. The events side
(server/events/) is built on top of it: the event store, the formats' context, the runner (ticked by
the race service's periodic work), the spectators' feeds and the daily deal. Nothing in the race layer
imports the events.
"""

from __future__ import annotations

from dataclasses import dataclass

from .config import Config
from .events import formats  # noqa: F401  (the built-in formats register themselves)
from .events.feed import Feeds
from .events.format import EventContext
from .events.runner import TICK_SECONDS, EventRunner
from .race.service import Service
from .players.seeks import POLL_SECONDS, SeekFrames, Seeks
from .store import RedisClient
from .store.daily import DailyStore
from .store.events import EventStore


@dataclass
class Tournaments:
    """The events side of a server process: what the event and daily-deal endpoints and pages use."""

    races: Service
    events: EventStore
    daily: DailyStore
    context: EventContext
    runner: EventRunner
    feeds: Feeds
    lobby: SeekFrames
    """What answers the race connections' lobby frames (seeks): handed to each connection (server/app.py)."""


def compose(config: Config, redis: RedisClient, probe: RedisClient | None = None) -> tuple[Service, Tournaments]:
    """A process's race service and its events side, wired (start the service to run them)."""
    service = Service(config, redis, probe)
    events = EventStore(redis)
    context = EventContext(events, service, service.checked)
    runner = EventRunner(context)
    service.every(TICK_SECONDS, runner.tick)
    seeks = service.seeks = Seeks(service)
    service.every(config.seek_wave, seeks.wave)
    service.every(POLL_SECONDS, seeks.poll)
    return service, Tournaments(races=service, events=events, daily=DailyStore(redis), context=context,
                                runner=runner, feeds=Feeds(events, service.store, service), lobby=SeekFrames(seeks))
