"""The server's pure parts: settings, tokens, standings, the token bucket, race shapes, log lines."""

from __future__ import annotations

import hashlib

import pytest

from server.race import rules as races
from server.config import Config, parse_args
from server.ops.log import format_event
from server.ops.ratelimit import TokenBucket
from server.store import Line
from shared.standings import ranked, shown_status
from server.race.tokens import CREATOR, PLAYER, Signer, TokenError
from shared import protocol as p
from shared.engine import Game
from shared.pool import pool_deals
from shared.record import GameRecord, replay
from shared.variants import get_variant


def test_flags_beat_environment_beat_defaults() -> None:
    assert parse_args([], {}) == Config()
    env = {"THIEVES_PORT": "9001", "THIEVES_REDIS_URL": "redis://x:1/0", "THIEVES_PROGRESS_HZ": "2.5"}
    cfg = parse_args(["--port", "9002"], env)
    assert (cfg.port, cfg.redis_url, cfg.progress_hz, cfg.host) == (9002, "redis://x:1/0", 2.5, "127.0.0.1")
    assert "secret" not in str(Config(token_secret="secret-secret-secret"))
    assert Config(token_secret="s" * 20).summary()["token_secret"] == "set"
    assert Config().summary()["checked_variants"] == "forty-thieves, sixty-thieves"
    assert "on demand" in Config(checked_pool_size=0).summary()["checked_variants"]


@pytest.mark.parametrize("flag", ["--progress-hz", "--racer-hz"])
@pytest.mark.parametrize("value", ["0", "-1", "nan"])
def test_frame_rates_are_more_than_zero(flag: str, value: str) -> None:
    with pytest.raises(ValueError, match=f"{flag} is frames a second: more than 0"):
        parse_args([flag, value], {})
    assert parse_args([flag, "0.5"], {}) != Config()


@pytest.mark.parametrize("value", ["-1", "101", "nan"])
def test_the_commit_linger_is_milliseconds_from_0_to_100(value: str) -> None:
    with pytest.raises(ValueError, match="--commit-linger-ms is milliseconds from 0 to 100"):
        parse_args(["--commit-linger-ms", value], {})
    assert parse_args(["--commit-linger-ms", "0"], {}).commit_linger_ms == 0
    assert Config().commit_linger_ms == 5


def test_tokens_prove_race_seat_kind_and_time() -> None:
    signer = Signer(b"k" * 32)
    token = signer.sign(PLAYER, "race1", 3, 2_000)
    claim = signer.verify(PLAYER, token, "race1", 1_000)
    assert (claim.race, claim.seat, claim.expires) == ("race1", 3, 2_000)
    assert signer.verify(PLAYER, token, None, 1_000) == claim
    for bad_kind, bad_token, race, now, code in [
        (CREATOR, token, "race1", 1_000, "bad_token"),
        (PLAYER, token, "race2", 1_000, "bad_token"),
        (PLAYER, token, "race1", 2_000, "token_expired"),
        (PLAYER, token.replace("race1.3", "race1.4"), "race1", 1_000, "bad_token"),
        (PLAYER, "a.b.c", "race1", 1_000, "bad_token"),
        (PLAYER, Signer(b"j" * 32).sign(PLAYER, "race1", 3, 2_000), "race1", 1_000, "bad_token"),
    ]:
        with pytest.raises(TokenError) as info:
            signer.verify(bad_kind, bad_token, race, now)
        assert info.value.code.value == code
    with pytest.raises(ValueError):
        Signer(b"short")


def _line(seat: int, status: str = "racing", home: int = 0, home_at: int = 0, finished_at: int = 0) -> Line:
    return Line(seat, f"p{seat}", status, home, 10, home_at, finished_at, 1)


def test_standings_finishers_by_time_then_cards_home_then_who_got_there_first() -> None:
    lines = [
        _line(0, home=50, home_at=300),
        _line(1, status="finished", home=104, finished_at=900),
        _line(2, home=50, home_at=200),
        _line(3, status="gave_up", home=70, home_at=100),
        _line(4, status="finished", home=104, finished_at=800),
        _line(5, home=0),
        _line(6, home=0),
    ]
    assert [(rank, line.seat) for rank, line in ranked(lines)] == [
        (1, 4), (2, 1), (3, 3), (4, 2), (5, 0), (6, 5), (7, 6)
    ]


