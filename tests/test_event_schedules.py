"""Scheduled and recurring events (docs/events.md, "Schedules") on real servers and a real Redis: an
event that starts itself at ``starts_at`` (check-in closing then), a series whose next occurrence is
made exactly once while two server processes race and one is killed, a cancelled occurrence and a
cancelled series, bad schedules refused with nothing stored, and a series on a Redis Cluster.

No test waits for a cron minute: a first start is a second or two ahead, and a later occurrence's
start is moved nearer in Redis (its ``scheduled_at``, with its version: tests/event_util.py)."""

from __future__ import annotations

import asyncio
import re
import shlex
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import msgspec
import pytest
import redis
from browser_util import open_browser, skip_reason
from event_util import write_event_fields
from redis_util import PROCESS_ARGS, LiveServer, eventually, live_server, register

from server.store.events import EventMeta, EventStore
from server.store.keys import EVENTS_ACTIVE, EVENTS_ALL, EventKeys, series_key
from server.store.scripts import source
from shared import protocol as p
from shared.schedules import LAST_MS, next_start, shown

ROOT = Path(__file__).parent.parent
ORGANISER = "organiser-secret-of-the-schedules"
AUTH = {"authorization": f"Bearer {ORGANISER}"}
EVERY_MINUTE = "* * * * *"


def _now() -> int:
    return int(time.time() * 1000)


async def _create(server: Any, **fields: Any) -> tuple[int, Any]:
    body = {"name": "Hourly", "rounds": 1, "join_seconds": 1, "break_seconds": 0, "time_limit": 30,
            "deal_source": "random", **fields}
    if isinstance(server, LiveServer):
        return await server.http("POST", "/events", body, headers=AUTH)
    return await asyncio.to_thread(server.http, "POST", "/events", body, AUTH)  # (a server run as a process)


async def _info(server: LiveServer, event: str) -> p.EventInfo:
    status, answer = await server.http("GET", f"/events/{event}")
    assert status == 200, answer
    return msgspec.convert(answer, p.EventInfo)


async def thieves(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    """A documented command, run as a subprocess."""
    import os

    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "client_cli.main", *args, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT, cwd=ROOT, env={**os.environ, **(env or {})})
    out, _ = await proc.communicate()
    return proc.returncode or 0, out.decode()


def _meta(sync: Any, event: str) -> EventMeta | None:
    raw = sync.hgetall(EventKeys(event).meta)
    return EventMeta.from_hash(raw) if raw else None


def _listed(sync: Any) -> list[str]:
    return sorted(e.decode() for e in sync.zrange(EVENTS_ALL, 0, -1))


@pytest.fixture
async def organised(redis_url: str) -> Any:
    async with live_server(redis_url, organiser_token=ORGANISER) as server:
        yield server


async def test_a_scheduled_event_starts_itself_and_closes_check_in_then(organised: LiveServer,
                                                                         sync: redis.Redis) -> None:
    server = organised
    keys = {n: await register(server, n) for n in ("ann", "bob")}
    starts = _now() + 60_000
    status, answer = await _create(server, starts_at=starts, check_in=True)
    assert status == 201, answer
    info = msgspec.convert(answer, p.EventInfo)
    assert (info.status, info.starts_at, info.series, info.repeat) == ("registration", starts, None, None)
    for name, key in keys.items():
        status, _ = await server.http("POST", f"/events/{info.id}/entrants", headers={"authorization": f"Bearer {key}"})
        assert status == 200
    status, _ = await server.http("POST", f"/events/{info.id}/check-in", headers={"authorization": f"Bearer {keys['ann']}"})
    assert status == 200
    assert (await _info(server, info.id)).status == "registration", "not before its time"
    write_event_fields(sync, info.id, scheduled_at=_now() + 300)  # its time brought near

    async def drawn() -> bool:
        now = await _info(server, info.id)
        return now.status == "running" and bool(now.schedule)
    await eventually(drawn, "the event to start by itself and draw round 1")
    started = await _info(server, info.id)
    assert started.schedule[0].heats[0].entrants == ["ann"], "bob did not check in: withdrawn at the start"
    status, answer = await server.http("GET", f"/events/{info.id}/standings")
    assert {line["name"]: line["withdrawn"] for line in answer["lines"]} == {"ann": False, "bob": True}
    status, answer = await server.http("POST", f"/events/{info.id}/start", headers=AUTH)
    assert (status, answer["code"]) == (409, "event_closed"), "it started once, by itself"
    status, answer = await server.http("POST", f"/events/{info.id}/cancel", headers=AUTH)
    assert (status, answer["code"]) == (409, "event_closed"), "an event under way is not cancelled"
    assert (await _info(server, info.id)).status == "running"


