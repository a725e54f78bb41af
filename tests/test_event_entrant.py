"""The entrant's side of an event against a real server: what ``thieves event join`` says for each thing
the server's typed answer can mean, a heat's lobby (the event, round, heat, start time, rated), and
``thieves event watch`` at 80×24 (who is still racing first, every row used, paging, an arena's races,
an unknown event)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import msgspec
import pytest
from redis_util import Client, LiveServer, eventually, register
from test_event_cli import thieves
from test_events import AUTH, WIN, _create, _enter, _info, _round_open, events_server  # noqa: F401 (a fixture)

from client_cli.event_watch import EventWatchApp
from client_cli.play_app import PlayApp
from client_cli.textshot import screen_text
from shared import protocol as p

SIZE = (80, 24)
RANDOM = {"deal_source": "random"}
"""Secret random deals: no solving for a checked one (the tests look at the client, not at the deal)."""


async def create(server: LiveServer, **fields: Any) -> p.EventInfo:
    return await _create(server, **{**RANDOM, **fields})


async def standings_of(server: LiveServer, event: str) -> p.EventStandings:
    status, answer = await server.http("GET", f"/events/{event}/standings")
    assert status == 200, answer
    return msgspec.convert(answer, p.EventStandings)


async def start(server: LiveServer, event: str) -> None:
    status, answer = await server.http("POST", f"/events/{event}/start", headers=AUTH)
    assert status == 200, answer


def player(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """The following commands run on ``name``'s machine (a config directory of its own)."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / name))


# ---------------------------------------------------------------- thieves event join


async def test_join_says_what_the_server_did_entered_already_late_or_over(
        events_server: LiveServer, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        tmp_path: Path) -> None:
    url = events_server.url
    event = (await create(events_server, name="Spring Cup", rounds=2, time_limit=p.MIN_TIME_LIMIT)).id
    player(tmp_path, monkeypatch, "ann")
    assert (await thieves(capsys, "register", "ann", "--server", url))[0] == 0
    code, out, _ = await thieves(capsys, "event", "join", event, "--server", url)
    assert (code, out) == (0, f"ann entered 'Spring Cup' ({event}): plays from round 1 of 2\n")
    version = (await _info(events_server, event)).version
    code, out, _ = await thieves(capsys, "event", "join", event, "--server", url)
    assert code == 0 and out == (f"ann is already entered in 'Spring Cup' ({event}): nothing changed; "
                                 "plays from round 1 of 2\n")
    assert (await _info(events_server, event)).version == version, "a second entry changes nothing"

    await start(events_server, event)
    await _round_open(events_server, event, 1)
    player(tmp_path, monkeypatch, "bob")
    assert (await thieves(capsys, "register", "bob", "--server", url))[0] == 0
    code, out, _ = await thieves(capsys, "event", "join", event, "--server", url)
    assert (code, out) == (0, f"bob entered 'Spring Cup' ({event}): plays from round 2 of 2\n"), "a late entry"

    async def over() -> bool:
        return (await _info(events_server, event)).status == "finished"
    await eventually(over, "both rounds played out (nobody joins: no-shows)")
    code, out, err = await thieves(capsys, "event", "join", event, "--server", url)
    assert (code, out, err) == (1, "", "thieves event join: the event is over: its final standings stand\n")
    player(tmp_path, monkeypatch, "cy")
    assert (await thieves(capsys, "register", "cy", "--server", url))[0] == 0
    code, _, err = await thieves(capsys, "event", "join", event, "--server", url)
    assert (code, err) == (1, "thieves event join: the event is over: its final standings stand\n")


async def test_join_without_late_entry_is_refused_once_the_event_runs(
        events_server: LiveServer, capsys: pytest.CaptureFixture[str]) -> None:
    event = (await create(events_server, late_entry=False)).id
    await start(events_server, event)
    assert (await thieves(capsys, "register", "dan", "--server", events_server.url))[0] == 0
    code, out, err = await thieves(capsys, "event", "join", event, "--server", events_server.url)
    assert (code, out) == (1, "") and err.startswith("thieves event join: the event takes no more entries")


