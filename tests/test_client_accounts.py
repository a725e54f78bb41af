"""The account commands: layouts at 80 columns, replaying a saved results file, refusals before any
request, help texts (none of these needs a race server), and how HTTP refusals are worded, against the
real server (an in-process uvicorn on the private Redis) producing each refusal for real."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import msgspec
import pytest
from redis_util import Client, LiveServer, create_race, eventually, live_server, start_race
from redis_util import register as register_account

from client_cli.api import ApiError, history, latest_races, register
from client_cli.local_store import Account, LocalStore
from client_cli.main import build_parser, main
from client_cli.standings_text import history_lines, leaderboard_lines, profile_lines, rating_text
from shared import protocol as p
from shared.deals import deal as make_deal
from shared.engine import Game
from shared.record import GameRecord, replay
from shared.variants import get_variant

WIDTH = 80


def test_ratings_show_a_question_mark_while_provisional() -> None:
    assert rating_text(None, True) == "-"
    assert rating_text(1012, True) == "1012?"
    assert rating_text(1040, False) == "1040"


def profile() -> p.Profile:
    return p.Profile(name="Bartholomew_the_long_24", created_at=1_764_590_000_000, races=12, wins=3, variants={
        "forty-thieves": p.VariantRecord(races=10, wins=3, best_ms=252_000, rating=1012, mu=26.0, sigma=6.0,
                                         provisional=True, rated_races=4),
        "sixty-thieves": p.VariantRecord(races=2, wins=0),
    })


def test_a_profile_fits_80_columns_and_marks_provisional_ratings() -> None:
    lines = profile_lines(profile())
    assert all(len(line) <= WIDTH for line in lines), lines
    assert lines[0].startswith("Bartholomew_the_long_24 · registered ") and "12 races · 3 wins" in lines[0]
    forty = next(line for line in lines if line.startswith("Forty Thieves"))
    assert forty.split() == ["Forty", "Thieves", "1012?", "4", "10", "3", "4:12"]
    sixty = next(line for line in lines if line.startswith("Sixty Thieves"))
    assert sixty.split() == ["Sixty", "Thieves", "-", "0", "2", "0", "-"]
    assert lines[-1].startswith("? provisional")


def test_history_lines_fit_80_columns() -> None:
    entries = [
        p.HistoryEntry(race="r1", code="8N2BWJ", variant="forty-thieves", ended_at=1_764_590_000_000, place=1,
                       players=12, status="finished", home=104, total=104, time_ms=3_723_000, rated=True,
                       rating_before=1000, rating_after=1012),
        p.HistoryEntry(race="r2", code="ZZZZZZ", variant="sixty-thieves", ended_at=1_764_580_000_000, place=3,
                       players=3, status="gave_up", home=7, total=156),
    ]
    lines = history_lines(entries)
    assert all(len(line) <= WIDTH for line in lines), lines
    assert "1/12" in lines[1] and "104/104" in lines[1] and "1:02:03" in lines[1] and "1012 (+12)" in lines[1]
    assert "3/3" in lines[2] and "gave up" in lines[2] and lines[2].endswith("-")
    assert history_lines([]) == ["no finished races yet"]


def test_the_leaderboard_fits_80_columns() -> None:
    board = p.Leaderboard(variant="forty-thieves", players=[
        p.LeaderboardLine(rank=1, name="x" * 24, rating=1140, mu=30.0, sigma=2.0, provisional=False,
                          rated_races=40),
        p.LeaderboardLine(rank=2, name="ann", rating=1002, mu=25.0, sigma=6.0, provisional=True, rated_races=3),
    ])
    lines = leaderboard_lines(board)
    assert all(len(line) <= WIDTH for line in lines), lines
    assert lines[0] == "Leaderboard · Forty Thieves (forty-thieves)"
    assert lines[2].split() == ["1", "x" * 24, "1140", "40"]
    assert lines[3].split() == ["2", "ann", "1002?", "3"]
    assert lines[-1].startswith("? provisional")
    assert "no rated players yet" in leaderboard_lines(p.Leaderboard(variant="forty-thieves", players=[]))[1]


# ---------------------------------------------------------------- replay of results
def results_of(games: dict[str, list[str]], accounts: dict[str, str | None] | None = None) -> p.Results:
    """Results of a race on deal 1 whose players played ``games``, ranked in the order given."""
    accounts = accounts or {}
    records, standings = [], []
    for seat, (name, moves) in enumerate(games.items()):
        game = replay(GameRecord("forty-thieves", 1, tuple(moves))).game
        records.append(p.PlayerRecord(seat=seat, name=name, moves=moves, position=game.position()))
        standings.append(p.Standing(rank=seat + 1, seat=seat, name=name, status="gave_up", home=game.cards_home,
                                    total=104, moves=game.move_count, account=accounts.get(name)))
    return p.Results(race="r1", variant="forty-thieves", deal=1, salt="s", commitment="c", starts_at=0,
                     ended_at=1, standings=standings, records=records)


ANN = ["S"] * 7 + ["WF"]  # deal 1: the seventh draw turns up the ace of hearts
BOB = ["hd"]


def write_results(tmp_path: Path, results: p.Results) -> str:
    path = tmp_path / "results.json"
    path.write_bytes(msgspec.json.encode(results))
    return str(path)


def test_replay_takes_a_saved_results_file_and_replays_the_winner(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    path = write_results(tmp_path, results_of({"ann": ANN, "bob": BOB}))
    assert main(["replay", path, "--quiet"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "race r1, forty-thieves deal #1: ann's game (seat 0, place 1 of 2, gave up)"
    assert "8 moves replayed; 1/104 home; gave up" in out  # issue 23, item 6: it said "playing"
    assert main(["replay", path, "--quiet", "--player", "BOB"]) == 0
    assert "bob's game (seat 1, place 2 of 2" in capsys.readouterr().out
    assert main(["replay", path, "--quiet", "--seat", "1"]) == 0
    assert "bob's game" in capsys.readouterr().out
    assert main(["replay", path, "--player", "cy"]) == 2
    assert "no player 'cy' (players: ann, bob)" in capsys.readouterr().err


def test_replay_of_results_prefers_the_own_account(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_results(tmp_path, results_of({"ann": ANN, "Bob": BOB}, {"Bob": "bob"}))
    LocalStore().set_account("127.0.0.1:8000", Account("Bob", "bob.k"))
    assert main(["replay", path, "--quiet", "--server", "127.0.0.1:8000"]) == 0
    assert "Bob's game (seat 1, place 2 of 2" in capsys.readouterr().out


def test_replay_says_when_the_recorded_final_position_differs(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    results = results_of({"ann": ANN})
    results.records[0].position = Game.from_deal(make_deal(get_variant("forty-thieves"), 2)).position()
    assert main(["replay", write_results(tmp_path, results), "--quiet"]) == 1
    assert "does not end in the position the server recorded" in capsys.readouterr().out


def test_replay_still_takes_a_plain_record_and_names_a_missing_file(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "game.json"
    path.write_text(json.dumps({"variant": "forty-thieves", "deal": 1, "moves": ANN}))
    assert main(["replay", str(path), "--quiet"]) == 0
    assert "8 moves replayed" in capsys.readouterr().out
    assert main(["replay", str(tmp_path / "nope.json")]) == 2
    assert "cannot read" in capsys.readouterr().err


# ---------------------------------------------------------------- refusals before a request
def test_register_refuses_a_bad_name_and_an_overwrite_before_any_request(capsys: pytest.CaptureFixture[str]) -> None:
    dead = "127.0.0.1:9"  # nothing is sent in either case (a request would fail differently)
    assert main(["register", "b!", "--server", dead]) == 2
    assert "cannot be an account name: an account name is 2 to 24" in capsys.readouterr().err
    LocalStore().set_account(dead, Account("Bob", "bob.k"))
    assert main(["register", "ann", "--server", dead]) == 1
    err = capsys.readouterr().err
    assert "already keeps the account Bob" in err and "--force" in err
    assert LocalStore().account(dead) == Account("Bob", "bob.k")


def test_account_commands_without_an_account_say_how_to_make_one(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["account"], ["account", "rotate"], ["account", "forget"], ["me"]):
        assert main([*argv, "--server", "127.0.0.1:9"]) == 1, argv
        assert "thieves register NAME" in capsys.readouterr().err
    assert main(["create", "--join", "--server", "127.0.0.1:9"]) == 2
    assert "--join without NAME plays as your account" in capsys.readouterr().err
    assert main(["play", "ABC123", "--server", "127.0.0.1:9"]) == 2
    assert "--name NAME is needed" in capsys.readouterr().err


def test_account_show_prints_the_key_only_when_asked(capsys: pytest.CaptureFixture[str]) -> None:
    LocalStore().set_account("127.0.0.1:8000", Account("Bob", "bob.secret"))
    assert main(["account", "show", "--server", "http://127.0.0.1:8000"]) == 0
    out = capsys.readouterr().out
    assert "account Bob on http://127.0.0.1:8000" in out and "bob.secret" not in out
    assert main(["account", "--key", "--server", "127.0.0.1:8000"]) == 0
    assert "key: bob.secret" in capsys.readouterr().out


@pytest.mark.parametrize("command", ["register", "account", "me", "player", "leaderboard", "replay", "play", "bot",
                                     "create"])
def test_help_texts_say_where_the_key_is_kept_and_what_the_options_do(command: str) -> None:
    sub = build_parser()._subparsers._group_actions[0].choices[command]  # type: ignore[union-attr]
    text = " ".join(sub.format_help().split())
    assert "exit" in text.lower() or command in ("play", "create", "leaderboard"), text
    expected = {
        "register": ["servers.json", "0600", "--force"],
        "account": ["rotate", "forget", "import", "--key"],
        "me": ["provisional", "--races"],
        "player": ["NAME", "--races"],
        "leaderboard": ["--variant", "--limit", "provisional"],
        "replay": ["--player", "--seat", "--server", "results"],
        "play": ["--anonymous", "takes the same seat", "account"],
        "bot": ["account", "--name", "anonymous"],
        "create": ["--rated", "accounts"],
    }[command]
    for words in expected:
        assert words in text, (command, words)


# ---------------------------------------------------------------- HTTP refusals worded
# Against the real server (uvicorn, Starlette, the private Redis): the refusals are produced for real.
# The CLI's requests are blocking urllib, so they run in a thread while the server runs on this loop.
async def refused_hello(server: LiveServer, race: str, key: str) -> p.Error:
    c = await Client.connect(server)
    await c.send(p.Hello(protocol=p.PROTOCOL_VERSION, race=race, key=key))
    err = await c.error()
    await c.closed()
    return err


async def test_register_refusals_are_explained(redis_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    async with live_server(redis_url, register_burst=1, register_interval=60.0) as server:
        await register_account(server, "Bob")  # the one registration the burst allows
        assert await asyncio.to_thread(main, ["register", "bob", "--server", server.url]) == 1
        assert capsys.readouterr().err.strip() == (
            "thieves register: cannot register bob: bob is taken: the account Bob has it (names are the same in "
            "any case); pick another name")
        assert await asyncio.to_thread(main, ["register", "B0B", "--server", server.url]) == 1
        assert capsys.readouterr().err.strip() == (  # a look-alike is said to look like the name, not to be it
            "thieves register: cannot register B0B: B0B looks like Bob, which is taken; pick another name")
        with pytest.raises(ApiError) as caught:  # a taken name costs no token: this one is the second
            await asyncio.to_thread(register, server.url, "cy")
        assert caught.value.code == "register_rate_limited" and caught.value.retry_after is not None
        assert 0 < caught.value.retry_after <= 60
        assert caught.value.words().endswith(f"try again in {caught.value.retry_after:g} s")
        assert LocalStore().account(server.url) is None


async def test_rotate_sends_the_key_as_a_bearer_token_and_explains_bad_key(
        server: LiveServer, capsys: pytest.CaptureFixture[str]) -> None:
    revoked = await register_account(server, "Bob")
    status, body = await server.http("POST", "/players/Bob/key", headers={"authorization": f"Bearer {revoked}"})
    assert status == 200, body
    current = body["key"]
    LocalStore().set_account(server.url, Account("Bob", revoked))
    assert await asyncio.to_thread(main, ["account", "rotate", "--server", server.url]) == 1
    assert "account key is not valid" in capsys.readouterr().err
    assert LocalStore().account(server.url) == Account("Bob", revoked)
    LocalStore().set_account(server.url, Account("Bob", current))
    assert await asyncio.to_thread(main, ["account", "rotate", "--server", server.url]) == 0
    kept = LocalStore().account(server.url)
    assert kept is not None and kept.name == "Bob" and kept.key not in (revoked, current)
    # The server took the kept key as the bearer of the rotation: the one it replaced is refused now,
    # the new one joins as Bob.
    created = await create_race(server)
    assert (await refused_hello(server, created.race.id, current)).code == "bad_key"
    c = await Client.connect(server)
    welcome = await c.hello(created.race.id, key=kept.key)
    assert [e.name for e in welcome.progress] == ["Bob"]
    await c.close()


async def play_solo_race(server: LiveServer, key: str) -> str:
    """A one-seat race joined with ``key``, started and given up at once: its id."""
    created = await create_race(server, seats=1, deal_source="number", deal=1)
    c = await Client.connect(server)
    await c.hello(created.race.id, key=key)
    await start_race(server, created.creator_token, [c])
    await c.give_up()
    await c.expect(p.Finished)
    await c.close()
    return created.race.id


async def test_history_pages_are_followed_through_next(server: LiveServer) -> None:
    key = await register_account(server, "ann")
    count = 101  # one more than a page holds (limit 100): latest_races must follow ``next``
    played = {await play_solo_race(server, key) for _ in range(count)}

    async def recorded() -> bool:
        status, body = await server.http("GET", "/players/ann")
        return status == 200 and body["races"] == count
    await eventually(recorded, f"the {count} races to reach ann's history")
    races = await asyncio.to_thread(latest_races, server.url, "ann", count + 5)
    assert len(races) == count and {e.race for e in races} == played
    assert races == sorted(races, key=lambda e: (e.ended_at, e.race), reverse=True), "newest first"
    first = await asyncio.to_thread(history, server.url, "ann", 100)
    assert first.races == races[:100] and first.next is not None
    rest = await asyncio.to_thread(history, server.url, "ann", 100, first.next)
    assert rest.races == races[100:] and rest.next is None