async def test_bad_schedules_are_refused_and_nothing_is_stored(organised: LiveServer, sync: redis.Redis) -> None:
    server = organised
    ahead = _now() + 60_000
    cases = [
        ({"starts_at": ahead, "repeat": "every hour"}, "not a five-field cron"),
        ({"starts_at": ahead, "repeat": "* * * * * *"}, "not a five-field cron"),
        ({"starts_at": ahead, "repeat": "61 * * * *"}, "not a five-field cron"),
        ({"starts_at": ahead, "repeat": "0 0 30 2 *"}, "never comes"),
        ({"starts_at": _now() - 1000}, "not in the future"),
        ({"repeat": EVERY_MINUTE}, "needs starts_at"),
        # Past the year 9999: no date to show (GET / answered 500 while such an event took entries).
        ({"starts_at": LAST_MS + 1}, "after the year 9999"),
        ({"starts_at": 2**53 - 1}, "after the year 9999"),
        ({"starts_at": 2**64}, "after the year 9999"),
        ({"starts_at": LAST_MS - 59_999, "repeat": "0 0 * * *"}, "next comes after the year 9999"),
    ]
    for fields, why in cases:
        status, answer = await _create(server, **fields)
        assert (status, answer["code"]) == (400, "bad_schedule") and why in answer["message"], (fields, answer)
    status, answer = await _create(server, starts_at=ahead, repeat="")
    assert (status, answer["code"]) == (400, "bad_field"), answer
    assert not [k for k in sync.keys("*") if k.startswith((b"event", b"series"))], "a refused event leaves nothing"
    assert _listed(sync) == []
    # The command says the same, and refuses a start it cannot read before asking the server.
    env = {"THIEVES_ORGANISER_TOKEN": ORGANISER}
    code, out = await thieves("event", "create", "Bad", "--starts-at", "+5", "--repeat", "every hour",
                              "--server", server.url, env=env)
    assert code == 1 and "five-field cron" in out, out
    code, out = await thieves("event", "create", "Bad", "--repeat", EVERY_MINUTE, "--server", server.url, env=env)
    assert code == 1 and "needs starts_at" in out, out
    code, out = await thieves("event", "create", "Bad", "--starts-at", "tomorrow", "--server", server.url, env=env)
    assert code == 2 and "neither +MINUTES nor an ISO time" in out, out
    assert _listed(sync) == []
    # README's line: +MINUTES from now.
    before = _now()
    code, out = await thieves("event", "create", "Hourly", "--format", "arena", "--starts-at", "+60", "--repeat",
                              "0 * * * *", "--server", server.url, env=env)
    assert code == 0 and "repeats '0 * * * *' (UTC)" in out, out
    made = _meta(sync, out.split()[1])
    assert made is not None and before + 3_600_000 <= made.scheduled_at <= _now() + 3_600_000
    assert (made.format, made.repeat, made.occurrence) == ("arena", "0 * * * *", 1)


async def test_an_event_at_the_last_time_a_schedule_may_name_is_shown_everywhere(organised: LiveServer) -> None:
    """The latest start taken (9999-12-31 23:59 UTC, :data:`LAST_MS`): every page and endpoint that shows
    the event answers (none may fail on its date while it takes entries), and it does not repeat past it."""
    server = organised
    status, answer = await _create(server, starts_at=LAST_MS)
    assert status == 201 and answer["starts_at"] == LAST_MS, answer
    event = answer["id"]
    page = await asyncio.to_thread(_page, server.url)
    assert f'data-starts-at="{LAST_MS}"' in page and 'starts <time datetime="9999-12-31T23:59:59Z">9999-12-31 23:59 UTC</time>' in page
    for path in ("/events", f"/events/{event}", f"/events/{event}/standings"):
        status, _ = await server.http("GET", path)
        assert status == 200, path
    assert 'id="event-status"' in await asyncio.to_thread(_page, server.url, f"/event/{event}")
    code, out = await thieves("event", "show", event, "--server", server.url)
    assert code == 0 and "starts by itself at 9999-12-31 23:59 UTC" in out, out


async def _occurrence(sync: Any, event: str, what: str, check: Any) -> EventMeta:
    found: list[EventMeta] = []

    def seen() -> bool:
        meta = _meta(sync, event)
        found[:] = [meta] if meta is not None else []
        return meta is not None and bool(check(meta))

    await eventually(seen, what)
    return found[0]


