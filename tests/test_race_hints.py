"""Checked deals and hints in whole races, over real sockets and a real Redis.

Deal 2 of Forty Thieves is the hand-picked easy deal: the solver finds a
winning line from its start in milliseconds, so hint budgets stay small.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from redis_util import Client, LiveServer, caught_up, create_race, live_server, start_race

from server.store import Keys, checked_key
from shared import protocol as p
from shared.engine import Game
from shared.hints import Hint
from shared.moves import Move
from shared.pool import load_pool
from shared.record import GameRecord, replay
from shared.solver import Verdict
from shared.variants import get_variant

WIN = json.loads((Path(__file__).parent / "data" / "race_win_line.json").read_text())
"""A winning line of deal 2 that the solver's own line leaves at move 95."""


async def _seated(server: LiveServer, created: p.Created, names: list[str]) -> list[Client]:
    out = []
    for name in names:
        c = await Client.connect(server)
        await c.hello(created.race.id, name)
        out.append(c)
    return out


async def _hint(client: Client) -> p.HintAnswer:
    await client.send(p.HintRequest())
    return await client.expect(p.HintAnswer, timeout=10)


async def test_a_pool_race_is_checked_and_reveals_its_deal_and_line_at_the_end(server: LiveServer) -> None:
    """The ``server`` fixture seeded the private pools: the race takes the oldest deal."""
    pool = load_pool("forty-thieves")
    created = await create_race(server, seats=1, deal_source="pool")
    race = created.race
    assert (race.deal_source, race.checked, race.hints) == ("pool", True, False)
    status, body = await server.http("GET", f"/races/{race.code}")
    assert status == 200 and body["race"]["checked"] is True and "deal" not in body["race"]
    (ann,) = await _seated(server, created, ["ann"])
    await start_race(server, created.creator_token, [ann])
    await ann.give_up()
    res = (await ann.expect(p.Finished)).results
    assert res.checked is True and res.deal == pool.deals[0]
    assert hashlib.sha256(f"forty-thieves|{res.deal}|{res.salt}".encode()).hexdigest() == race.commitment
    assert res.winning_line == list(pool.lines[res.deal])
    assert replay(GameRecord("forty-thieves", res.deal, res.winning_line)).game.is_won()
    await ann.close()

    unchecked = (await create_race(server, seats=1)).race
    numbered = (await create_race(server, seats=1, deal_source="number", deal=res.deal)).race
    assert unchecked.checked is False and numbered.checked is False, "only a pool draw is marked checked"
    sixty = (await create_race(server, variant="sixty-thieves", deal_source="pool")).race
    assert sixty.checked and sixty.variant == "sixty-thieves"


async def test_pool_errors_are_typed_and_store_nothing(server: LiveServer) -> None:
    redis = server.service.redis
    before = sorted(await redis.keys("*"))
    ready = await redis.lrange(checked_key("forty-thieves"), 0, -1)
    status, body = await server.http("POST", "/races", {"variant": "nope", "deal_source": "pool"})
    assert (status, body["code"]) == (400, "bad_variant")
    status, body = await server.http("POST", "/races", {"deal_source": "pool", "deal": 2})
    assert (status, body["code"]) == (400, "bad_deal")
    c = await Client.connect(server)
    await c.send(p.Create(deal_source="pool", deal=2))
    err = await c.error()
    assert (err.code, err.ref) == ("bad_deal", "create")
    assert sorted(await redis.keys("*")) == before, "nothing stored"
    assert await redis.lrange(checked_key("forty-thieves"), 0, -1) == ready and ready, "no checked deal used up"
    await c.close()


