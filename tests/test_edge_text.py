"""Text from outside, without a server: tokens, keys and organiser tokens of any characters are refused
with their typed error (never anything else), JSON nesting is bounded, and the name rule of
shared/names.py (issue 22, items 4, 5 and 7)."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from starlette.requests import Request

from server.answers import bearer
from server.accounts.keys import BadKey, split_key
from server.players.organiser import organiser_matches
from server.race.tokens import CREATOR, PLAYER, Signer, TokenError
from shared import protocol as p
from shared.names import NameRefused, account_name, display_name, name_key

SIGNER = Signer(b"s" * 32)
NOW = 1_800_000_000_000
GOOD = SIGNER.sign(PLAYER, "abcdefghijkm", 0, NOW + 60_000)
anything = st.text(max_size=300)
"""Any Unicode text (every category but surrogates, which no JSON or msgpack string carries)."""


def _mutations() -> st.SearchStrategy[str]:
    """A real token with one stretch replaced by any text: the shape is nearly right, so the checks
    after the first are reached too."""
    return st.tuples(st.integers(0, len(GOOD)), st.integers(0, 8), anything).map(
        lambda t: GOOD[:t[0]] + t[2] + GOOD[t[0] + t[1]:])


@given(st.one_of(anything, _mutations()), st.sampled_from([PLAYER, CREATOR]), st.integers(0, 30))
@example(GOOD[:-1] + "é", PLAYER, 0)
@example(GOOD.replace(".0.", ".²."), PLAYER, 0)
@example(GOOD.replace(".0.", ".٣."), PLAYER, 0)
@settings(max_examples=400, deadline=None)
def test_a_token_of_any_text_is_a_claim_or_a_token_error(token: str, kind: str, gen: int) -> None:
    """Hello's ``token`` and start's ``creator_token`` go through these two and nothing else."""
    named = SIGNER.seat_of(token)
    assert named is None or (isinstance(named[0], str) and isinstance(named[1], int))
    try:
        SIGNER.verify(kind, token, None, NOW, gen)
    except TokenError as exc:
        assert exc.code in (p.ErrorCode.BAD_TOKEN, p.ErrorCode.TOKEN_EXPIRED)


def test_the_token_checks_still_accept_a_good_token_and_refuse_its_forgeries() -> None:
    assert SIGNER.verify(PLAYER, GOOD, "abcdefghijkm", NOW).seat == 0
    assert SIGNER.seat_of(GOOD) == ("abcdefghijkm", 0)
    for forged in (GOOD[:-1] + "é", GOOD[:-1] + ("A" if GOOD[-1] != "A" else "B"), GOOD.replace(".0.", ".٠.")):
        with pytest.raises(TokenError) as refused:
            SIGNER.verify(PLAYER, forged, None, NOW)
        assert refused.value.code is p.ErrorCode.BAD_TOKEN


@given(st.one_of(anything, st.builds(lambda a, b: f"{a}.{b}", anything, anything)))
@example("bob.sécret")
@example("bob\n.secret")
@example("bób.secret")
@settings(max_examples=400, deadline=None)
def test_an_account_key_of_any_text_is_split_or_bad_key(key: str) -> None:
    """Hello's ``key`` and every ``Authorization: Bearer`` account key are split by this first."""
    try:
        account, secret = split_key(key)
    except BadKey as exc:
        assert exc.code is p.ErrorCode.BAD_KEY
    else:
        assert account.isascii() and secret.isascii()


def _request(authorization: bytes) -> Request:
    return Request({"type": "http", "method": "POST", "path": "/", "headers": [(b"authorization", authorization)]})


@given(anything)
@example("Bearer sécret-organiser-token")
@settings(max_examples=300, deadline=None)
def test_a_bearer_header_of_any_text_is_a_token_or_none_and_matches_only_the_organisers(text: str) -> None:
    """The organiser token and account keys arrive in this header: as bytes on the wire (a header of
    UTF-8 bytes reaches Starlette as Latin-1 text), read by :func:`bearer`, compared by
    :func:`organiser_matches`."""
    given_ = bearer(_request(text.encode()))
    assert given_ is None or isinstance(given_, str)
    assert organiser_matches(given_, "the-organiser-token-é-16+") is (given_ == "the-organiser-token-é-16+")
    assert organiser_matches(text, "the-organiser-token-16+") is (text == "the-organiser-token-16+")


