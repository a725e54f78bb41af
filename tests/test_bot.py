"""The bot: its greedy policy on views, and whole races of bots against the real server."""

from __future__ import annotations

import asyncio
import random
import re
import sys
from pathlib import Path

import pytest

from client_cli.api import create_race
from client_cli.commands.bot import GreedyPolicy, play_race
from redis_util import DEADLINE, LiveServer
from shared import protocol as p
from shared.engine import Game
from shared.record import GameRecord, replay
from shared.variants import FORTY_THIEVES


def play_out(policy: GreedyPolicy, game: Game) -> Game:
    """Follow the policy until it stops; every move must be legal and reach a new position."""
    positions = {game.position()}
    for _ in range(1000):
        move = policy.choose(game.view())
        if move is None:
            return game
        game.push(move)  # raises if the policy chose an illegal move
        assert game.position() not in positions
        positions.add(game.position())
    raise AssertionError("the policy never stopped")


def test_the_greedy_policy_plays_legal_moves_and_never_repeats_a_position() -> None:
    game = play_out(GreedyPolicy(), Game.new(FORTY_THIEVES, 3))
    assert game.stock_count == 0  # it drew the whole stock before giving up
    assert game.cards_home > 0


def test_a_wandering_policy_plays_another_game() -> None:
    steady = play_out(GreedyPolicy(), Game.new(FORTY_THIEVES, 3))
    wandering = play_out(GreedyPolicy(wander=0.5, rng=random.Random(4)), Game.new(FORTY_THIEVES, 3))
    assert wandering.move_stack != steady.move_stack


async def test_three_bots_race_to_the_end(server: LiveServer) -> None:
    created = await asyncio.to_thread(
        create_race, server.url, p.Create(seats=3, time_limit=120, deal_source="number", deal=2)
    )
    code, token = created.race.code, created.creator_token
    lines: list[str] = []
    outcomes = await asyncio.wait_for(
        asyncio.gather(
            play_race(server.url, code, "ann", 0, token, 3, lines.append),
            play_race(server.url, code, "bob", 0, None, 1, lines.append),
            play_race(server.url, code, "cy", 0.001, None, 1, lines.append, wander=0.3),
        ),
        timeout=90,
    )
    assert [o.status for o in outcomes] == [0, 0, 0]
    assert any(line.startswith("starting the race with 3 ready") for line in lines)
    results = outcomes[0].results
    assert results is not None and all(o.results == results for o in outcomes)
    assert results.deal == 2 and len(results.standings) == 3
    for outcome, record in zip(outcomes, sorted(results.records, key=lambda r: ["ann", "bob", "cy"].index(r.name))):
        assert outcome.moves > 0 and len(record.moves) == outcome.moves
        replayed = replay(GameRecord(results.variant, results.deal, tuple(record.moves)))
        assert replayed.ok and replayed.game.position() == record.position
    assert {s.status for s in results.standings} <= {"finished", "gave_up"}
    ends = [line for line in lines if " moves (" in line]  # each bot's standings, in the shared words
    assert ends and all(line.endswith(("(won)", "(gave up)")) for line in ends), ends


async def test_a_bot_for_a_race_that_does_not_exist_exits_1(server: LiveServer) -> None:
    outcome = await asyncio.wait_for(play_race(server.url, "NOPE99", "ann", 0, say=lambda _t: None), timeout=20)
    assert outcome.status == 1 and outcome.results is None


