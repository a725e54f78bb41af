"""The one outbox and its slow-reader rule (server/race/outbox.py), without sockets: what the WebSocket
connection, the SSE race stream and an event feed's watchers all queue their frames in."""

from __future__ import annotations

import asyncio

from server.race.outbox import Outbox
from shared import protocol as p


def test_frames_wait_in_order_and_the_end_comes_after_them() -> None:
    box = Outbox(limit=3)
    assert box.put(b"a") and box.put(b"bc")
    assert (len(box), box.size) == (2, 3)
    box.end(p.CloseCode.NORMAL)
    assert not box.put(b"late"), "nothing is taken after the end"
    assert [box.pop(), box.pop(), box.pop()] == [b"a", b"bc", None]
    assert box.ended and not box.dropped and box.close_code is p.CloseCode.NORMAL and box.size == 0


def test_a_reader_limit_frames_behind_is_cut_loose_with_nothing_stale_left() -> None:
    box = Outbox(limit=2)
    assert box.put(b"1") and box.put(b"2")
    assert not box.put(b"3"), "the frame over the bound cuts the reader"
    assert box.dropped and box.ended and len(box) == 0 and box.close_code is p.CloseCode.SLOW_READER
    assert not box.put(b"4") and box.pop() is None


def test_the_byte_bound_counts_what_the_transport_holds_too() -> None:
    box = Outbox(limit=100, byte_limit=10)
    assert box.put(b"12345")
    assert not box.full(5) and box.full(6), "queued bytes plus the transport's, against the bound"
    assert not box.put(b"x", waiting=6)
    assert box.dropped


def test_a_close_that_cannot_wait_drops_the_queue_without_calling_the_reader_slow() -> None:
    box = Outbox(limit=5)
    box.put(b"a")
    box.cut(p.CloseCode.TOO_MANY_ERRORS)
    assert box.ended and not box.dropped and len(box) == 0 and box.close_code is p.CloseCode.TOO_MANY_ERRORS


async def test_a_reader_waits_for_the_next_frame_and_sees_the_end() -> None:
    box = Outbox(limit=5)
    got: list[bytes | None] = []

    async def read() -> None:
        while True:
            frame = await box.next()
            got.append(frame)
            if frame is None:
                return

    reader = asyncio.ensure_future(read())
    await asyncio.sleep(0)
    box.put(b"a")
    box.put(b"b")
    box.end()
    await asyncio.wait_for(reader, 5)
    assert got == [b"a", b"b", None]
