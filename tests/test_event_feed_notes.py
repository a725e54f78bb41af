"""An event's live feed is driven by its heats' notes (server/events/feed.py): a move shows in the feed
without any poll, and a heat whose note was lost still shows within a poll (``FEED_POLL_SECONDS``)."""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
import pytest
from redis_util import Client, LiveServer, eventually, record_calls, register
from test_events import AUTH, WIN, events_server  # noqa: F401  (a fixture)

from server.race.outbox import Outbox
from server.events import feed as feed_module
from shared import protocol as p


async def _heat_under_way(server: LiveServer) -> tuple[str, str, Client, Client, asyncio.Queue[bytes | None],
                                                       dict[str, str]]:
    """A one-round event of ann and bob in one heat, started, both in it, a watcher's queue of its feed, and
    their keys."""
    keys = {n: await register(server, n) for n in ("ann", "bob")}
    status, created = await server.http("POST", "/events", {"name": "Cup", "rounds": 1, "heat_size": 2,
                                                            "deals": [WIN["deal"]], "join_seconds": 1,
                                                            "break_seconds": 0, "time_limit": 120}, headers=AUTH)
    assert status == 201, created
    event = created["id"]
    for key in keys.values():
        status, answer = await server.http("POST", f"/events/{event}/entrants",
                                           headers={"authorization": f"Bearer {key}"})
        assert status == 200, answer
    await server.http("POST", f"/events/{event}/start", headers=AUTH)
    heats: list[Any] = []

    async def drawn() -> bool:
        _, info = await server.http("GET", f"/events/{event}")
        heats[:] = [h for r in info["schedule"] for h in r["heats"]]
        return bool(heats)

    await eventually(drawn, "the round drawn")
    ann, bob = await Client.connect(server), await Client.connect(server)
    await ann.hello(heats[0]["code"], key=keys["ann"])
    await bob.hello(heats[0]["code"], key=keys["bob"])
    for c in (ann, bob):
        await c.expect(p.Countdown, timeout=30)
    _, queue = server.tournaments.feeds.watch(event)  # its first frame is a full look: the heat is followed
    return event, heats[0]["race"], ann, bob, queue, keys


async def _shows(queue: asyncio.Queue[bytes | None], account: str, home: int) -> None:
    """Read the watcher's frames until one shows ``account`` with ``home`` cards home."""
    while True:
        frame = await asyncio.wait_for(queue.next(), 20)
        assert frame is not None, "the feed ended"
        live = {line.account: line for line in msgspec.json.decode(frame, type=p.EventLive).live}
        if account in live and live[account].home == home:
            return


@pytest.mark.parametrize("lost", [False, True], ids=["heard", "note_lost"])
async def test_a_move_shows_in_the_feed_by_its_heats_note_or_within_a_poll_if_the_note_is_lost(
        events_server: LiveServer, monkeypatch: pytest.MonkeyPatch, lost: bool) -> None:  # noqa: F811
    # Heard: no poll after the first frame, so only the note can wake the feed. Lost: a poll every 0.5 s.
    monkeypatch.setattr(feed_module, "FEED_POLL_SECONDS", 0.5 if lost else 3600.0)
    event, race, ann, bob, queue, _ = await _heat_under_way(events_server)
    try:
        await _shows(queue, "ann", 0)  # the heat is under way ...
        assert race in events_server.service.served.listeners  # ... and the feed listens to its notes
        if lost:
            await events_server.service.served.subscriber.unsubscribe(race)  # every note of the heat is now lost
        for text in WIN["moves"][:2]:
            assert isinstance(await ann.move(text), p.Ack)
        await _shows(queue, "ann", 1)
    finally:
        for c in (ann, bob):
            await c.close()