async def test_a_series_made_once_by_two_processes_cancelled_one_occurrence_and_then_whole(
        redis_url: str, sync: redis.Redis) -> None:
    """Two server processes race on every step of a series run from the command line: each occurrence
    that starts (or is cancelled) makes the next one once; an occurrence cancelled alone leaves the
    series going; the series cancelled makes no more."""
    async with live_server(redis_url, organiser_token=ORGANISER) as one, \
            live_server(redis_url, organiser_token=ORGANISER) as two:
        env = {"THIEVES_ORGANISER_TOKEN": ORGANISER}
        starts = datetime.fromtimestamp(_now() / 1000 + 600, tz=timezone.utc).isoformat(timespec="milliseconds")
        code, out = await thieves("event", "create", "Minutely Cup", "--rounds", "1", "--deal-source", "random",
                                  "--starts-at", starts, "--repeat", EVERY_MINUTE, "--server", one.url, env=env)
        assert code == 0 and "repeats '* * * * *' (UTC)" in out, out
        first = out.split()[1]
        series = first.rsplit("-", 1)[0]
        assert first == f"{series}-1" and f"occurrence 1 of series {series}" in out
        code, out = await thieves("event", "list", "--server", two.url)
        assert code == 0 and f"{first}  Minutely Cup" in out and "starts " in out and "repeats '* * * * *'" in out, out
        write_event_fields(sync, first, scheduled_at=_now() + 500)  # (not ten minutes from now: at once)

        started = await _occurrence(sync, first, "occurrence 1 to start and make occurrence 2",
                                    lambda m: m.status != "registration" and m.next_event)
        seen_at = _now()
        second = f"{series}-2"
        assert started.next_event == second
        made = _meta(sync, second)
        assert made is not None and made.status == "registration" and made.occurrence == 2
        # The cron's next time after the later of occurrence 1's scheduled start and when a process started
        # it (docs/events.md: a series that fell behind skips what it missed). It started by the time it was
        # seen: on a loaded machine that can be past the minute that followed its scheduled start.
        assert next_start(EVERY_MINUTE, made.scheduled_at - 1) == made.scheduled_at, "a time the cron names"
        assert (next_start(EVERY_MINUTE, started.scheduled_at) <= made.scheduled_at
                <= next_start(EVERY_MINUTE, max(started.scheduled_at, seen_at))), "the next minute"
        assert (made.name, made.rounds, made.deal_source, made.repeat) == ("Minutely Cup", 1, "random", EVERY_MINUTE)
        assert _listed(sync) == sorted([first, second]), "made once, by one of the two"
        code, out = await thieves("event", "show", second, "--server", one.url)
        assert code == 0 and f"starts by itself at {shown(made.scheduled_at)}" in out, out
        assert f"occurrence 2 of series {series}" in out
        code, out = await thieves("event", "show", first, "--server", one.url)
        assert code == 0 and f"next: {second}" in out, out
        page = await asyncio.to_thread(_page, one.url)
        assert f'data-starts-at="{made.scheduled_at}"' in page and f'data-series="{series}"' in page, \
            "the front page shows what is coming"

        # Occurrence 2's time brought near: it starts (once) and makes occurrence 3.
        write_event_fields(sync, second, scheduled_at=_now() + 500)
        await _occurrence(sync, second, "occurrence 2 to start and make occurrence 3",
                          lambda m: m.status != "registration" and m.next_event)
        third = f"{series}-3"
        assert _listed(sync) == sorted([first, second, third])
        assert sync.hget(series_key(series), "last") == b"3"
        # Occurrence 3 held ten minutes out (and so occurrence 4, the cron's next after it): every minute, it
        # could start by itself within seconds of being made, before the cancels below reach it (seen once on
        # a loaded machine: "only an event taking entries can be cancelled").
        write_event_fields(sync, third, scheduled_at=_now() + 600_000)

        # Occurrence 3 cancelled alone: the series goes on (occurrence 4 is made at once).
        code, out = await thieves("event", "cancel", third, "--server", two.url, env=env)
        assert code == 0 and "is cancelled" in out, out
        cancelled = await _occurrence(sync, third, "occurrence 4 made after 3 was cancelled", lambda m: m.next_event)
        assert cancelled.status == "cancelled" and cancelled.repeat == EVERY_MINUTE
        fourth = f"{series}-4"
        assert (_meta(sync, fourth) or cancelled).status == "registration"
        code, out = await thieves("event", "cancel", third, "--server", two.url, env=env)
        assert code == 1 and "started or ended" in out, "cancelled once"
        key = await register(one, "ann")
        status, answer = await one.http("POST", f"/events/{third}/entrants", headers={"authorization": f"Bearer {key}"})
        assert (status, answer["code"]) == (409, "event_closed"), "a cancelled event takes no entries"
        assert _meta(sync, third).entrants == 0  # type: ignore[union-attr]
        code, out = await thieves("event", "cancel", second, "--server", two.url, env=env)
        assert code == 1 and "started or ended" in out, "a running occurrence is not called off"

        # The whole series: occurrence 4 (not started) is called off, and no occurrence 5 is ever made.
        code, out = await thieves("event", "cancel", fourth, "--series", "--server", one.url, env=env)
        assert code == 0 and f"series {series} ended" in out, out
        await eventually(lambda: sync.zscore(EVENTS_ACTIVE, fourth) is None, "occurrence 4 off the runner's list")
        info = await _info(one, fourth)
        assert (info.status, info.repeat, info.next_event) == ("cancelled", None, None)
        assert [(await _info(two, occurrence)).repeat for occurrence in (first, second, third)] == [None] * 3, \
            "every occurrence of a cancelled series says it repeats no more"
        assert _meta(sync, f"{series}-5") is None and _listed(sync) == sorted([first, second, third, fourth])
        assert sync.hget(series_key(series), "cancelled") == b"1"
        code, out = await thieves("event", "show", fourth, "--server", one.url)
        assert code == 0 and "the series is cancelled: no further occurrences" in out, out
        # docs/events.md, "Endpoints": the event alone is not called off once it started (409); a series is
        # ended through any occurrence, one that started or is over too, and again changes nothing (200).
        status, answer = await one.http("POST", f"/events/{first}/cancel", headers=AUTH)
        assert (status, answer["code"]) == (409, "event_closed"), answer
        version = (await _info(one, fourth)).version
        status, answer = await one.http("POST", f"/events/{first}/cancel", {"series": True}, headers=AUTH)
        assert status == 200 and answer["status"] in ("running", "finished") and answer["repeat"] is None, answer
        assert (await _info(one, fourth)).version == version and _meta(sync, f"{series}-5") is None

        # A one-off event has no series to end.
        status, answer = await _create(one, starts_at=_now() + 60_000)
        assert status == 201
        status, answer = await one.http("POST", f"/events/{answer['id']}/cancel", {"series": True}, headers=AUTH)
        assert (status, answer["code"]) == (400, "bad_field") and "not one of a series" in answer["message"]
        status, answer = await one.http("POST", "/events/nope/cancel", headers=AUTH)
        assert (status, answer["code"]) == (404, "event_not_found")
        status, answer = await one.http("POST", f"/events/{first}/cancel")
        assert (status, answer["code"]) == (403, "organiser_required")