async def test_a_hint_is_a_legal_winning_move_changes_no_game_and_marks_the_player_for_good(
    server: LiveServer,
) -> None:
    created = await create_race(server, seats=2, deal_source="number", deal=2, hints=True)
    assert created.race.hints is True
    ann, bob = await _seated(server, created, ["ann", "bob"])
    watcher = await Client.connect(server)
    await watcher.hello(created.race.id, role="spectator")
    await start_race(server, created.creator_token, [ann, bob, watcher])
    store = server.service.store
    rid = created.race.id

    first = await _hint(ann)
    mirror = Game.new(get_variant("forty-thieves"), 2)
    assert first.move is not None and mirror.reason(Move.parse(first.move)) is None
    assert (first.winning, first.verdict, first.seq) == (True, "won", 0)
    assert first.remaining > 0
    line = Hint.from_json(json.loads(await store.redis.get(Keys(rid).hint(0)))).line
    assert line[0].text() == first.move and len(line) == first.remaining
    rest = mirror.copy()
    for move in line:
        rest.push(move)
    assert rest.is_won(), "the hint starts a line that wins"
    state = await store.player(rid, 0)
    assert state is not None and state.moves == [] and state.n == 0, "a hint plays nothing"

    await caught_up(watcher, server, rid)
    assert watcher.table.lines[0].helped is True and watcher.table.lines[1].helped is False
    await caught_up(ann, server, rid)
    assert ann.table.lines[0].helped is True, "the player sees its own mark too"

    ack = await ann.move(first.move)
    assert isinstance(ack, p.Ack)
    second = await _hint(ann)
    assert second.move == line[1].text() and second.seq == 1 and second.remaining == len(line) - 1
    assert second.version == ack.version, "only the first hint is an event"

    status, body = await server.http("GET", f"/races/{rid}")
    assert [e["helped"] for e in body["progress"]] == [True, False]
    for c in (ann, bob):
        await c.give_up()
    res = (await watcher.expect(p.Finished)).results
    assert {s.name: s.helped for s in res.standings} == {"ann": True, "bob": False}
    assert res.records[0].moves == [first.move]
    for c in (ann, bob, watcher):
        await c.close()


async def test_the_hint_line_carries_on_through_another_server_process(redis_url: str) -> None:
    """The previous hint lives in Redis: a player who follows it and reconnects elsewhere gets its next move.

    The kept line is one the solver would not pick itself at that point (move 95), so only a
    continued line can give this answer."""
    async with live_server(redis_url) as one, live_server(redis_url) as two:
        created = await create_race(one, seats=1, deal_source="number", deal=2, hints=True)
        ann = await Client.connect(one)
        token = (await ann.hello(created.race.id, "ann")).token
        await start_race(one, created.creator_token, [ann])
        await _hint(ann)  # ann is helped; the kept hint is now replaced by the other winning line
        start = Game.new(get_variant("forty-thieves"), 2)
        kept = Hint(Move.parse(WIN["moves"][0]), Verdict.WON, tuple(Move.parse(m) for m in WIN["moves"]), start)
        await one.service.redis.set(Keys(created.race.id).hint(0), json.dumps(kept.to_json()))
        for text in WIN["moves"][:95]:
            assert isinstance(await ann.move(text), p.Ack)
        await ann.close()
        again = await Client.connect(two)
        welcome = await again.hello(created.race.id, token=token)
        assert welcome.seq == 95
        answer = await _hint(again)
        assert (answer.move, answer.winning, answer.remaining) == (WIN["moves"][95], True, len(WIN["moves"]) - 95)
        fresh = await two.service.hints.run(_position_after(WIN["moves"][:95]), None)  # TEST_CONFIG.hint_budget (0.3 s)
        assert fresh[0].move is not None and fresh[0].move.text() != answer.move, "a fresh search answers otherwise"
        await again.close()


def _position_after(moves: list[str]) -> str:
    game = Game.new(get_variant("forty-thieves"), 2)
    for text in moves:
        game.push_text(text)
    return game.position()


async def test_hints_in_a_worker_process(redis_url: str) -> None:
    """The default way: the solver runs in a spawned worker process, not in the server's."""
    async with live_server(redis_url, hint_workers=1) as server:
        created = await create_race(server, seats=1, deal_source="number", deal=2, hints=True)
        (ann,) = await _seated(server, created, ["ann"])
        await start_race(server, created.creator_token, [ann])
        answer = await _hint(ann)
        assert answer.winning and answer.move == WIN["moves"][0]
        assert server.service.hints.workers._pool is not None
        await ann.close()
