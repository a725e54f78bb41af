"""What the client says to a player, with no terminal or server: addresses, moves, limits, errors.

Issue #12: every line a player reads speaks the keys they press (1..0, w, f)
and plain words with the limit, never the wire notation or msgspec's text.
"""

from __future__ import annotations

import pytest

from client_cli.api import ServerAddressError, server_url
from client_cli.connection import websocket_url


# ------------------------------------------------------- server addresses
@pytest.mark.parametrize(
    ("text", "url"),
    [
        ("127.0.0.1:8000", "http://127.0.0.1:8000"),
        ("localhost:9000/", "http://localhost:9000"),
        ("http://127.0.0.1:8000", "http://127.0.0.1:8000"),
        ("https://race.example/", "https://race.example"),
        ("ws://h:1/ws", "http://h:1"),
        ("wss://race.example/thieves/ws", "https://race.example/thieves"),
        ("HTTP://Race.Example:80", "http://Race.Example:80"),
        ("[::1]:8000", "http://[::1]:8000"),
    ],
)
def test_one_parser_reads_every_spelling_of_a_server(text: str, url: str) -> None:
    assert server_url(text) == url


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("notaurl", "host:port"),
        ("", "empty"),
        ("ftp://h:1", "ftp://"),
        ("127.0.0.1:80x", "port"),
        ("127.0.0.1:0", "port"),
        ("http://", "no host"),
        ("http://:8000", "no host"),
    ],
)
def test_a_bad_server_address_is_refused_in_words(text: str, words: str) -> None:
    with pytest.raises(ServerAddressError, match=words):
        server_url(text)


def test_the_websocket_url_comes_from_the_same_parser() -> None:
    assert websocket_url("127.0.0.1:8000") == "ws://127.0.0.1:8000/ws"
    assert websocket_url("https://race.example/thieves/") == "wss://race.example/thieves/ws"
    with pytest.raises(ServerAddressError):
        websocket_url("notaurl")