def _page(url: str, path: str = "/") -> str:
    import urllib.request

    with urllib.request.urlopen(url + path, timeout=10) as resp:
        return str(resp.read().decode())


async def check_the_next_occurrence_is_made_once(client: Any) -> None:
    """Many processes' runners make the occurrence after a started one at the same moment, each with
    its own idea of the time: one occurrence is stored, and one made later (an entrant already in) is
    never written over."""
    events = [EventStore(client) for _ in range(4)]
    req = p.EventCreate(name="Race me", starts_at=_now() + 60_000, repeat=EVERY_MINUTE, deal_source="random")
    first = EventMeta.create(req, "race0-1", _now(), series="race0", occurrence=1)
    await events[0].create(first, req)
    assert await events[0].step(first, "start_rounds", _now())
    started = await events[0].meta(first.id)
    assert started is not None

    def nxt(i: int) -> EventMeta:
        later = msgspec.structs.replace(req, starts_at=started.scheduled_at + 60_000 * (i + 1))
        return EventMeta.create(later, "race0-2", _now() + i, series="race0", occurrence=2)

    assert all(await asyncio.gather(*(store.series_next(started, nxt(i)) for i, store in enumerate(events))))
    made = await events[0].meta("race0-2")
    assert made is not None and made.scheduled_at in {nxt(i).scheduled_at for i in range(4)}
    await events[0].entry("race0-2", "ann", "ann", _now())
    kept = await events[0].meta("race0-2")
    assert kept is not None and kept.entrants == 1
    assert await events[1].series_next(started, nxt(3)), "a late process finds it made"
    assert await events[0].meta("race0-2") == kept, "made once: never written again"
    assert [e.account for e in await events[0].entrants("race0-2")] == ["ann"]
    # The series ended: a process that had read the event before gets no occurrence 3.
    await events[0].cancel(kept, _now(), series=True)
    third = EventMeta.create(req, "race0-3", _now(), series="race0", occurrence=3)
    assert not await events[2].series_next(kept, third)
    assert await events[0].meta("race0-3") is None


