"""The SSE stream of a race (GET /races/{race}/events) without a browser: real uvicorn, real Redis, httpx.

What a browser relies on: the ids are the table versions, a reconnect
with ``Last-Event-ID`` gets only what it missed, and nothing a spectator
may not see (a board, the deal) comes before the end.
"""

from __future__ import annotations

import httpx
from redis_util import LiveServer, eventually, start_race
from web_util import SseTable, new_race, race_version, server_lines, sse

from server.web.sse import RETRY_MS, SseSpectator
from shared import protocol as p


async def test_a_spectator_gets_the_welcome_then_every_change_with_the_version_as_id(server: LiveServer) -> None:
    race = await new_race(server, start=False)
    async with sse(server, race.id) as stream:
        welcome = await stream.next()
        assert welcome.event == "welcome" and welcome.retry == RETRY_MS
        assert welcome.data["role"] == "spectator" and welcome.data["view"] is None
        assert not welcome.data["resumed"] and welcome.id == str(welcome.data["version"])
        assert {e["name"] for e in welcome.data["progress"]} == {"ann", "bob", "cy"}
        full = await stream.until("progress")
        assert full.data["full"] and full.id == str(full.data["version"])

        await race.players[0].send(p.Start(creator_token=race.created.creator_token))
        countdown = await stream.until("countdown")
        assert countdown.id is None, "a countdown's version is not the table's: it carries no id"
        assert countdown.data["view"] is None, "spectators never get a board"
        await race.move(0, 3)
        await race.move(1, 1)
        version = await race_version(server, race.id)
        events = await stream.until_version(version)
        ids = [int(e.id) for e in events if e.id is not None]
        assert ids == sorted(ids) and ids[-1] == version
        assert all(e.event in ("progress", "countdown") for e in events)
        assert stream.table.lines == await server_lines(server, race.id)
    await race.close()


async def test_a_reconnect_with_last_event_id_gets_only_the_lines_that_changed(server: LiveServer) -> None:
    race = await new_race(server)
    await race.move(0, 2)
    table = SseTable()
    async with sse(server, race.id, table=table) as stream:
        await stream.until_version(await race_version(server, race.id))
    assert table.lines == await server_lines(server, race.id)
    held = table.last_id
    assert held == str(table.version)

    await race.move(1, 19)  # bob gets cards home and overtakes ann: two lines change, cy's does not
    async with sse(server, race.id, last_event_id=held, table=table) as stream:
        welcome = await stream.next()
        assert welcome.event == "welcome" and welcome.data["resumed"]
        assert welcome.id == held and welcome.data["progress"] == []
        replay = await stream.next()
        assert replay.event == "progress" and not replay.data["full"]
        assert {e["seat"] for e in replay.data["players"]} == {0, 1}, "cy's line did not change: not resent"
        assert int(replay.id) == await race_version(server, race.id)
        assert table.lines == await server_lines(server, race.id)
        assert table.lines[1]["rank"] == 1

        await race.move(2, 1)  # and the resumed stream goes on live
        await stream.until_version(await race_version(server, race.id))
        assert table.lines == await server_lines(server, race.id)
    await race.close()


async def test_a_stream_that_missed_the_start_gets_the_countdown_then_the_table(server: LiveServer) -> None:
    race = await new_race(server, start=False)
    table = SseTable()
    async with sse(server, race.id, table=table) as stream:
        await stream.until("progress")
    await start_race(server, race.created.creator_token, race.players)
    await race.move(2, 1)
    async with sse(server, race.id, last_event_id=table.last_id, table=table) as stream:
        assert (await stream.next()).data["resumed"]
        countdown = await stream.next()
        assert countdown.event == "countdown" and countdown.data["view"] is None
        replay = await stream.next()
        assert replay.event == "progress" and {e["seat"] for e in replay.data["players"]} == {0, 1, 2}
    assert table.lines == await server_lines(server, race.id)
    await race.close()


async def test_the_page_version_in_the_query_resumes_too_and_the_header_wins(server: LiveServer) -> None:
    race = await new_race(server)
    version = await race_version(server, race.id)
    await race.move(0, 1)
    async with sse(server, race.id, query=f"?last_version={version}") as stream:
        welcome = await stream.next()
        assert welcome.data["resumed"] and welcome.id == str(version)
    async with sse(server, race.id, last_event_id="999999", query=f"?last_version={version}") as stream:
        welcome = await stream.next()
        assert not welcome.data["resumed"], "a version above the race's gets a snapshot"
        assert welcome.data["version"] == await race_version(server, race.id)
    await race.close()


