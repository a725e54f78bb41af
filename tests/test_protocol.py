"""The wire schema: round trips, plain msgpack, and the typed error of each bad frame."""

from __future__ import annotations

import msgpack
import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared import protocol as p
from shared.protocol.codec import _too_deep
from shared.engine import Game
from shared.view import PlayerView
from shared.moves import IllegalReason
from shared.variants import VARIANTS


def _view() -> p.View:
    return p.View.from_player_view(Game.new(deal_number=7).view())


def _race_info() -> p.RaceInfo:
    return p.RaceInfo(
        id="r1", code="ABCD", variant="forty-thieves", deal_source="random", seats=2, players=1,
        time_limit=600, undo=True, start_mode="creator", status="lobby", commitment="00" * 32,
        created_at=1_700_000_000_000,
    )


def _progress() -> list[p.PlayerProgress]:
    return [p.PlayerProgress(seat=0, name="ann", home=3, total=104, moves=9, status="racing", rank=1)]


SERVER_SAMPLES = [
    p.Welcome(protocol=1, race=_race_info(), role="player", seat=0, token="t", version=2,
              server_time=5, view=None, progress=_progress()),
    p.Created(race=_race_info(), creator_token="c"),
    p.error(p.ErrorCode.BAD_FIELD, ref="move"),
    p.Countdown(version=3, starts_at=10, ends_at=20, server_time=5, view=_view()),
    p.Ack(seq=4, move="S", version=9, view=_view(), status="racing"),
    p.Reject(seq=5, reason="wrong_suit", message="x", version=9),
    p.Progress(version=9, server_time=6, race_status="running", players=_progress(), full=True),
    p.GaveUp(version=9),
    p.Finished(version=10, results=p.Results(
        race="r1", variant="forty-thieves", deal=7, salt="ab", commitment="cd", starts_at=1, ended_at=2,
        standings=[p.Standing(rank=1, seat=0, name="ann", status="finished", home=104, total=104, moves=300)],
        records=[p.PlayerRecord(seat=0, name="ann", moves=["S"], position="...")])),
    p.Pong(nonce=3, server_time=7),
    p.HintAnswer(move="Wb", winning=True, verdict="won", remaining=57, seq=12, version=40),
    p.Left(version=3),
    # seeks
    p.Seeking(pool="forty-thieves/2/300/casual", seek="s1", waiting=3, rating=1012, gap=250, waited_ms=3000,
              server_time=9, requeued=True),
    p.Matched(pool="forty-thieves/2/300/casual", seek="s1", race="r1", code="ABCDEF", seat=1, token="t",
              join_by=20, names=["ann", "bob"], ratings=[1000, 1012], gap=250, waited_ms=3000),
    p.SeekCancelled(cancelled=False),
]
CLIENT_SAMPLES = [
    p.Hello(protocol=p.PROTOCOL_VERSION, race="ABCD", role="spectator", name="bob", token="x", last_version=4),
    p.Hello(protocol=p.PROTOCOL_VERSION, race="ABCD", key="bob.s3cret"),
    p.Create(variant="sixty-thieves", deal_source="number", deal=12345, seats=10, time_limit=60,
             undo=False, start_mode="all-ready", hints=True, rated=True),
    p.Ready(ready=False),
    p.Start(creator_token="c"),
    p.Move(seq=1, move="ab", seat=0),
    p.GiveUp(),
    p.Ping(nonce=8),
    p.HintRequest(),
    p.Leave(),
    # seeks
    p.Seek(variant="sixty-thieves", seats=4, time_limit=120, rated=True, key="bob.s3cret"),
    p.SeekCancel(),
]


def test_every_message_type_has_a_sample() -> None:
    assert {type(m).__struct_config__.tag for m in SERVER_SAMPLES} == set(p.SERVER_TYPES)
    assert {type(m).__struct_config__.tag for m in CLIENT_SAMPLES} == set(p.CLIENT_TYPES)


@pytest.mark.parametrize("msg", SERVER_SAMPLES, ids=lambda m: type(m).__name__)
def test_server_messages_round_trip_and_are_plain_msgpack(msg: msgspec.Struct) -> None:
    data = p.encode(msg)
    assert p.decode_server(data) == msg
    plain = msgpack.unpackb(data, raw=False)
    assert plain["type"] == type(msg).__struct_config__.tag
    assert set(plain) == {"type"} | {f.encode_name for f in msgspec.structs.fields(msg)}


@pytest.mark.parametrize("msg", CLIENT_SAMPLES, ids=lambda m: type(m).__name__)
def test_client_messages_round_trip_and_msgpack_python_frames_decode(msg: msgspec.Struct) -> None:
    assert p.decode_client(p.encode(msg)) == msg
    as_dict = msgpack.unpackb(p.encode(msg))
    assert p.decode_client(msgpack.packb(as_dict)) == msg


