"""This process's hubs (one per race it serves) and the other listeners of races, over its one pub/sub
subscription: who hears a race's notes here, and when the subscription to a race is made and dropped.

Why its own part: the subscription is shared by the hubs (the race's connections here) and by listeners
that are not hubs (an event's live feed listens to its heats), and a race stays subscribed while either
needs it. The hubs are made by the factory it is given, so this module knows of a hub only what it calls.
"""

from __future__ import annotations

from typing import Any, Callable, Generic, Protocol, TypeVar

from ..store import UNAVAILABLE, EventKind, Line, Note, Store
from .clock import now_ms


class Served(Protocol):
    """What the registry needs of a hub (server/race/hub.py's RaceHub)."""

    race: str
    heard: int

    @property
    def conns(self) -> Any: ...
    def add(self, conn: Any) -> None: ...
    def remove(self, conn: Any) -> None: ...
    def close(self) -> None: ...
    def on_event(self, version: int, kind: EventKind | None) -> None: ...
    def known_lines(self) -> tuple[int, list[Line]] | None: ...
    def spawn(self, coro: Any) -> None: ...
    async def catch_up(self) -> None: ...


H = TypeVar("H", bound=Served)


class Hubs(Generic[H]):
    """This process's hubs by race, the other listeners by race, and the subscription that feeds both."""

    def __init__(self, store: Store, make_hub: Callable[[str], H],
                 on_key_replaced: Callable[[str, str], None]) -> None:
        self._store = store
        self._make_hub = make_hub
        self.by_race: dict[str, H] = {}
        self.listeners: dict[str, set[Callable[[str], None]]] = {}
        """Who else in this process hears a race's notes (an event's live feed: its heats), by race."""
        self.subscriber = store.subscriber(self._on_note, on_key_replaced)

    async def join(self, race: str, conn: Any) -> H:
        hub = self.by_race.get(race)
        if hub is None:
            hub = self.by_race[race] = self._make_hub(race)
            await self.subscriber.subscribe(race, now_ms())
        hub.add(conn)
        return hub

    async def leave(self, hub: H, conn: Any) -> None:
        hub.remove(conn)
        if not hub.conns and self.by_race.get(hub.race) is hub:
            del self.by_race[hub.race]
            hub.close()
            if hub.race in self.listeners:
                return  # the subscription still carries the race's notes to its listeners
            await self._unsubscribe(hub.race)

    async def listen(self, race: str, heard: Callable[[str], None]) -> None:
        """Call ``heard(race)`` on each note of the race from now on (at most once: notes can be lost; the
        listener must look again now and then). Why here: this process's one subscription carries them."""
        listeners = self.listeners.setdefault(race, set())
        if not listeners and race not in self.by_race:
            await self.subscriber.subscribe(race, now_ms())
        listeners.add(heard)

    async def unlisten(self, race: str, heard: Callable[[str], None]) -> None:
        listeners = self.listeners.get(race)
        if listeners is None:
            return
        listeners.discard(heard)
        if not listeners:
            del self.listeners[race]
            if race not in self.by_race:
                await self._unsubscribe(race)

    async def _unsubscribe(self, race: str) -> None:
        try:
            await self.subscriber.unsubscribe(race)
        except UNAVAILABLE:
            pass

    def known_lines(self, race: str) -> tuple[int, list[Line]] | None:
        """The race's version and lines as this process's hub knows them without a read (an event feed's
        heats whose racers play here), or None."""
        hub = self.by_race.get(race)
        return hub.known_lines() if hub is not None else None

    def moved_here(self, race: str) -> None:
        """The race moved: its listeners here hear of it. Called for each note, and for each move of this
        process's connections (the moves script announces a move only to the other processes)."""
        for heard in self.listeners.get(race, ()):
            heard(race)

    def _on_note(self, race: str, note: Note) -> None:
        """An event of a race stored by any process: its hub here, if any, hears of it."""
        hub = self.by_race.get(race)
        if hub is not None:
            hub.on_event(note.version, note.kind)
        self.moved_here(race)

    async def catch_up(self) -> None:
        """Find the hubs whose race moved on without them hearing (one read for all) and catch them up."""
        hubs = list(self.by_race.values())
        versions = await self._store.versions([hub.race for hub in hubs])
        for hub, version in zip(hubs, versions):
            if version is None or version > hub.heard:
                hub.spawn(hub.catch_up())

    def close(self) -> None:
        for hub in self.by_race.values():
            hub.close()