def test_a_bearer_header_is_read_whatever_its_bytes() -> None:
    assert bearer(_request("Bearer tôken".encode())) == "tÃ´ken"  # Latin-1 of the UTF-8: never a match
    assert bearer(_request(b"Basic abc")) is None and bearer(_request(b"Bearer   ")) is None


# ------------------------------------------------------------------ JSON
@pytest.mark.parametrize("depth, code", [(20_000, p.ErrorCode.BAD_FRAME), (p.MAX_NESTING + 1, p.ErrorCode.BAD_FRAME),
                                         (p.MAX_NESTING, p.ErrorCode.BAD_FIELD)])
def test_json_nested_past_the_websockets_limit_is_a_bad_frame(depth: int, code: p.ErrorCode) -> None:
    body = b'{"seats":' * (depth - 1) + b"{}" + b"}" * (depth - 1)
    with pytest.raises(p.ProtocolError) as refused:
        p.decode_json(body, p.Create)
    assert refused.value.code is code


def test_brackets_inside_json_strings_do_not_count_as_nesting() -> None:
    name = '[{\\"' * 40 + "x"
    assert p.decode_json(f'{{"name": "{name}"}}'.encode(), p.Register).name.startswith('[{"')
    with pytest.raises(p.ProtocolError) as refused:
        p.decode_json(b'{"name": "' + b"[" * 40, p.Register)  # an unterminated string
    assert refused.value.code is p.ErrorCode.BAD_FRAME


# ------------------------------------------------------------------ names
LOOK_ALIKES = ["аnn", "ａnn", "ANN", "Ann", "ann\u0301", "ańn", "ＡＮＮ"]
"""Names that read as ``ann``: Cyrillic а, full width, case, a combining accent, its composed form."""
UNSEEN = ["ann\u200b", "ann\x00", "\u0301ann", "an\u200dn", "ann\u2028", "ann\u3164", "ann\u202e", "ann\t", "a\ufe0fnn"]
"""Names with something nobody sees: a zero-width space, NUL, a lone combining accent, a zero-width
joiner, a line separator, a Hangul filler, a bidi override, a tab, a variation selector."""


@pytest.mark.parametrize("name", LOOK_ALIKES)
def test_a_look_alike_has_the_key_of_the_name_it_imitates(name: str) -> None:
    assert name_key(name) == name_key("ann")


@pytest.mark.parametrize("a, b", [("b0b", "bob"), ("BiII", "bill"), ("rnary", "mary"), ("pаypаl", "paypal"),
                                  ("Zoë", "zoe"), ("  ann   lee ", "ann lee")])
def test_the_skeleton_folds_ascii_and_other_look_alikes_too(a: str, b: str) -> None:
    assert name_key(a) == name_key(b)


@pytest.mark.parametrize("a, b", [("ann", "anna"), ("bob", "rob"), ("ann", "amm")])
def test_names_that_read_differently_keep_different_keys(a: str, b: str) -> None:
    assert name_key(a) != name_key(b)


@pytest.mark.parametrize("name", UNSEEN)
def test_a_name_with_an_unseen_character_is_refused_saying_which(name: str) -> None:
    with pytest.raises(NameRefused) as refused:
        display_name(name)
    assert refused.value.code is p.ErrorCode.BAD_NAME and "U+" in str(refused.value)


def test_a_name_is_kept_in_its_plain_form() -> None:
    assert display_name("  ａnn   lee ") == "ann lee" and display_name("Zoë") == "Zoë"
    with pytest.raises(NameRefused, match="accents or marks"):
        display_name("a" + "\u0301" * 4)
    with pytest.raises(NameRefused, match="longer than 32"):
        display_name("\ufdfa" * 2)  # one character each, 18 once written plainly


@pytest.mark.parametrize("name", ["аnn", "ann\u200b", "ann\x00", "ann\u0301", "ann\n", "a", "-ann"])
def test_an_account_name_is_plain_ascii(name: str) -> None:
    with pytest.raises(NameRefused):
        account_name(name)


def test_an_account_name_is_kept_in_its_plain_form() -> None:
    assert account_name("Bob_1") == "Bob_1" and account_name(" ａnn ") == "ann"


@given(anything)
@settings(max_examples=300, deadline=None)
def test_any_text_is_a_name_with_a_key_or_a_bad_name(text: str) -> None:
    try:
        name = display_name(text)
    except NameRefused as exc:
        assert exc.code is p.ErrorCode.BAD_NAME
    else:
        assert name == display_name(name) and name_key(name) == name_key(text)