def test_hint_has_one_tag_each_way_and_older_clients_default_the_new_fields() -> None:
    """``hint`` is a request from a client and an answer from the server; fields added by
    issue 6 (checked, hints, helped) default so that frames of older peers still decode."""
    assert p.decode_client(msgpack.packb({"type": "hint"})) == p.HintRequest()
    answer = p.decode_server(msgpack.packb({"type": "hint", "move": None, "winning": False, "verdict": "unknown"}))
    assert isinstance(answer, p.HintAnswer) and answer.remaining == 0
    old_line = {"seat": 0, "name": "ann", "home": 0, "total": 104, "moves": 0, "status": "racing", "rank": 1}
    assert msgspec.convert(old_line, p.PlayerProgress).helped is False
    assert p.decode_client(msgpack.packb({"type": "create"})).hints is False  # type: ignore[union-attr]


def test_view_keeps_the_stock_secret_and_converts_back() -> None:
    game = Game.new(deal_number=7)
    wire = msgpack.unpackb(p.encode(_view()))
    assert wire["stock"] == game.stock_count and wire["pass"] == 1
    assert PlayerView.of_wire(_view()) == game.view()


def test_optional_fields_may_be_left_out_by_a_client() -> None:
    hello = p.decode_client(msgpack.packb({"type": "hello", "protocol": 1, "race": "r1"}))
    assert hello == p.Hello(protocol=1, race="r1")
    assert p.decode_client(msgpack.packb({"type": "give_up"})) == p.GiveUp()


def test_unknown_fields_are_ignored_for_forward_compatibility() -> None:
    msg = p.decode_client(msgpack.packb({"type": "move", "seq": 1, "move": "aF", "new": [1, 2]}))
    assert msg == p.Move(seq=1, move="aF")


@pytest.mark.parametrize(
    "data, code",
    [
        (b"\xc1", p.ErrorCode.BAD_FRAME),
        (b"", p.ErrorCode.BAD_FRAME),
        (msgpack.packb([1, 2]), p.ErrorCode.BAD_FRAME),
        (msgpack.packb("move"), p.ErrorCode.BAD_FRAME),
        (msgpack.packb({"seq": 1}), p.ErrorCode.BAD_FRAME),
        (msgpack.packb({"type": 3}), p.ErrorCode.BAD_FRAME),
        (msgpack.packb({"type": "move", "seq": 1, "move": "ab"}) + b"\x00", p.ErrorCode.BAD_FRAME),
        (msgpack.packb({"type": "teleport"}), p.ErrorCode.UNKNOWN_TYPE),
        (msgpack.packb({"type": "ack", "seq": 1}), p.ErrorCode.UNKNOWN_TYPE),
        (msgpack.packb({"type": "move", "seq": 1}), p.ErrorCode.BAD_FIELD),
        (msgpack.packb({"type": "move", "seq": "1", "move": "ab"}), p.ErrorCode.BAD_FIELD),
        (msgpack.packb({"type": "move", "seq": -1, "move": "ab"}), p.ErrorCode.BAD_FIELD),
        (msgpack.packb({"type": "move", "seq": 1, "move": "x" * 9}), p.ErrorCode.BAD_FIELD),
        (msgpack.packb({"type": "move", "seq": 1, "move": ""}), p.ErrorCode.BAD_FIELD),
        (msgpack.packb({"type": "hello", "protocol": 1, "race": "r", "role": "judge"}), p.ErrorCode.BAD_FIELD),
        (msgpack.packb({"type": "hello", "protocol": 1, "race": "r", "name": "n" * 33}), p.ErrorCode.BAD_FIELD),
        (msgpack.packb({"type": "hello", "protocol": 1, "race": "r", "join_id": "j" * 15}), p.ErrorCode.BAD_FIELD),
        (msgpack.packb({"type": "hello", "protocol": 1, "race": "r", "join_id": "j" * 65}), p.ErrorCode.BAD_FIELD),
        (msgpack.packb({"type": "create", "seats": 0}), p.ErrorCode.BAD_FIELD),
        (msgpack.packb({"type": "create", "deal": 2**64 - 1}), p.ErrorCode.BAD_FIELD),
        (msgpack.packb({"type": "ready", "ready": "yes"}), p.ErrorCode.BAD_FIELD),
        (msgpack.packb({"type": "create", "deal_source": "checked"}), p.ErrorCode.BAD_FIELD),
        (msgpack.packb({"type": "create", "hints": "please"}), p.ErrorCode.BAD_FIELD),
    ],
)
def test_bad_frames_get_a_typed_error(data: bytes, code: p.ErrorCode) -> None:
    with pytest.raises(p.ProtocolError) as info:
        p.decode_client(data)
    assert info.value.code is code
    assert str(info.value)
    if code is p.ErrorCode.BAD_FIELD:
        assert info.value.ref in p.CLIENT_TYPES


