"""``thieves event`` and ``thieves daily`` against a real server: the organiser's token, entering,
the standings at 80 columns, and the live watch at 80×24."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import msgspec
import pytest
from redis_util import Client, LiveServer, eventually, live_server

from client_cli.main import main
from shared import protocol as p

WIN = json.loads((Path(__file__).parent / "data" / "race_win_line.json").read_text())
TOKEN = "organiser-token-of-the-cli-tests"


@pytest.fixture
async def organised(redis_url: str) -> Any:
    async with live_server(redis_url, organiser_token=TOKEN) as server:
        yield server


async def thieves(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Run the command in a thread (its HTTP calls block; the server answers on this loop)."""
    code = await asyncio.to_thread(main, list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


async def test_the_organiser_creates_and_starts_and_a_player_key_cannot(organised: LiveServer,
                                                                      capsys: pytest.CaptureFixture[str],
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    url = organised.url
    code, out, _ = await thieves(capsys, "register", "ann", "--server", url)
    assert code == 0
    from client_cli.local_store import LocalStore
    account = LocalStore().account(url)
    assert account is not None
    key = account.key
    code, _, err = await thieves(capsys, "event", "create", "Cup", "--server", url)
    assert code == 2 and "organiser token is needed" in err
    code, _, err = await thieves(capsys, "event", "create", "Cup", "--server", url, "--organiser-token", key)
    assert code == 1 and "organiser" in err
    monkeypatch.setenv("THIEVES_ORGANISER_TOKEN", TOKEN)
    code, out, _ = await thieves(capsys, "event", "create", "Spring Cup", "--rounds", "1", "--heat-size", "4",
                                 "--join-seconds", "1", "--deals", str(WIN["deal"]), "--server", url)
    assert code == 0 and "Spring Cup" in out
    event = out.split()[1]
    code, out, _ = await thieves(capsys, "event", "join", event, "--server", url)
    assert code == 0 and "ann entered" in out and "round 1" in out
    code, out, _ = await thieves(capsys, "event", "list", "--server", url)
    assert code == 0 and event in out and "1 entrants" in out
    code, out, _ = await thieves(capsys, "event", "start", event, "--server", url)
    assert code == 0 and "round 1" in out
    code, _, err = await thieves(capsys, "event", "start", event, "--server", url)
    assert code == 1 and "started already" in err

    async def drawn() -> bool:
        code, out, _ = await thieves(capsys, "event", "show", event, "--server", url)
        return code == 0 and "round 1" in out and "ann" in out
    await eventually(drawn, "round 1 drawn in `event show`")
    _, out, _ = await thieves(capsys, "event", "show", event, "--server", url)
    heat_code = next(line.split()[0] for line in out.splitlines() if line.startswith("  ") and "ann" in line)
    c = await Client.connect(organised)
    await c.hello(heat_code, key=key)
    await c.expect(p.Countdown, timeout=30)
    for text in WIN["moves"][:2]:
        assert isinstance(await c.move(text), p.Ack)
    await c.give_up()
    await c.close()

    async def finished() -> bool:
        _, out, _ = await thieves(capsys, "event", "show", event, "--server", url)
        return "finished" in out
    await eventually(finished, "the event finished")
    code, out, _ = await thieves(capsys, "event", "standings", event, "--server", url)
    assert code == 0 and out.splitlines()[1].split()[:2] == ["1", "ann"]
    assert all(len(line) <= 80 for line in out.splitlines())

    from client_cli.event_watch import EventWatchApp
    app = EventWatchApp(url, event)
    async with app.run_test(size=(80, 24)) as pilot:
        await eventually(lambda: "ann" in app.last_text, "the watch shows the standings")
        await pilot.pause()
    assert "matchpoints" in app.last_text


async def test_errors_are_in_the_players_words(organised: LiveServer, capsys: pytest.CaptureFixture[str]) -> None:
    url = organised.url
    code, _, err = await thieves(capsys, "event", "show", "nope", "--server", url)
    assert code == 1 and "no event has that id" in err
    code, _, err = await thieves(capsys, "event", "join", "nope", "--server", url)
    assert code == 2 and "thieves register NAME" in err
    code, out, _ = await thieves(capsys, "daily", "board", "--server", url)
    assert code == 0 and "nobody has played it yet" in out
    code, _, err = await thieves(capsys, "daily", "play", "--server", url)
    assert code == 1 and "thieves register NAME" in err


def test_event_play_finds_the_accounts_heat_or_arena_race_once() -> None:
    from client_cli.commands.event import next_race

    heat = p.EventHeat(heat=2, race="r2", code="CODE02", entrants=["ann", "bob"])
    base = dict(id="e", name="Cup", variant="forty-thieves", rounds=2, heat_size=2, time_limit=60, join_seconds=1,
                break_seconds=0, rated=False, late_entry=True, status="running", created_at=1, entrants=3)
    duplicate = p.EventInfo(format="duplicate", round=1, round_state="open",
                            schedule=[p.EventRound(round=1, starts_at=5, heats=[heat])], **base)  # type: ignore[arg-type]
    empty = p.EventStandings(event="e", status="running", round=1, round_state="open", version=1, lines=[])
    assert next_race(duplicate, empty, "ann", set()) == "CODE02"
    assert next_race(duplicate, empty, "ann", {"r2"}) is None, "a heat played is not played again"
    assert next_race(duplicate, empty, "cy", set()) is None, "not drawn into this round"
    done = msgspec.structs.replace(duplicate, round_state="done")
    assert next_race(done, empty, "ann", set()) is None, "between rounds: wait"
    arena = msgspec.structs.replace(duplicate, format="arena", round_state="running", pairing=True)
    line = p.EventStandingLine(rank=1, account="ann", name="ann", matchpoints=0, home=0, time_ms=0, points=2,
                               status="playing", race="r2")
    playing = msgspec.structs.replace(empty, lines=[line])
    assert next_race(arena, playing, "ann", set()) == "CODE02"
    waiting = msgspec.structs.replace(empty, lines=[msgspec.structs.replace(line, status="waiting", race=None)])
    assert next_race(arena, waiting, "ann", set()) is None


async def test_check_in_or_withdrawal_by_one_who_never_entered_says_so(organised: LiveServer,
                                                                       capsys: pytest.CaptureFixture[str],
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Checking in to (or withdrawing from) an event one has not entered is the typed ``not_entered``, said
    as that and how to enter; it used to be ``not_an_entrant``, whose words are about a heat's race."""
    url = organised.url
    monkeypatch.setenv("THIEVES_ORGANISER_TOKEN", TOKEN)
    code, out, _ = await thieves(capsys, "event", "create", "Check Cup", "--check-in", "--server", url)
    assert code == 0
    event = out.split()[1]
    code, _, _ = await thieves(capsys, "register", "ann", "--server", url)
    assert code == 0
    for action in ("check-in", "withdraw"):
        code, out, err = await thieves(capsys, "event", action, event, "--server", url)
        assert code == 1 and out == ""
        assert err.strip() == (f"thieves event {action}: ann has not entered event {event} (or has withdrawn): "
                               f"`thieves event join {event}` enters it (then check in, where the event asks for it)")
        assert "heat" not in err
    from client_cli.local_store import LocalStore
    account = LocalStore().account(url)
    assert account is not None
    status, answer = await organised.http("POST", f"/events/{event}/check-in",
                                          headers={"authorization": f"Bearer {account.key}"})
    assert (status, answer["code"]) == (409, "not_entered") and "not entered this event" in answer["message"]
    status, info = await organised.http("GET", f"/events/{event}")
    assert info["entrants"] == 0, "nothing was stored"


def _swiss_frame() -> p.EventLive:
    """A Swiss event of three, round 1 of 2 under way: ann and bob paired, cy's bye."""
    heat = p.EventHeat(heat=1, race="r1", code="CODE01", entrants=["ann", "bob"])
    info = p.EventInfo(id="e", name="Swiss Cup", format="swiss", variant="forty-thieves", rounds=2, heat_size=2,
                       time_limit=60, join_seconds=1, break_seconds=0, rated=False, late_entry=True, status="running",
                       round=1, round_state="running", created_at=1, entrants=3, score_field="score",
                       tiebreaks=["buchholz", "sonneborn_berger"],
                       schedule=[p.EventRound(round=1, starts_at=5, heats=[heat], byes=["cy"])])
    lines = [p.EventStandingLine(rank=1, account=a, name=a.title(), matchpoints=0, home=h, time_ms=0, score=s,
                                 buchholz=b, sonneborn_berger=sb)
             for a, h, s, b, sb in (("cy", 0, 1.0, 0.5, 0.25), ("ann", 3, 0.5, 1.0, 0.5), ("bob", 1, 0.5, 1.5, 0.75))]
    standings = p.EventStandings(event="e", status="running", round=1, round_state="running", version=1, lines=lines)
    live = [p.EventLiveLine(account="ann", heat=1, race="r1", status="racing", home=3, matchpoints=1),
            p.EventLiveLine(account="bob", heat=1, race="r1", status="racing", home=1, matchpoints=0)]
    return p.EventLive(event=info, standings=standings, live=live, server_time=5)


def test_a_swiss_event_in_the_terminal_says_points_pairings_its_bye_and_its_tiebreaks() -> None:
    """One word for a Swiss score, points, where the standings said points and the live lines said "mp
    now" (and the final line "matchpoints"); its races are pairings, not heats; the round's bye is shown
    while the round is played; the standings carry Buchholz and Sonneborn-Berger, as the page does."""
    from client_cli.commands.event import _score_words, standings_lines
    from client_cli.event_watch import live_lines

    frame = _swiss_frame()
    live = live_lines(frame, 10)
    assert live[1:] == ["  pairing 1   Ann                  racing         3 home    1 points now",
                        "  pairing 1   Bob                  racing         1 home    0 points now",
                        "  bye         Cy                   a bye: no race this round"]
    table = standings_lines(frame.standings)
    assert table[0].split() == ["rank", "name", "points", "Bu", "SB", "cards", "time", "rounds"]
    assert table[1].split()[:5] == ["1", "Cy", "1", "0.5", "0.25"]
    assert table[4] == "Bu: Buchholz; SB: Sonneborn-Berger (they break ties of points, in this order)"
    assert all(len(line) <= 80 for line in live + table)
    assert not any("mp" in line.split() or "matchpoints" in line or "heat" in line for line in live + table)
    assert _score_words(frame.standings.lines[0]) == "1 points, 0 cards home"


def test_event_list_says_finished_and_repeats_only_for_the_occurrence_to_come() -> None:
    """A finished event was listed "round 2/2 done"; an occurrence that had started kept saying "repeats"
    after its series was cancelled (only the occurrence to come loses the repeat)."""
    from client_cli.commands.event import summary

    info = _swiss_frame().event
    over = msgspec.structs.replace(info, status="finished", round=2, round_state="done", repeat="0 * * * *",
                                   series="s1", occurrence=1)
    assert summary(over).endswith("; 3 entrants; finished")
    coming = msgspec.structs.replace(info, status="registration", round=0, round_state="waiting",
                                     repeat="0 * * * *", series="s1", occurrence=2)
    assert summary(coming).endswith("; repeats '0 * * * *'")


def test_event_play_says_when_a_scheduled_event_and_the_next_round_start() -> None:
    """A scheduled event starts by itself: `event play` said "waiting for the organiser"; between rounds
    it said when the next round is drawn, not when its race starts (drawn, then join_seconds to join)."""
    from client_cli.commands.event import waiting_for
    from client_cli.wording import clock_time

    frame = _swiss_frame()
    me = frame.standings.lines[1]
    now = 1_000_000_000_000
    scheduled = msgspec.structs.replace(frame.event, status="registration", round=0, round_state="waiting",
                                        starts_at=now + 90_000, schedule=[])
    words, _ = waiting_for(scheduled, me, now)
    assert words == (f"waiting for 'Swiss Cup' to start by itself at {clock_time(now + 90_000)} "
                     "(in 1:30; 3 entrants)")
    between = msgspec.structs.replace(frame.event, round_state="done", next_at=now + 10_000, join_seconds=30)
    words, _ = waiting_for(between, me, now)
    assert words == f"waiting · Swiss Cup: round 2 of 2 starts at {clock_time(now + 40_000)} (in 0:40)"


async def test_event_watch_shows_a_swiss_rounds_pairing_and_its_bye_at_80_by_24(organised: LiveServer) -> None:
    """`thieves event watch` of a Swiss round under way, at 80×24: the pairing's racers with the points
    the round would give now, and the round's bye (it was not shown until the round was over)."""
    from redis_util import register

    from client_cli.event_watch import EventWatchApp

    auth = {"authorization": f"Bearer {TOKEN}"}
    status, event = await organised.http("POST", "/events", {
        "name": "Swiss Cup", "format": "swiss", "rounds": 1, "join_seconds": 4, "time_limit": 120,
        "deal_source": "random"}, headers=auth)
    assert status == 201, event
    keys = {name: await register(organised, name) for name in ("ann", "bob", "cy")}
    for key in keys.values():
        status, _ = await organised.http("POST", f"/events/{event['id']}/entrants",
                                         headers={"authorization": f"Bearer {key}"})
        assert status == 200
    status, _ = await organised.http("POST", f"/events/{event['id']}/start", headers=auth)
    assert status == 200
    drawn: list[Any] = []

    async def paired() -> bool:
        _, info = await organised.http("GET", f"/events/{event['id']}")
        drawn[:] = info["schedule"]
        return bool(drawn)

    await eventually(paired, "round 1 paired")
    pairing, bye = drawn[0]["heats"][0], drawn[0]["byes"][0]
    clients = []
    for account in pairing["entrants"]:
        client = await Client.connect(organised)
        await client.hello(pairing["code"], key=keys[account])
        clients.append(client)
    app = EventWatchApp(organised.url, event["id"])
    async with app.run_test(size=(80, 24)) as pilot:
        def shown() -> str:
            return str(app.query_one("#table").render())

        await eventually(lambda: "still racing" in shown(), "the round live in the watch")
        await pilot.pause()
        lines = shown().splitlines()
    assert [line.split()[:2] for line in lines[1:3]] == [["pairing", "1"], ["pairing", "1"]], lines
    assert all(line.endswith(" points now") for line in lines[1:3]), lines
    assert lines[3].split() == ["bye", bye, "a", "bye:", "no", "race", "this", "round"], lines
    assert all(len(line) <= 80 for line in lines)
    for client in clients:
        await client.close()