async def test_join_resumes_an_arena_entrant_paused_for_missing_a_race(
        events_server: LiveServer, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        tmp_path: Path) -> None:
    url = events_server.url
    event = (await create(events_server, name="Blitz", format="arena", duration=600)).id
    await _enter(events_server, event, await register(events_server, "bob"))
    player(tmp_path, monkeypatch, "ann")
    assert (await thieves(capsys, "register", "ann", "--server", url))[0] == 0
    code, out, _ = await thieves(capsys, "event", "join", event, "--server", url)
    assert (code, out) == (0, f"ann entered 'Blitz' ({event}): paired from the start\n")
    await start(events_server, event)

    async def paused() -> bool:
        return {line.status for line in (await standings_of(events_server, event)).lines} == {"paused"}
    await eventually(paused, "both missed their race (nobody joined it) and are paused")
    code, out, _ = await thieves(capsys, "event", "join", event, "--server", url)
    assert (code, out) == (0, f"ann is back in 'Blitz' ({event}): paused for missing a race, now paired again "
                              "as soon as a race is free\n")
    lines = {line.account: line.status for line in (await standings_of(events_server, event)).lines}
    assert lines == {"ann": "waiting", "bob": "paused"}
    code, out, _ = await thieves(capsys, "event", "join", event, "--server", url)
    assert code == 0 and out.startswith("ann is already entered in 'Blitz'")


async def test_the_entry_endpoints_answer_a_typed_outcome(events_server: LiveServer) -> None:
    """POST /events/{id}/entrants, /check-in and DELETE .../entrants/{name} say what they did (EventEntry.outcome)."""
    event = (await create(events_server, check_in=True)).id
    key = await register(events_server, "eve")
    auth = {"authorization": f"Bearer {key}"}

    async def outcome(method: str, path: str) -> str:
        status, answer = await events_server.http(method, f"/events/{event}/{path}", headers=auth)
        assert status == 200, answer
        return str(msgspec.convert(answer, p.EventEntry).outcome)
    assert await outcome("POST", "entrants") == "entered"
    assert await outcome("POST", "entrants") == "already_entered"
    assert await outcome("POST", "check-in") == "checked_in"
    assert await outcome("DELETE", "entrants/eve") == "withdrawn"
    assert await outcome("POST", "entrants") == "entered", "entering again after a withdrawal"


# ---------------------------------------------------------------- a heat's lobby


async def test_a_heats_lobby_names_the_event_round_heat_and_start_and_says_rated(events_server: LiveServer) -> None:
    info = await create(events_server, name="Rated Cup", rounds=2, rated=True, join_seconds=120)
    keys = {name: await register(events_server, name) for name in ("ann", "bob")}
    for key in keys.values():
        await _enter(events_server, info.id, key)
    await start(events_server, info.id)
    heat = (await _round_open(events_server, info.id, 1)).heats[0]
    app = PlayApp(events_server.url, heat.code, None, key=keys["ann"])
    async with app.run_test(size=SIZE) as pilot:
        await eventually(lambda: app.state.info is not None and app.state.seat is not None, "ann in the lobby")
        await pilot.pause()
        screen = screen_text(app)
    assert app.state.info is not None and app.state.info.title == "Rated Cup · round 1 of 2 · heat 1 of 1"
    assert app.state.info.scheduled_at is not None
    assert "Rated Cup · round 1 of 2 · heat 1 of 1" in screen
    assert "Rated: the result changes your rating." in screen
    assert "The server starts the race at " in screen and "in 1:5" in screen  # 120 s away: 1:59 or 1:58
    assert "creator" not in screen and " Ready" not in screen, "nobody's ready starts a heat"


# ---------------------------------------------------------------- thieves event watch