def test_shown_status() -> None:
    assert shown_status("ready", True, 1) == "racing"
    assert shown_status("ready", False, 1) == "ready"
    assert shown_status("racing", True, 0) == "disconnected"
    assert shown_status("finished", True, 0) == "finished"


def test_token_bucket_refills_at_its_rate() -> None:
    now = [0.0]
    bucket = TokenBucket(rate=2.0, burst=3, clock=lambda: now[0])
    assert [bucket.take() for _ in range(4)] == [True, True, True, False]
    now[0] = 0.5
    assert bucket.take() and not bucket.take()
    now[0] = 100.0
    assert sum(bucket.take() for _ in range(10)) == 3


def test_new_race_commits_to_a_secret_deal() -> None:
    meta = races.new_race(p.Create(seats=5), 1_000)
    assert meta.commitment == hashlib.sha256(f"forty-thieves|{meta.deal}|{meta.salt}".encode()).hexdigest()
    assert 1 <= meta.deal <= p.MAX_WIRE_DEAL and len(meta.salt) == 32
    info = races.race_info(meta, 2_000)
    assert info.status == "lobby" and not hasattr(info, "deal") and not hasattr(info, "salt")
    assert races.new_race(p.Create(deal_source="number", deal=77), 0).deal == 77
    other = races.new_race(p.Create(seats=5), 1_000)
    assert (other.id, other.code, other.salt) != (meta.id, meta.code, meta.salt)
    assert set(meta.code) <= set("ABCDEFGHJKLMNPQRSTUVWXYZ23456789") and len(meta.code) == 6


def test_load_game_replays_moves_and_undos() -> None:
    meta = races.new_race(p.Create(deal_source="number", deal=2), 0)
    game = races.load_game(meta, ["ba", "bF", "U", "S"])
    expected = Game.new(deal_number=2)
    for text in ("ba", "S"):
        expected.push_text(text)
    assert game.same_position(expected) and game.move_count == 2


def test_log_lines_are_one_logfmt_line() -> None:
    line = format_event("refused", {"race": "r1", "detail": 'a "b"\nc', "seat": None, "n": 3})
    assert line == 'event=refused race=r1 detail="a \\"b\\"\\nc" n=3'
    assert "\n" not in line


def test_switches_read_yes_and_no_from_flags_and_environment() -> None:
    assert parse_args(["--redis-cluster", "yes"], {}).redis_cluster is True
    assert parse_args([], {"THIEVES_REDIS_CLUSTER": "1"}).redis_cluster is True
    assert parse_args([], {"THIEVES_REDIS_CLUSTER": "off"}).redis_cluster is False
    with pytest.raises(ValueError, match="THIEVES_REDIS_CLUSTER"):
        parse_args([], {"THIEVES_REDIS_CLUSTER": "maybe"})


def test_the_table_before_a_gap_is_rebuilt_from_the_lines_each_event_overwrote() -> None:
    from server.store import Event

    now = [Line(0, "ann", "racing", 5, 40, 900, 0, 1), Line(1, "bob", "racing", 7, 30, 950, 0, 1),
           Line(2, "cy", "waiting", 0, 0, 0, 0, 1)]
    ann_before = Line(0, "ann", "racing", 4, 38, 800, 0, 1)
    missed = [
        Event(11, "move", 0, ann_before),
        Event(12, "move", 0, Line(0, "ann", "racing", 4, 39, 800, 0, 1)),  # only a seat's first event counts
        Event(13, "join", 2, None),  # cy joined in the gap: absent before it
        Event(14, "end", -1, None),
    ]
    before = {e.seat: e for e in races.table_before(now, missed, True, 104)}
    assert set(before) == {0, 1}
    assert (before[0].home, before[0].moves, before[0].rank) == (4, 38, 2)
    assert before[1].rank == 1 and before[1].moves == 30
    lobby = races.table_before(now, [Event(20, "start", -1, None)], True, 104)
    assert [e.status for e in lobby] == ["racing", "racing", "waiting"], "a missed start: lobby statuses"
    assert [e.status for e in races.progress_lines(now, True, 104)][2] == "racing"


