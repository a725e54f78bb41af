"""The composition root: one server process's parts, built and wired here and nowhere else.

The race service (server/race/) knows races only: it offers races the server makes for given accounts
(``create_for``, ``start_races``, ``end_race``) and runs the periodic jobs it is given. Built on it here:
the accounts' results (server/accounts/results.py), which hear of each race's end through the callback
registered below; the seek pools (server/matchmaking/); and the events side (server/events/): the event
store, the formats' context, the runner (ticked by the service's periodic work), the spectators' feeds
and the daily deal. Nothing in the race layer imports any of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Iterable

from .accounts.recorder import Recorder
from .accounts.results import RESULTS_SWEEP_SECONDS, Results
from .config import Config
from .events.context import EventContext
from .events.feed import Feeds
from .events.format import Format, Formats
from .events.formats import ALL
from .events.runner import TICK_SECONDS, EventRunner
from .events.tournaments import Tournaments
from .matchmaking.pairing import Pairing
from .matchmaking.seeks import POLL_SECONDS, SeekFrames, Seeks
from .race.service import Service
from .store import RedisClient
from .store.daily import DailyStore
from .store.events import EventStore
from .store.seeks import SeekStore
from .web.sse import encoded_event


@dataclass
class Process:
    """One server process's parts, as the app's lifespan keeps them (server/app.py)."""

    races: Service
    tournaments: Tournaments
    results: Results
    seeks: Seeks
    lobby: SeekFrames
    """What answers the race connections' lobby frames (seeks): handed to each connection (server/app.py)."""


def compose(config: Config, redis: RedisClient, probe: RedisClient | None = None,
            formats: Iterable[Format] = ALL) -> Process:
    """A process's parts, wired (start its race service to run them); the events play ``formats``
    (server/events/formats/__init__.py's list; a test may hand its own)."""
    service = Service(config, redis, probe)
    recorder = Recorder(service.store, service.history, config.accounts.history_max, config.races.retention)
    results = Results(recorder, service.history, service.endings.bound, service.end_race, service.background.spawn)
    service.endings.on_ended_with_accounts(results.apply_soon)
    service.every(RESULTS_SWEEP_SECONDS, results.sweep)
    events = EventStore(redis)
    context = EventContext(events, service, service.checked)
    played = Formats(formats)
    runner = EventRunner(context, played)
    service.every(TICK_SECONDS, runner.tick)
    seeks = Seeks(config.matchmaking, SeekStore(redis), service.accounts, service.history, service.maker,
                  service.metrics)
    pairing = Pairing(config.matchmaking, config.races.token_ttl, seeks.store, service.store, service.maker,
                      lambda: service.signer, service.accounts, service.checked, service.metrics, seeks.let_go)
    service.every(config.matchmaking.seek_wave, pairing.wave)
    service.every(POLL_SECONDS, seeks.poll)
    # An event's live frame goes out as the SSE event ``event`` (docs/events.md, "Endpoints").
    feeds = Feeds(events, service.store, service, formats=played,
                  sse_event=partial(encoded_event, event="event", retry=2000))
    tournaments = Tournaments(races=service, events=events, daily=DailyStore(redis), context=context,
                              runner=runner, feeds=feeds, formats=played)
    return Process(races=service, tournaments=tournaments, results=results,
                   seeks=seeks, lobby=SeekFrames(seeks, service.key_holders))
