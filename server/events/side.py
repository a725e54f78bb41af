"""The events side of a server process as one value: what the event and daily-deal endpoints and pages
use. Built by the composition root (server/compose.py); defined here, in the events layer, so the
event handlers and the pages name it without importing the composition root."""

from __future__ import annotations

from dataclasses import dataclass

from ..race.service import Service
from ..store.daily import DailyStore
from ..store.events import EventStore
from .context import EventContext
from .feed import Feeds
from .format import Formats
from .runner import EventRunner


@dataclass
class Tournaments:
    """The events side of a server process: what the event and daily-deal endpoints and pages use."""

    races: Service
    events: EventStore
    daily: DailyStore
    context: EventContext
    runner: EventRunner
    feeds: Feeds
    formats: Formats