async def test_no_board_and_no_deal_before_the_end_then_the_results_and_the_stream_ends(server: LiveServer) -> None:
    race = await new_race(server)
    raw = []
    async with sse(server, race.id) as stream:
        raw.append((await stream.next()).raw)
        await race.move(0, 5)
        await race.move(1, 2)
        raw += [e.raw for e in await stream.until_version(await race_version(server, race.id))]
        await race.end(server)
        while True:
            ev = await stream.next()
            if ev.event == "finished":
                break
            raw.append(ev.raw)
        before = "\n".join(raw)
        assert '"tableau"' not in before and '"deal"' not in before and '"salt"' not in before
        assert ev.id is None
        assert ev.data["results"]["deal"] == 2 and ev.data["deal_text"] == "2"
        assert [r["name"] for r in ev.data["results"]["records"]] == ["ann", "bob", "cy"]
        try:
            extra = await stream.next()
        except EOFError:
            extra = None
        assert extra is None and stream.ended, "the stream closes after finished"
    # A finished race's stream: welcome, finished, end.
    async with sse(server, race.id) as stream:
        assert (await stream.next()).event == "welcome"
        assert (await stream.until("finished")).data["deal_text"] == "2"
    await race.close()


async def test_typed_errors_for_an_unknown_race_and_a_bad_last_event_id(server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=server.url) as http:
        answer = await http.get("/races/NOPE99/events")
        assert answer.status_code == 404 and answer.json()["code"] == "race_not_found"
        race = await new_race(server, start=False)
        answer = await http.get(f"/races/{race.id}/events", headers={"last-event-id": "soon"})
        assert answer.status_code == 400 and answer.json()["code"] == "bad_field"
        for version in ("%EF%BC%93", "%D9%A3", "+3", "3_0", "-1"):  # a version is ASCII digits only
            answer = await http.get(f"/races/{race.id}/events?last_version={version}")
            assert answer.status_code == 400 and answer.json()["code"] == "bad_field", version
    await race.close()


async def test_a_closed_stream_leaves_the_hub(server: LiveServer) -> None:
    race = await new_race(server)
    hub = server.service.hubs[race.id]
    async with sse(server, race.id) as stream:
        await stream.next()
        assert any(isinstance(c, SseSpectator) for c in hub.conns)
    await eventually(lambda: not any(isinstance(c, SseSpectator) for c in hub.conns), "the stream to leave the hub")

    async def given_back() -> bool:  # the race's three WebSockets and this request
        return (await server.http("GET", "/health"))[1]["connections"] == 4

    await eventually(given_back, "the stream's place at the edge to be given back")
    await race.close()


def test_a_stream_too_slow_to_take_its_events_is_cut_loose_to_resume_later() -> None:
    listener = SseSpectator(limit=3)
    for n in range(3):
        listener.push(b"event %d" % n)
    assert not listener.ended
    listener.push(b"one too many")
    assert listener.dropped and listener.ended and len(listener.outbox) == 0, "nothing stale is written after the cut"
    listener.push(b"later")
    assert len(listener.outbox) == 0


def test_hub_frames_become_events_and_the_end_ends_the_stream() -> None:
    listener = SseSpectator(limit=10)
    progress = p.encode(p.Progress(version=9, server_time=1, race_status="running", players=[]))
    listener.send(progress)
    listener.send(progress)  # the same bytes object for every listener: converted once
    listener.send(p.encode(p.Pong(nonce=1, server_time=1)))  # nothing a spectator's browser needs
    assert [c.split(b"\r\n")[:2] for c in _queued(listener)] == [[b"id: 9", b"event: progress"]] * 2
    listener.send(p.encode(p.error(p.ErrorCode.RACE_NOT_FOUND, "removed")))
    assert listener.ended and _queued(listener)[-1].split(b"\r\n")[:2] == [b"event: race_error", b'data: {"type":'
                                                                      b'"error","code":"race_not_found",'
                                                                      b'"message":"removed","ref":null}']


async def test_a_stream_from_another_server_process_sees_the_moves_made_through_the_first(
        server: LiveServer, redis_url: str) -> None:
    from redis_util import live_server

    race = await new_race(server)
    async with live_server(redis_url) as other:
        async with sse(other, race.id) as stream:
            await stream.next()
            await race.move(0, 4)
            await race.move(1, 2)
            await stream.until_version(await race_version(server, race.id))
            assert stream.table.lines == await server_lines(server, race.id)
    await race.close()


def _queued(listener: SseSpectator) -> list[bytes]:
    """The events the stream has queued, taken out of it."""
    taken = []
    while (chunk := listener.outbox.pop()) is not None:
        taken.append(chunk)
    return taken