async def test_the_next_occurrence_is_made_once_by_racing_processes(redis_url: str) -> None:
    import redis.asyncio as aioredis

    client = aioredis.from_url(redis_url)
    try:
        await check_the_next_occurrence_is_made_once(client)
    finally:
        await client.aclose()


async def test_a_series_killed_after_its_start_the_other_process_makes_the_next_once(
        redis_url: str, sync: redis.Redis, tmp_path: Path) -> None:
    """The process that starts occurrence 1 is SIGKILLed right after its start step (its Redis traffic
    frozen there by a proxy), before it made occurrence 2; the other process makes it, once. Then two
    processes race over occurrence 2's start: occurrence 3 is made once."""
    from urllib.parse import urlparse

    from freeze_proxy import FreezeProxy
    from process_util import ServerProcess

    # The step script is loaded already, so the one call the proxy lets through is the start itself
    # (not a NOSCRIPT answer followed by a load and a retry).
    sync.script_load(source("event_step"))
    target = urlparse(redis_url)
    proxy = FreezeProxy(target.hostname or "127.0.0.1", target.port or 6379)
    doomed = ServerProcess(proxy.url, args=[*PROCESS_ARGS, "--organiser-token", ORGANISER],
                           log_path=tmp_path / "doomed.log")
    await asyncio.to_thread(doomed.start)
    try:
        proxy.trigger = b"start_rounds"  # the start's step goes through; nothing after it does
        status, answer = await _create(doomed, starts_at=_now() + 1500, repeat=EVERY_MINUTE)
        assert status == 201, answer
        first = answer["id"]
        series = answer["series"]
        await eventually(proxy.frozen.is_set, "the doomed process to take the start step")
        started = await _occurrence(sync, first, "occurrence 1 started", lambda m: m.status == "running")
        assert not started.next_event and _meta(sync, f"{series}-2") is None, "killed before making the next"
        async with live_server(redis_url, organiser_token=ORGANISER) as survivor:
            assert doomed.kill() == -9
            await _occurrence(sync, first, "the survivor to make occurrence 2", lambda m: m.next_event)
            assert _listed(sync) == sorted([first, f"{series}-2"])
            async with live_server(redis_url, organiser_token=ORGANISER) as other:
                assert other is not survivor
                write_event_fields(sync, f"{series}-2", scheduled_at=_now() + 500)
                await _occurrence(sync, f"{series}-2", "occurrence 2 to start and make occurrence 3",
                                  lambda m: m.status != "registration" and m.next_event)
                assert _listed(sync) == sorted([first, f"{series}-2", f"{series}-3"])
                assert sync.hget(series_key(series), "last") == b"3"
    finally:
        doomed.close()
        proxy.close()


async def test_a_series_on_a_redis_cluster(empty_cluster: Any) -> None:
    """The series, its occurrences and the cancel script share one hash tag: one slot on a cluster."""
    import redis.asyncio as aioredis

    rc = aioredis.RedisCluster.from_url(empty_cluster.url)
    try:
        await check_the_next_occurrence_is_made_once(rc)
        async with live_server(empty_cluster.urls[0], redis_cluster=True, organiser_token=ORGANISER) as a, \
                live_server(empty_cluster.urls[1], redis_cluster=True, organiser_token=ORGANISER) as b:
            status, answer = await _create(a, starts_at=_now() + 1000, repeat=EVERY_MINUTE)
            assert status == 201, answer
            first, series = answer["id"], answer["series"]

            async def made() -> bool:
                return (await _info(b, first)).next_event == f"{series}-2"
            await eventually(made, "occurrence 2 made on the cluster")
            assert (await _info(a, f"{series}-2")).status == "registration"
            assert await rc.exists(EventKeys(f"{series}-3").meta) == 0
            # Ended through the occurrence under way: it plays on, the next one is called off.
            status, answer = await b.http("POST", f"/events/{first}/cancel", {"series": True}, headers=AUTH)
            assert status == 200 and answer["status"] != "cancelled" and answer["repeat"] is None, answer
            assert (await _info(a, f"{series}-2")).status == "cancelled"
            assert await rc.hget(series_key(series), "cancelled") == b"1"
    finally:
        await rc.aclose()