async def test_watch_of_an_unknown_event_is_one_line_and_exit_1(events_server: LiveServer,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = await thieves(capsys, "event", "watch", "nosuch", "--server", events_server.url)
    assert (code, out, err) == (1, "", "thieves event watch: no event has that id\n")


async def test_watch_at_80x24_puts_who_is_still_racing_first_and_pages_the_rest(events_server: LiveServer) -> None:
    """Fourteen entrants in one heat: thirteen play two moves (a card home) and give up, zed races on with
    none. The round's live lines used to be ranked by matchpoints and cut at five, hiding zed."""
    names = [f"p{i:02d}" for i in range(13)] + ["zed"]
    info = await create(events_server, name="Big Cup", rounds=1, heat_size=16, deals=[WIN["deal"]], time_limit=600)
    keys = {name: await register(events_server, name) for name in names}
    for name in names:
        await _enter(events_server, info.id, keys[name])
    await start(events_server, info.id)
    heat = (await _round_open(events_server, info.id, 1)).heats[0]

    async def seat(name: str) -> Client:
        c = await Client.connect(events_server)
        await c.hello(heat.code, key=keys[name])
        return c
    clients = await asyncio.gather(*(seat(n) for n in names))
    await asyncio.gather(*(c.expect(p.Countdown, timeout=30) for c in clients))

    async def one_card_then_give_up(c: Client) -> None:
        for text in WIN["moves"][:2]:
            assert isinstance(await c.move(text), p.Ack)
        await c.give_up()
    await asyncio.gather(*(one_card_then_give_up(c) for c in clients[:-1]))

    app = EventWatchApp(events_server.url, info.id)
    async with app.run_test(size=SIZE) as pilot:
        def live_shown() -> bool:
            return app.frame is not None and sum(line.status == "gave_up" for line in app.frame.live) == 13
        await eventually(live_shown, "the watch shows the thirteen who gave up")
        await pilot.pause()
        rows = screen_text(app).splitlines()
        top = header_height(rows, "round 1 live: 1 of 14 still racing")
        assert "zed" in rows[top + 1] and "racing" in rows[top + 1], "the one still racing comes first"
        body = rows[top:23]  # below the event's lines, above the footer
        assert all(row.strip() for row in body), "no row left blank while there is more to show:\n" + "\n".join(rows)
        assert "pgdn more" in rows[23]
        first = "\n".join(body)
        await pilot.press("pagedown")
        await pilot.pause()
        later = "\n".join(screen_text(app).splitlines()[top:23])
        assert later != first and "zed" in later, "the standings below (zed is last) come into view"
    for c in clients:
        await c.close()


def header_height(rows: list[str], first: str) -> int:
    """The rows of the event's summary and clock above the body, whose first row starts with ``first``:
    two or three (the summary is wrapped to the width, not cut), each within 80 columns."""
    top = next(i for i, row in enumerate(rows) if row.startswith(first))
    assert top in (2, 3) and all(len(row) <= 80 for row in rows[:top]), rows[:top]
    return top


async def test_watch_shows_an_arenas_races_under_way(events_server: LiveServer) -> None:
    info = await create(events_server, name="Blitz", format="arena", duration=600, join_seconds=60)
    for name in ("ann", "bob"):
        await _enter(events_server, info.id, await register(events_server, name))
    await start(events_server, info.id)
    race = (await _round_open(events_server, info.id, 1)).heats[0]
    app = EventWatchApp(events_server.url, info.id)
    async with app.run_test(size=SIZE) as pilot:
        await eventually(lambda: app.frame is not None and app.frame.event.schedule != [], "the pairing shown")
        await pilot.pause()
        rows = screen_text(app).splitlines()
    top = header_height(rows, "racing now: 1 race")
    assert rows[top + 1].split()[:4] == [race.code, "ann", "vs", "bob"] and "starts in 0:5" in rows[top + 1]


def test_event_play_says_what_it_waits_for_and_prints_a_line_only_when_that_changes() -> None:
    from client_cli.commands.event import waiting_for
    from client_cli.wording import clock_time

    now = 1_000_000_000_000
    heat = p.EventHeat(heat=1, race="r1", code="CODE01", entrants=["ann", "bob"])
    base = p.EventInfo(id="e", name="Open", format="swiss", variant="forty-thieves", rounds=3, heat_size=2,
                       time_limit=60, join_seconds=30, break_seconds=10, rated=False, late_entry=True,
                       status="running", created_at=1, entrants=3, round=1, round_state="open",
                       schedule=[p.EventRound(round=1, starts_at=now + 25_000, heats=[heat], byes=["cy"])])
    line = p.EventStandingLine(rank=1, account="cy", name="cy", matchpoints=0, home=0, time_ms=0)
    words, key = waiting_for(base, line, now)
    assert words == f"a bye in round 1 of 3 (no race for you) · Open: round 1 of 3 starts at {clock_time(now + 25_000)} (in 0:25): join your pairing (thieves play CODE)"
    assert waiting_for(base, line, now + 5_000)[1] == key, "the countdown alone prints no new line"
    late = msgspec.structs.replace(base, schedule=[msgspec.structs.replace(base.schedule[0], byes=[])])
    assert waiting_for(late, line, now)[0].startswith("you play from the next round (you entered late) · Open: ")
    done = msgspec.structs.replace(base, round_state="done", next_at=now + 10_000)
    words, later = waiting_for(done, line, now)
    assert words == f"waiting · Open: round 2 of 3 starts at {clock_time(now + 40_000)} (in 0:40)" and later != key
    opening = msgspec.structs.replace(base, status="registration", round=0, round_state="waiting", schedule=[])
    assert waiting_for(opening, line, now)[0] == "waiting for the organiser to start 'Open' (3 entrants)"
    paired = msgspec.structs.replace(base, pairing=True, ends_at=now + 600_000)
    waiting = msgspec.structs.replace(line, status="waiting", races=2, points=2)
    assert waiting_for(paired, waiting, now)[0] == \
        f"waiting to be paired · Open: pairing until {clock_time(now + 600_000)} (10:00 more)"
