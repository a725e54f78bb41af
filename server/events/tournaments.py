"""The events side of a server process as one record: what the event and daily-deal endpoints and pages
use. Why here and not in the composition root: the handlers and pages that read it sit below the root
(server/compose.py builds it; they only read it), so defining it there made them import upwards."""

from __future__ import annotations

from dataclasses import dataclass

from ..race.service import Service
from ..store.daily import DailyStore
from ..store.events import EventStore
from .feed import Feeds
from .context import EventContext
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