def test_progress_lines_made_before_are_given_again_while_their_line_rank_and_phase_stand() -> None:
    """A hub keeps the progress lines it made (``made``): a stored line that is the same object, at the same
    rank and phase, gives the same progress line; anything else is made anew, equal to a table made from
    scratch."""
    ann, bob = Line(0, "ann", "racing", 4, 10, 5000, 0, 1), Line(1, "bob", "racing", 3, 8, 4000, 0, 1)
    made: races.MadeLines = {}
    first = races.progress_lines([ann, bob], True, 104, made)
    assert first == races.progress_lines([ann, bob], True, 104) and set(made) == {0, 1}
    bob2 = Line(1, "bob", "racing", 3, 9, 4000, 0, 1)  # bob's move count alone: ann's line stands
    second = races.progress_lines([ann, bob2], True, 104, made)
    assert second[0] is first[0] and second[1] is not first[1] and second[1].moves == 9
    bob3 = Line(1, "bob", "racing", 5, 10, 6000, 0, 1)  # bob passes ann: her rank changes, her line does not
    third = races.progress_lines([ann, bob3], True, 104, made)
    assert third[0] is not first[0] and (third[0].rank, third[1].rank) == (2, 1)
    assert third == races.progress_lines([ann, bob3], True, 104)
    lobby = races.progress_lines([ann, bob3], False, 104, made)  # the phase is part of what a line shows
    assert lobby == races.progress_lines([ann, bob3], False, 104) and lobby[0] is not third[0]


def test_a_race_is_due_to_end_once_its_time_is_up_or_every_player_is_done() -> None:
    import dataclasses

    from server.store.records import RaceMeta

    meta = RaceMeta(id="R1", code="ABCDEF", variant="forty-thieves", deal_source="random", deal=1, salt="s",
                    commitment="c", seats=3, players=3, time_limit=600, undo=False, start_mode="creator",
                    status="started", created_at=0, starts_at=10_000, ends_at=610_000, ended_at=0, version=9, done=2)
    assert not meta.due_to_end(609_999)
    assert meta.due_to_end(610_000), "its time is up"
    assert dataclasses.replace(meta, done=3).due_to_end(20_000), "every player is done"
    for status in ("lobby", "finished"):
        assert not dataclasses.replace(meta, status=status, done=3).due_to_end(700_000), status


def test_status_after_a_move_and_as_shown() -> None:
    game = Game.new(get_variant("forty-thieves"), 1)
    assert races.player_status(game) == "racing"
    assert shown_status("blocked", True, 1) == "blocked"
    assert shown_status("blocked", True, 0) == "disconnected"


def test_metrics_histogram_buckets_are_cumulative_and_text_is_prometheus() -> None:
    from server.ops.metrics import Metrics

    m = Metrics()
    for seconds in (0.0002, 0.0007, 0.003, 9.0):
        m.redis_seconds.observe("moves", seconds)
    m.rejected("wrong_suit")
    m.rejected("wrong_suit")
    text = m.render({"thieves_connections": ("open connections", 3)})
    assert 'thieves_redis_seconds_bucket{op="moves",le="0.0005"} 1' in text
    assert 'thieves_redis_seconds_bucket{op="moves",le="0.001"} 2' in text
    assert 'thieves_redis_seconds_bucket{op="moves",le="2.5"} 3' in text
    assert 'thieves_redis_seconds_bucket{op="moves",le="+Inf"} 4' in text
    assert 'thieves_redis_seconds_count{op="moves"} 4' in text
    assert 'thieves_moves_rejected_total{reason="wrong_suit"} 2' in text
    assert "# TYPE thieves_connections gauge\nthieves_connections 3\n" in text


# ---------------------------------------------------------------- checked deals and hints
def test_a_pool_race_takes_the_checked_deal_it_is_given_and_says_so() -> None:
    from server.deals.checked import CheckedDeal

    given = CheckedDeal("forty-thieves", 12345678901234, ("S", "aF"))
    meta = races.new_race(p.Create(deal_source="pool"), 0, given)
    assert (meta.checked, meta.deal, meta.line) == (True, 12345678901234, "S aF")
    info = races.race_info(meta, 0)
    assert info.checked is True and "S aF" not in repr(info), "the line is as secret as the deal"
    result = races.results(meta, [], 1)
    assert (result.deal, result.winning_line) == (12345678901234, ["S", "aF"])
    for req in (p.Create(), p.Create(deal_source="number", deal=meta.deal)):
        plain = races.new_race(req, 0)
        assert plain.checked is False and races.results(plain, [], 1).winning_line is None
    for req, checked, code in [
        (p.Create(deal_source="pool", deal=2), given, p.ErrorCode.BAD_DEAL),
        (p.Create(deal_source="number"), None, p.ErrorCode.BAD_DEAL),
        (p.Create(variant="nope", deal_source="pool"), given, p.ErrorCode.BAD_VARIANT),
        (p.Create(deal_source="pool"), None, p.ErrorCode.NO_POOL),
        (p.Create(variant="sixty-thieves", deal_source="pool"), given, p.ErrorCode.NO_POOL),
    ]:
        with pytest.raises(races.CreateError) as info:
            races.new_race(req, 0, checked)
        assert info.value.code is code


