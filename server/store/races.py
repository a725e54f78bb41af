"""The races in Redis: every read and every script call the race server makes (see the package doc).

The :class:`Store` is made of one part a job, each a module of its own: the common clients and
scripts (:mod:`.race_base`), reads (:mod:`.race_reads`), the life cycle (:mod:`.race_life`), play
(:mod:`.race_play`) and the checked deals (:mod:`.checked_deals`). Callers see one object.
"""

from __future__ import annotations

from .checked_deals import CheckedDeals
from .race_life import RaceLifecycle
from .race_play import RacePlay
from .race_reads import RaceReads


class Store(RaceReads, RaceLifecycle, RacePlay, CheckedDeals):
    """Async access to races in one Redis, or a Redis Cluster (one slot per race)."""
