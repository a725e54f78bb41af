"""An event keeps its deals secret until it is over.

Every race of an event is made sealed (``EventContext.new_race`` gives it the reveal time
``store.SEALED``), so its results, replays, ``finished`` frames and page show the standings alone
(``races.revealed``, the rule every reader of a race goes through). Why the event's and not the
race's: a duplicate round's heats play one deal and an arena may play the organiser's deals again
and again, so one race's moves would win another's. Once no race of the event is left to play,
:func:`unseal` reveals them all: as the event ends (``Format.finish``, before the step that
says it is finished, so ``thieves verify`` never meets a sealed race) and again before it leaves the
runner's list (so a process that died in between leaves the next tick to finish the job). Unsealing
is idempotent, one small script per race (works on a Redis Cluster).
"""

from __future__ import annotations

from shared import protocol as p

from ..store import Store


async def unseal(store: Store, schedule: list[p.EventRound]) -> int:
    """Reveal every race of the event's ``schedule`` (its format's: every race it has made; call it only
    once none is left to play); how many were still sealed. Given the schedule rather than the event, so
    this module needs no format (each format's :meth:`~.format.Format.finish` and the runner pass it)."""
    return await store.unseal([heat.race for rnd in schedule for heat in rnd.heats])
