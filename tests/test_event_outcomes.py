"""An event's view of the races it made (server/events/context.py ``EventContext.outcome``): a race still
running has no outcome, a finished one's outcome is read once and kept (a round's heats are looked at
every tick until the last is over), a bounded number of them. Real server, real Redis."""

from __future__ import annotations

import pytest
from redis_util import Client, LiveServer, register

from server.deals.checked import CheckedDeal
from server.events import context
from server.store.keys import Keys
from shared import protocol as p

DEAL = CheckedDeal("forty-thieves", 7, ())


async def _finished_race(server: LiveServer, key: str, moves: list[str]) -> str:
    """A race of one entrant (ann) who plays ``moves`` then gives up: over, with its results stored."""
    race = await server.service.create_for(["ann"], DEAL, 60, "all-ready", "E-outcomes")
    c = await Client.connect(server)
    await c.hello(race.code, key=key)
    await c.send(p.Ready(ready=True))
    await c.expect(p.Countdown)
    for move in moves:
        assert isinstance(await c.move(move), p.Ack)
    await c.give_up()
    await c.expect(p.Finished)
    await c.close()
    return race.id


async def test_a_finished_race_is_read_once_and_a_running_one_not_kept(server: LiveServer,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = server.tournaments.context
    key = await register(server, "ann")

    running = await server.service.create_for(["ann"], DEAL, 60, "all-ready", "E-outcomes")
    c = await Client.connect(server)
    await c.hello(running.code, key=key)
    await c.send(p.Ready(ready=True))
    await c.expect(p.Countdown)
    assert isinstance(await c.move("S"), p.Ack)  # a game the kept outcome leaves out
    assert await ctx.outcome(running.id) is None, "still racing: no outcome yet"
    assert running.id not in ctx._over
    await c.give_up()
    await c.expect(p.Finished)
    await c.close()

    over = await ctx.outcome(running.id)
    assert over is not None and over.results is not None
    assert over.result("ann", 1, "forty-thieves").status == "gave_up"
    assert over.results.records == [] and over.results.standings[0].account == "ann", "kept without its games"
    # Kept: the next look reads nothing (with its stored results gone, it still knows them).
    await server.service.store.redis.delete(Keys(running.id).results, Keys(running.id).meta)
    assert await ctx.outcome(running.id) is over

    monkeypatch.setattr(context, "OUTCOMES_KEPT", 2)
    second = await _finished_race(server, key, ["S"])  # (a move: a race with a game to leave out)
    third = await _finished_race(server, key, ["S", "S"])
    assert (await ctx.outcome(second)) is not None and (await ctx.outcome(third)) is not None
    assert list(ctx._over) == [second, third], "the oldest kept outcome made room"
    again = await ctx.outcome(running.id)  # read again, its keys gone: no results, and not kept
    assert again is not None and again.results is None and running.id not in ctx._over