def test_every_engine_reason_is_a_reject_code_and_codes_do_not_clash() -> None:
    protocol_codes = {c.value for c in p.ErrorCode}
    assert not protocol_codes & p.MOVE_REASONS
    assert {r.value for r in IllegalReason} <= p.ALL_CODES
    for code in p.ALL_CODES:
        assert p.explain(code) != code and p.explain(code)
    assert p.explain("no_such_thing") == "no_such_thing"


def test_close_codes_are_explained_and_application_codes_in_private_range() -> None:
    for code in p.CloseCode:
        assert code.explanation
        assert code < 2000 or 4000 <= code < 5000


def test_error_helper_fills_the_standard_explanation() -> None:
    e = p.error(p.ErrorCode.RACE_FULL)
    assert (e.code, e.message) == ("race_full", p.ErrorCode.RACE_FULL.explanation)
    assert p.error("wrong_suit").message == IllegalReason.WRONG_SUIT.explanation


def test_docs_cover_every_message_field_code_and_close_code() -> None:
    """docs/protocol.md is the reference for other languages: nothing on the wire may be missing from it."""
    from pathlib import Path

    doc = (Path(__file__).resolve().parent.parent / "docs" / "protocol.md").read_text()
    for tag in p.CLIENT_TYPES + p.SERVER_TYPES:
        assert f"### `{tag}`" in doc, tag
    structs = list(p.ClientMessage.__args__) + list(p.ServerMessage.__args__)  # type: ignore[attr-defined]
    structs += [p.View, p.Rules, p.RaceInfo, p.PlayerProgress, p.Standing, p.PlayerRecord, p.Results]
    for struct in structs:
        for f in msgspec.structs.fields(struct):
            assert f"`{f.encode_name}`" in doc, f"{struct.__name__}.{f.encode_name}"
    for code in p.ALL_CODES:
        assert f"| `{code}` |" in doc, code
    for close in p.CloseCode:
        assert f"| {int(close)} |" in doc, close
    assert f"**{p.MAX_FRAME_BYTES} bytes**" in doc
    assert doc.startswith(f"# The race protocol (version {p.PROTOCOL_VERSION})")


def _depth(value: object) -> int:
    if isinstance(value, dict):
        return 1 + max((max(_depth(k), _depth(v)) for k, v in value.items()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


_scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**63, 2**64 - 1), st.floats(allow_nan=False),
                     st.text(max_size=40), st.binary(max_size=300), st.builds(msgpack.ExtType, st.integers(0, 127),
                                                                              st.binary(max_size=20)))
_values = st.recursive(_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=20), st.dictionaries(st.text(max_size=5), inner, max_size=20)), max_leaves=60)


@given(_values, st.integers(0, 6))
def test_the_nesting_scan_measures_what_msgpack_python_packed(value: object, limit: int) -> None:
    data = msgpack.packb(value)
    assert _too_deep(b"\x91" * 40 + data, limit) == (40 + _depth(value) > limit)
    assert _too_deep(data, limit) == (_depth(value) > limit)


def test_frames_up_to_the_nesting_limit_decode_deeper_ones_are_bad_frames() -> None:
    def frame(depth: int) -> bytes:
        """A ping (the map is the first level) whose unknown field ``x`` nests ``depth`` levels in all."""
        head = msgpack.packb({"type": "ping", "nonce": 3, "x": None})[:-1]
        return head + b"\x91" * (depth - 1) + msgpack.packb(0)

    assert p.decode_client(frame(p.MAX_NESTING)) == p.Ping(nonce=3)
    with pytest.raises(p.ProtocolError) as info:
        p.decode_client(frame(p.MAX_NESTING + 1))
    assert info.value.code is p.ErrorCode.BAD_FRAME
    with pytest.raises(p.ProtocolError) as info:
        p.decode_client(b"\x91" * 3000 + frame(1))
    assert info.value.code is p.ErrorCode.BAD_FRAME


@pytest.mark.parametrize("key", sorted(VARIANTS))
def test_race_info_carries_the_variant_rules_and_older_clients_ignore_them(key: str) -> None:
    from server.race import rules as races

    variant = VARIANTS[key]
    meta = races.new_race(p.Create(variant=key), 1_000)
    info = races.race_info(meta, 1_000)
    assert info.rules is not None
    assert (info.rules.packing, info.rules.empty_column, info.rules.stock_passes, info.rules.group_moves) == (
        variant.packing.value, variant.empty_column.value, variant.stock_passes, variant.group_moves.value)

    class OldRaceInfo(msgspec.Struct, kw_only=True):  # a client built before the field existed
        id: str
        variant: str

    old = msgspec.json.decode(msgspec.json.encode(info), type=OldRaceInfo)
    assert (old.id, old.variant) == (info.id, key)