DOC_SERIES = "5c1f0a9e3b2d"
DOC_START = "2026-12-24T18:00Z"
_TIME = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC")


def _documented_example() -> list[tuple[list[str], list[str]]]:
    """The commands of docs/events.md's worked example of "Schedules", each with the lines it prints
    there ("..." lines left out)."""
    text = (ROOT / "docs" / "events.md").read_text()
    section = text.split("## Schedules", 1)[1].split("\n## ", 1)[0]
    out: list[tuple[list[str], list[str]]] = []
    for block in re.findall(r"```\n(.*?)```", section, re.S):
        for line in block.splitlines():
            if line.startswith("$ thieves "):
                out.append((shlex.split(line[2:])[1:], []))
            elif out and not line.startswith("$") and line != "...":
                out[-1][1].append(line)
    return out


def _same(line: str, series: str) -> str:
    return _TIME.sub("TIME", line.replace(series, "S"))


async def test_the_documented_schedule_example(organised: LiveServer, sync: redis.Redis) -> None:
    """docs/events.md's worked example, command by command, as a subprocess: its output as documented
    (the series id and times aside); its first occurrence brought forward in Redis so as not to wait
    for Christmas Eve."""
    example = _documented_example()
    assert [argv[:2] for argv, _ in example] == [["event", "create"], ["event", "cancel"], ["event", "show"],
                                                 ["event", "cancel"]]
    tomorrow = datetime.fromtimestamp(_now() / 1000 + 86_400, tz=timezone.utc).strftime("%Y-%m-%dT18:00Z")
    env = {"THIEVES_ORGANISER_TOKEN": ORGANISER}
    series = ""
    for i, (argv, printed) in enumerate(example):
        argv = [a.replace(DOC_START, tomorrow).replace(DOC_SERIES, series or DOC_SERIES) for a in argv]
        if i == 1:  # the first occurrence's start, brought near: it starts and makes the second
            write_event_fields(sync, f"{series}-1", scheduled_at=_now() + 300)
            await _occurrence(sync, f"{series}-1", "occurrence 1 to start and make 2", lambda m: m.next_event)
        if i == 2:
            await _occurrence(sync, f"{series}-2", "occurrence 3 made", lambda m: m.next_event)
        code, out = await thieves(*argv, "--server", organised.url, env=env)
        assert code == 0, (argv, out)
        if i == 0:
            series = out.split()[1].rsplit("-", 1)[0]
            assert f"starts {shown(_meta(sync, f'{series}-1').scheduled_at)}" in out  # type: ignore[union-attr]
            assert shown(_meta(sync, f"{series}-1").scheduled_at).endswith("18:00 UTC")  # type: ignore[union-attr]
        shown_lines = [_same(line, series) for line in out.splitlines()]
        for line in printed:
            assert _same(line, DOC_SERIES) in shown_lines, (line, out)
    third = _meta(sync, f"{series}-3")
    second = _meta(sync, f"{series}-2")
    assert third is not None and second is not None and second.status == "cancelled"
    assert third.scheduled_at == next_start("0 * * * *", second.scheduled_at), "the hour after the cancelled one"
    await eventually(lambda: sync.zscore(EVENTS_ACTIVE, f"{series}-3") is None, "occurrence 3 off the list")
    assert third.status == "cancelled" and third.repeat == "", "the series ended with it"
    assert _meta(sync, f"{series}-4") is None, "the series ended"


@pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")
async def test_the_event_page_counts_down_to_the_start_and_says_cancelled(organised: LiveServer) -> None:
    status, answer = await _create(organised, starts_at=_now() + 3_600_000)
    assert status == 201
    event = answer["id"]
    async for context in open_browser():
        page: Any = await context.new_page()
        await page.goto(f"{organised.url}/event/{event}")
        await page.wait_for_selector("#conn[data-state=live]")
        await page.wait_for_function("() => /^starts in (59|60):\\d\\d$/.test(document.getElementById('clock').textContent)")
        status, _ = await organised.http("POST", f"/events/{event}/cancel", headers=AUTH)
        assert status == 200
        await page.wait_for_selector("#event-status[data-status=cancelled]")
        assert await page.text_content("#event-status") == "cancelled"
        assert await page.text_content("#clock") == ""