def test_a_checked_deal_round_trips_and_bad_entries_are_refused() -> None:
    from server.deals.checked import CheckedDeal

    deal = CheckedDeal("sixty-thieves", p.MAX_WIRE_DEAL, ("S",))
    assert CheckedDeal.loads(deal.dumps()) == deal
    assert CheckedDeal.loads(deal.dumps().replace("sixty-thieves", "Sixty Thieves")) == deal
    for bad in ("{", "[]", '{"variant": "forty-thieves", "deal": 0, "line": ["S"]}',
                '{"variant": "forty-thieves", "deal": 5, "line": []}',
                '{"variant": "forty-thieves", "deal": true, "line": ["S"]}',
                '{"variant": "nope", "deal": 5, "line": ["S"]}', '{"deal": 5, "line": ["S"]}'):
        with pytest.raises(ValueError):
            CheckedDeal.loads(bad)


def test_a_worker_attempt_keeps_only_a_line_the_engine_replays_to_a_win() -> None:
    from server.deals.checked import CheckedDeal, check_deal, fresh_deal_number, try_random_deal

    attempt = check_deal("forty-thieves", 2, 1.0)  # the hand-picked easy deal: won in milliseconds
    assert attempt.verdict == "won" and attempt.found is not None and attempt.nodes > 0
    deal = CheckedDeal.loads(attempt.found)
    assert deal.deal == 2 and replay(GameRecord("forty-thieves", 2, deal.line)).game.is_won()
    numbers = {fresh_deal_number() for _ in range(50)}
    assert len(numbers) == 50 and all(1 <= n <= p.MAX_WIRE_DEAL for n in numbers)
    assert sum(n > 10**15 for n in numbers) >= 45, "numbers cover the whole range, not the shipped few"
    quick = try_random_deal("sixty-thieves", 0.0)
    assert quick.verdict in ("won", "unknown", "unwinnable") and (quick.found is None) == (quick.verdict != "won")


def test_checked_pool_settings() -> None:
    cfg = parse_args(["--checked-pool-size", "3", "--checked-variants", "Sixty Thieves, limited",
                      "--checked-budget", "0.75"], {"THIEVES_CHECKED_WAIT": "0"})
    assert cfg.deals.checked_targets() == {"sixty-thieves": 3, "limited": 3}
    assert (cfg.deals.checked_budget, cfg.deals.checked_wait) == (0.75, 0.0)
    assert Config().deals.checked_targets() == {"forty-thieves": 8, "sixty-thieves": 8}
    assert Config(checked_pool_size=0).deals.checked_targets() == {}
    with pytest.raises(ValueError, match="--checked-variants"):
        Config(checked_variants="forty-thieves,nope").deals.checked_targets()


def test_progress_lines_of_an_older_server_still_read() -> None:
    import msgspec

    from server.store import decode_line

    old = msgspec.msgpack.encode(("ann", "racing", 3, 10, 5, 0, 1))
    new = msgspec.msgpack.encode(("ann", "racing", 3, 10, 5, 0, 1, 1))
    assert decode_line(0, old).helped == 0 and decode_line(0, new).helped == 1


def test_a_worker_hint_follows_the_kept_line_and_ignores_a_broken_one() -> None:
    import json

    from server.deals.hinting import compute_hint

    game = Game.new(deal_number=2)
    first, _ = compute_hint(game.position(), None, 0.3)
    kept = json.loads(first)
    assert kept["verdict"] == "won" and kept["move"] == kept["line"][0]
    game.push_text(kept["move"])
    second, _ = compute_hint(game.position(), first, 0.3)
    assert json.loads(second)["line"] == kept["line"][1:]
    fallback, _ = compute_hint(game.position(), '{"move": "ab"}', 0.3)
    assert json.loads(fallback)["verdict"] == "won", "an unreadable kept hint means a fresh search"


