"""The composition root: one server process's parts, built and wired here and nowhere else.

The race service (server/race/) knows races only: it offers races the server makes for given accounts
(``create_for``, ``start_races``, ``end_race``) and runs the periodic jobs it is given. The events side
(server/events/) is built on top of it: the event store, the formats' context, the runner (ticked by
the race service's periodic work), the spectators' feeds and the daily deal. Nothing in the race layer
imports the events.
"""

from __future__ import annotations

from functools import partial
from typing import Iterable

from .config import Config
from .events.context import EventContext
from .events.feed import Feeds
from .events.format import Format, Formats
from .events.formats import ALL
from .events.runner import TICK_SECONDS, EventRunner
from .events.side import Tournaments
from .race.service import Service
from .players.seeks import POLL_SECONDS, Seeks
from .store import RedisClient
from .store.daily import DailyStore
from .store.events import EventStore
from .web.sse import encoded_event


def compose(config: Config, redis: RedisClient, probe: RedisClient | None = None,
            formats: Iterable[Format] = ALL) -> tuple[Service, Tournaments]:
    """A process's race service and its events side, wired (start the service to run them); the events
    play ``formats`` (server/events/formats/__init__.py's list; a test may hand its own)."""
    service = Service(config, redis, probe)
    events = EventStore(redis)
    context = EventContext(events, service, service.checked)
    played = Formats(formats)
    runner = EventRunner(context, played)
    service.every(TICK_SECONDS, runner.tick)
    seeks = service.seeks = Seeks(service)
    service.every(config.seek_wave, seeks.wave)
    service.every(POLL_SECONDS, seeks.poll)
    # An event's live frame goes out as the SSE event ``event`` (docs/events.md, "Endpoints").
    feeds = Feeds(events, service.store, service, formats=played,
                  sse_event=partial(encoded_event, event="event", retry=2000))
    return service, Tournaments(races=service, events=events, daily=DailyStore(redis), context=context,
                                runner=runner, feeds=feeds, formats=played)
