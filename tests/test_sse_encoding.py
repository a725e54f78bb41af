"""The server's own encoding of one-line SSE events writes exactly what sse-starlette writes."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from sse_starlette.event import ServerSentEvent

from server.web.sse import encoded_event

_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40)


@given(data=_text, event=_text, event_id=st.none() | _text, retry=st.none() | st.integers(0, 10**6))
def test_the_same_bytes_as_sse_starlette(data: str, event: str, event_id: str | None, retry: int | None) -> None:
    assert encoded_event(data.encode(), event, event_id, retry) == \
        ServerSentEvent(data=data, event=event, id=event_id, retry=retry).encode()


def test_a_line_break_anywhere_still_splits_into_data_lines() -> None:
    assert encoded_event(b'{"a":\n1}\r\n2', "event", retry=5) == \
        b'event: event\r\ndata: {"a":\r\ndata: 1}\r\ndata: 2\r\nretry: 5\r\n\r\n'
