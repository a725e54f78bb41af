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


# ------------------------------------------------------------------ moves
def test_moves_are_named_by_the_keys_that_play_them() -> None:
    from client_cli.wording import move_text_words, reject_words

    assert move_text_words("hj") == "8 → 0"
    assert move_text_words("bF") == "2 → f (home)"
    assert move_text_words("WF") == "w (waste) → f (home)"
    assert move_text_words("3ab") == "1 → 2 (3 cards)"
    assert move_text_words("S") == "space (draw)" and move_text_words("U") == "u (undo)"
    assert reject_words("hj", "not_one_rank_lower") == "8 → 0: a card must be exactly one rank lower than the card it goes on"
    assert reject_words("bF", "foundation_not_ready") == "2 → f (home): no foundation of that suit is ready for the card"
    assert reject_words("U", "nothing_to_undo") == "u (undo): there is no move to undo"
    assert reject_words(None, "rate_limited") == "too many frames: slow down"


# ----------------------------------------------------------------- limits
def test_limits_come_from_the_protocol_schema() -> None:
    from client_cli.wording import field_problem
    from shared import protocol as p

    seats = p.SeatCount.__metadata__[0]  # type: ignore[attr-defined]
    name = p.Name.__metadata__[0]  # type: ignore[attr-defined]
    assert field_problem(p.Create, "seats", 0, "--seats") == f"--seats must be from {seats.ge} to {seats.le}, not 0"
    assert field_problem(p.Create, "seats", 3, "--seats") is None
    assert field_problem(p.Hello, "name", "x" * 40, "--name") == (
        f"--name must be {name.min_length} to {name.max_length} characters long (this one has 40)"
    )
    assert field_problem(p.Hello, "name", "", "--join") == "--join must be 1 to 32 characters long (this one has 0)"
    assert field_problem(p.Create, "deal", 0, "--deal").startswith("--deal must be from 1 to ")


@pytest.mark.parametrize(
    ("code", "message", "words"),
    [
        ("bad_field", "hello: Expected `str` of length <= 32 - at `$.name`", "a player name must be 1 to 32 characters long"),
        ("bad_field", "Expected `int` >= 1 - at `$.seats`", "the number of seats must be at least 1"),
        ("bad_field", "create: Expected `int` >= 1 - at `$.seats`", "the number of seats must be from 1 to 500"),
        ("bad_field", "create: Expected `int`, got `str` - at `$.time_limit`", "the time limit (seconds) must be a whole number"),
        ("bad_field", "create: Invalid enum value 'x' - at `$.start_mode`", "the start mode must be one of all-ready, creator"),
        ("bad_field", "hello: a new player needs a name", "hello: a new player needs a name"),
        ("race_not_found", "no race has that id or join code", "no race has that id or join code"),
        ("race_full", "", "every seat of the race is taken"),
    ],
)
def test_server_errors_are_worded_for_the_player(code: str, message: str, words: str) -> None:
    from client_cli.wording import error_words

    assert error_words(code, message) == words


def test_a_refusal_is_said_once_not_as_the_servers_sentence_and_the_clients() -> None:
    """``name_registered`` read "that name belongs to a registered player: pick another, or join with its
    account key; that name belongs to an account: pick another --name, ...": the same thing twice. A code
    the server words only by its explanation gets the client's sentence alone; a reason of the server's
    own is said alone."""
    from client_cli.wording import WORDS, error_words
    from shared import protocol as p

    for code in WORDS:
        assert error_words(code, p.explain(code)) == WORDS[code]
        assert error_words(code, "") == WORDS[code]
    own = "a rated race is for accounts only: seek an unrated race, or register (thieves register NAME)"
    assert error_words("account_required", own) == own
    assert error_words("account_name_taken", "B0B looks like bob, which is taken") == (
        "B0B looks like bob, which is taken; pick another name")


@pytest.mark.parametrize(("message", "words"), [
    ("event_create: Expected `int` <= 253402300799999 - at `$.starts_at`",
     "the start time must be no later than 9999-12-31 23:59 UTC"),
    ("Expected `int` >= 0 - at `$.starts_at`", "the start time must be no earlier than 1970-01-01 00:00 UTC"),
])
def test_a_moment_out_of_range_is_said_as_a_date_not_milliseconds(message: str, words: str) -> None:
    """A refused ``starts_at`` read "starts at must be at most 253402300799999": a raw field name and a
    13-digit millisecond count."""
    from client_cli.wording import error_words

    assert error_words("bad_field", message) == words