async def test_a_bot_with_no_server_to_reach_says_so_and_exits_1(capsys: "pytest.CaptureFixture[str]") -> None:
    """Issue #12, item 4: it used to retry for ever and print nothing."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    outcome = await asyncio.wait_for(play_race(f"127.0.0.1:{port}", "ABCDEF", "ann", 0, say=lambda _t: None), 20)
    assert outcome.status == 1
    assert f"thieves bot: no race server answers at http://127.0.0.1:{port} (connection refused)" in capsys.readouterr().err


async def test_a_bot_that_follows_the_servers_hints_races_a_checked_deal_marked_as_helped(server: LiveServer) -> None:
    """Issue #12, item 9: the demo's bots all gave up within a minute (best 50/104). A bot may
    follow the server's hints (once stuck, or always) and is then honestly marked †."""
    created = await asyncio.to_thread(
        create_race, server.url, p.Create(seats=2, time_limit=60, deal_source="pool", hints=True)
    )
    assert created.race.checked and created.race.hints
    code, token = created.race.code, created.creator_token
    lines: list[str] = []
    outcomes = await asyncio.wait_for(
        asyncio.gather(
            play_race(server.url, code, "ann", 0, token, 2, lines.append, hints="always"),
            play_race(server.url, code, "bob", 0, None, 1, lines.append, hints="stuck"),
        ),
        timeout=120,
    )
    assert [o.status for o in outcomes] == [0, 0]
    results = outcomes[0].results
    assert results is not None
    by_name = {s.name: s for s in results.standings}
    assert by_name["ann"].helped and by_name["ann"].status == "finished", by_name["ann"]
    assert by_name["bob"].helped and any("following the server's hints" in line for line in lines)
    for record in results.records:
        replayed = replay(GameRecord(results.variant, results.deal, tuple(record.moves)))
        assert replayed.ok and replayed.game.position() == record.position


async def test_on_a_public_pool_deal_bots_follow_its_line_like_people_and_win(server: LiveServer) -> None:
    """An organiser's named deal from the public pool: recognised by its face-up cards, its winning line
    played at a pace with slips taken back; the two bots finish, at different times."""
    from shared.pool import load_pool

    deal = load_pool("forty-thieves").deals[1]
    created = await asyncio.to_thread(create_race, server.url, p.Create(seats=2, deal_source="number", deal=deal))
    code, token = created.race.code, created.creator_token
    lines: list[str] = []
    careful, sloppy = await asyncio.wait_for(asyncio.gather(
        play_race(server.url, code, "ann", 0.001, token, 2, lines.append, line=True, slips=0.0),
        play_race(server.url, code, "bob", 0.001, None, 1, lines.append, line=True, slips=0.2),
    ), timeout=120)
    assert careful.status == sloppy.status == 0 and careful.results is not None
    standings = {s.name: s for s in careful.results.standings}
    assert standings["ann"].status == standings["bob"].status == "finished"
    assert sloppy.moves > careful.moves, "bob's slips and their undos are moves too"
    records = {r.name: r for r in careful.results.records}
    assert "U" in records["bob"].moves and "U" not in records["ann"].moves
    assert any("following its winning line" in line for line in lines)


THIEVES = str(Path(sys.executable).with_name("thieves"))


async def test_a_bot_without_a_creator_token_leaves_the_start_to_the_one_with_it(server: LiveServer) -> None:
    """``make demo`` raced two of its three bots: a bot given no --creator-token took the one ``thieves
    create`` kept on the machine and started the race with 1 ready, and the third found it started.
    A bot starts a race only with --creator-token, and by default once every seat is ready."""
    create = await asyncio.create_subprocess_exec(THIEVES, "create", "--server", server.url, "--seats", "2",
                                                  "--time-limit", "60", "--deal", "2", stdout=asyncio.subprocess.PIPE)
    out = (await create.communicate())[0].decode()
    race, code, token = (re.search(rf"{label}:\s+(\S+)", out).group(1)  # type: ignore[union-attr]
                         for label in ("race id", "join code", "creator token"))
    cy = await asyncio.create_subprocess_exec(THIEVES, "bot", code, "--server", server.url, "--name", "cy",
                                              "--pace", "0", stdout=asyncio.subprocess.PIPE)
    assert cy.stdout is not None
    said = []
    while not said or "ready" not in said[-1]:  # cy is seated and ready, alone: a bot with a token would start now
        said.append((await asyncio.wait_for(cy.stdout.readline(), DEADLINE)).decode())
    ann = await asyncio.create_subprocess_exec(THIEVES, "bot", code, "--server", server.url, "--name", "ann",
                                               "--pace", "0", "--creator-token", token, stdout=asyncio.subprocess.PIPE)
    ann_out = (await asyncio.wait_for(ann.communicate(), 90))[0].decode()
    said.append((await asyncio.wait_for(cy.communicate(), 90))[0].decode())
    assert (ann.returncode, cy.returncode) == (0, 0), (ann_out, said)
    assert "[ann] starting the race with 2 ready" in ann_out
    assert "starting" not in "".join(said)
    status, results = await server.http("GET", f"/races/{race}/results")
    assert status == 200 and sorted(s["name"] for s in results["standings"]) == ["ann", "cy"]