async def test_a_frame_reads_the_whole_event_only_when_its_version_moved(
        events_server: LiveServer, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """The event's hash holds the schedule (every heat and entrant): a frame reads its version alone, and the
    rest only when that moved, so a move in a heat costs no read of it; a withdrawal (a new version) is read and shown."""
    event, race, ann, bob, queue, keys = await _heat_under_way(events_server)
    reads = record_calls(monkeypatch, events_server.tournaments.feeds.events, "meta")
    try:
        await _shows(queue, "ann", 0)
        reads.clear()
        for text in WIN["moves"][:2]:
            assert isinstance(await ann.move(text), p.Ack)
        await _shows(queue, "ann", 1)
        assert event not in reads, "moves in a heat: the event's version did not move, nothing more is read"
        _, info = await events_server.http("GET", f"/events/{event}")
        before = info["version"]
        status, answer = await events_server.http("DELETE", f"/events/{event}/entrants/bob",  # bumps its version
                                                  headers={"authorization": f"Bearer {keys['bob']}"})
        assert status == 200, answer
        while True:
            frame = await asyncio.wait_for(queue.next(), 20)
            assert frame is not None, "the feed ended"
            if msgspec.json.decode(frame, type=p.EventLive).event.version > before:
                break
        assert event in reads
    finally:
        for c in (ann, bob):
            await c.close()


async def test_a_runner_tick_reads_the_whole_event_only_when_its_version_moved(
        events_server: LiveServer, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """The runner looks at every active event twice a second (server/events/runner.py): it reads the event's
    version, and the rest (the schedule of every heat and entrant) only when that moved since its last look.
    Its tick still moves the event on: a withdrawal is read, and the round is scored once its heat is over."""
    event, race, ann, bob, queue, keys = await _heat_under_way(events_server)
    events_server.tournaments.feeds.live[event].unwatch(queue)  # the feed reads the event too: let it end
    await eventually(lambda: event not in events_server.tournaments.feeds.live, "the feed to end")
    runner = events_server.tournaments.runner
    try:
        await runner.tick()  # (the event as it is now: read if it moved since the periodic tick's look)
        reads = record_calls(monkeypatch, runner.events, "meta")
        for text in WIN["moves"][:2]:
            assert isinstance(await ann.move(text), p.Ack)
        for _ in range(3):
            await runner.tick()
        assert event not in reads, "moves in a heat: the event's version did not move, nothing more is read"
        status, answer = await events_server.http("DELETE", f"/events/{event}/entrants/bob",  # bumps its version
                                                  headers={"authorization": f"Bearer {keys['bob']}"})
        assert status == 200, answer
        await runner.tick()
        assert event in reads, "a new version: the event is read whole"
        for c in (ann, bob):
            await c.give_up()
        await eventually(lambda: runner_scored(events_server, event), "the round scored by the runner")
    finally:
        for c in (ann, bob):
            await c.close()


async def runner_scored(server: LiveServer, event: str) -> bool:
    await server.tournaments.runner.tick()
    _, info = await server.http("GET", f"/events/{event}")
    return bool(info["status"] == "finished")


async def test_a_feed_sends_at_most_five_frames_in_any_one_second(
        events_server: LiveServer, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """docs/events.md: "at most five in any one second", a window and not an average. Every third frame is
    slow to make here (its event version read takes 0.15 s, as on a busy Redis): a feed that only spaced the
    starts of its looks 0.2 s apart sent the frame after a slow one sooner, six within 0.85 s."""
    event, race, ann, bob, queue, _ = await _heat_under_way(events_server)
    loop = asyncio.get_running_loop()
    sent: list[float] = []
    put = Outbox.put

    def recorded(outbox: Outbox, frame: bytes, waiting: int = 0) -> bool:
        if outbox is queue:
            sent.append(loop.time())
        return put(outbox, frame, waiting)
    monkeypatch.setattr(Outbox, "put", recorded)
    events = events_server.tournaments.feeds.events
    version = events.version
    reads = [0]

    async def slow_every_third(event_id: str) -> int | None:
        reads[0] += 1
        if reads[0] % 3 == 0:
            await asyncio.sleep(0.15)
        return await version(event_id)
    monkeypatch.setattr(events, "version", slow_every_third)

    async def play(c: Client) -> None:  # a move every 30 ms: a heat that moves all the time
        for text in WIN["moves"][:100]:
            assert isinstance(await c.move(text), p.Ack)
            await asyncio.sleep(0.03)
    drain = asyncio.ensure_future(_drain(queue))
    try:
        await asyncio.gather(play(ann), play(bob))
    finally:
        drain.cancel()
        for c in (ann, bob):
            await c.close()
    assert len(sent) >= 10, sent
    closest = min(sent[i + 5] - sent[i] for i in range(len(sent) - 5))
    assert closest >= 1.0, f"six frames within {closest:.3f} s"


async def _drain(queue: Outbox) -> None:
    """Read the watcher's frames as they come (a watcher that reads nothing is dropped)."""
    while await queue.next() is not None:
        pass