def test_hint_settings_have_flags() -> None:
    cfg = parse_args(["--hint-budget", "0.05", "--hint-workers", "0"], {"THIEVES_HINT_INTERVAL": "2"})
    assert (cfg.hint_budget, cfg.hint_interval, cfg.hint_workers) == (0.05, 2.0, 0)
    assert (Config().hint_budget, Config().hint_interval, Config().hint_workers) == (0.3, 5.0, 1)


def test_docs_state_the_limits_and_rules_the_server_applies() -> None:
    """What a client author in another language cannot see in the schema: the document must say it, with our figures."""
    from pathlib import Path

    from server.main import uvicorn_config
    from server.transport.websocket import LINGER_SECONDS

    doc = (Path(__file__).resolve().parent.parent / "docs" / "protocol.md").read_text()
    config = Config()
    uv = uvicorn_config(object(), config)
    assert f"ping control frame every\n  **{uv.ws_ping_interval:g} s**" in doc
    assert f"within **{uv.ws_ping_timeout:g} s**" in doc
    assert f"at most **{p.MAX_NESTING} levels**" in doc
    assert f"for up to\n  {LINGER_SECONDS:g} s" in doc
    assert f"{config.send_bytes // 1024} KiB (`--send-bytes`)" in doc
    assert f"{config.send_queue} frames (`--send-queue`)" in doc
    assert f"the burst, {config.burst}, refilled one a second" in doc
    assert "`BigInt`" in doc and "`JSON.parse` rounds `deal`" in doc
    post = next(line for line in doc.splitlines() if line.startswith("| `POST /races` |"))
    assert "`bad_frame`" in post, "the route answers a body that is not JSON with bad_frame"
    assert "**renewed token**" in doc and "**Several connections of one seat.**" in doc
    assert "an earlier one\n`reject` with `stale_sequence`" in doc
    # The edge (server/transport/edge.py): each option with its default, the reserve, the head's size, the soft close.
    from server.transport import edge

    flat = " ".join(doc.split())
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    in_doc = [f"`--connections-per-address` (default {config.connections_per_address})",
              f"`--header-timeout` (default {config.header_timeout:g} s)",
              f"`--body-timeout` (default {config.body_timeout:g} s)",
              f"`--max-body` (default {config.max_body:,} bytes)",
              f"a reserve of {edge.RESERVE} connections", f"at most {edge.HEAD_BYTES // 1024} KiB",
              f"up to {edge.LINGER_SECONDS:g} s (at most {edge.LINGERING} such connections at once)",
              "`header_timeout`", "`body_timeout`", "`body_too_large`"]
    in_readme = [f"| `--connections-per-address` | {config.connections_per_address} |",
                 f"| `--header-timeout`, `--body-timeout` | {config.header_timeout:g}, {config.body_timeout:g} |",
                 f"| `--max-body` | {config.max_body} |"]
    assert [t for t in in_doc if t not in flat] == [] and [t for t in in_readme if t not in readme] == []


@pytest.mark.parametrize("size", [0, 1, 125, 126, 65535, 65536, 70000])
def test_a_direct_frame_is_the_binary_frame_websockets_itself_would_send(size: int) -> None:
    """The direct send builds its frames by hand: byte for byte what websockets serialises for a server."""
    from websockets.frames import Frame, Opcode

    from server.transport.websocket import binary_frame

    data = bytes(range(256)) * (size // 256) + bytes(size % 256)
    assert binary_frame(data) == Frame(Opcode.BINARY, data).serialize(mask=False)


def test_the_server_process_collects_garbage_less_often_and_never_walks_its_startup_objects() -> None:
    import gc

    from server.ops import collector

    before = gc.get_threshold()
    try:
        collector.tune()
        assert gc.get_threshold() == collector.THRESHOLDS
        assert gc.get_freeze_count() > 1000, "the modules' objects are frozen"
        garbage = []
        garbage.append(garbage)  # a cycle: still collected by a full collection
        del garbage
        assert gc.collect() >= 1
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
