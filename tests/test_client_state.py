"""The client's race picture, folded from server frames (no socket needed)."""

from __future__ import annotations

from client_cli.race_state import Phase, RaceState
from shared import protocol as p
from shared.engine import Game
from shared.moves import Move

T0 = 1_700_000_000_000


def info(**kw: object) -> p.RaceInfo:
    base = dict(
        id="r1", code="ABCDEF", variant="forty-thieves", deal_source="random", seats=2, players=1,
        time_limit=60, undo=True, start_mode="creator", status="lobby", commitment="00", created_at=T0,
    )
    base.update(kw)
    return p.RaceInfo(**base)  # type: ignore[arg-type]


def view_after(*moves: str) -> p.View:
    g = Game.new()
    for m in moves:
        g.push(Move.parse(m))
    return p.View.from_player_view(g.view())


def progress(seat: int, home: int, rank: int, status: str = "racing") -> p.PlayerProgress:
    return p.PlayerProgress(seat=seat, name=f"p{seat}", home=home, total=104, moves=1, status=status, rank=rank)


def welcome(**kw: object) -> p.Welcome:
    base = dict(protocol=1, race=info(), role="player", seat=0, token="tok", version=3, server_time=T0, view=None)
    base.update(kw)
    return p.Welcome(**base)  # type: ignore[arg-type]


def test_first_hello_names_the_player_and_a_resume_sends_token_and_version() -> None:
    s = RaceState(race_ref="ABCDEF", name="ann")
    first = s.hello()
    assert (first.race, first.name, first.token, first.last_version) == ("ABCDEF", "ann", None, None)
    s.apply(welcome(version=5), T0)
    s.apply(p.Progress(version=9, server_time=T0, race_status="lobby", players=[progress(0, 0, 1, "waiting")]), T0)
    again = s.hello()
    assert (again.token, again.last_version, again.name) == ("tok", 9, None)
    assert p.decode_client(p.encode(again)) == again


def test_a_new_seat_hello_carries_one_join_id_until_welcomed_so_its_retry_finds_the_seat() -> None:
    """A hello answered ``unavailable`` (1013) after Redis stored its seat is sent again as it was: the
    same ``join_id`` gets that seat back (docs/protocol.md, "A join answered unavailable")."""
    s = RaceState(race_ref="ABCDEF", name="ann")
    first = s.hello()
    assert first.join_id is not None and first.token is None
    s.apply(p.error(p.ErrorCode.UNAVAILABLE, ref="hello"), T0)
    assert s.hello().join_id == first.join_id and s.fatal is None
    assert p.decode_client(p.encode(first)) == first
    assert RaceState(race_ref="ABCDEF", name="ann").hello().join_id != first.join_id, "one per attempt"
    s.apply(welcome(), T0)
    assert s.hello().join_id is None, "the token takes the seat back from now on"
    watcher = RaceState(race_ref="ABCDEF", role="spectator")
    assert watcher.hello().join_id is None
    saved = RaceState(race_ref="ABCDEF", name="ann", token="old", saved_token=True)
    saved.apply(p.error(p.ErrorCode.BAD_TOKEN, ref="hello"), T0)
    assert saved.hello().join_id not in (None, first.join_id), "a saved seat gone: a new attempt"


def test_phases_follow_the_server_clock_not_the_local_one() -> None:
    s = RaceState(race_ref="r1")
    assert s.phase(T0) is Phase.JOINING
    s.apply(welcome(server_time=T0 + 60_000), T0)  # the server's clock runs a minute ahead
    assert s.phase(T0) is Phase.LOBBY
    s.apply(p.Countdown(version=4, starts_at=T0 + 63_000, ends_at=T0 + 123_000, server_time=T0 + 60_000,
                        view=view_after()), T0)
    assert s.phase(T0) is Phase.COUNTDOWN and s.seconds_to_start(T0) == 3.0
    assert s.view is not None and s.view.cards_home == 0
    assert s.can_move(T0) == "wait for the start" and s.can_move(T0 + 3_000) is None
    assert s.phase(T0 + 3_000) is Phase.RUNNING
    assert s.seconds_left(T0 + 3_000) == 60.0 and s.seconds_elapsed(T0 + 13_000) == 10.0


def test_moves_are_numbered_and_resent_only_when_the_server_did_not_play_them() -> None:
    s = RaceState(race_ref="r1", name="ann")
    s.apply(welcome(race=info(status="running", starts_at=T0 - 1000, ends_at=T0 + 60_000), view=view_after()), T0)
    m1, m2, m3 = s.new_move("hd"), s.new_move("S"), s.new_move("S")
    assert [m.seq for m in (m1, m2, m3)] == [1, 2, 3]
    s.apply(p.Ack(seq=1, move="hd", version=4, view=view_after("hd"), status="racing"), T0)
    assert [m.seq for m in s.pending] == [2, 3] and s.view is not None and s.view.move_count == 1
    # the connection drops; the server had played seq 2 but not 3
    s.apply(welcome(seq=2, version=6, view=view_after("hd", "S")), T0)
    assert [(m.seq, m.move) for m in s.resend()] == [(3, "S")]
    assert s.new_move("ab").seq == 4


def test_a_reject_drops_the_move_and_keeps_the_reason() -> None:
    s = RaceState(race_ref="r1")
    s.apply(welcome(), T0)
    s.new_move("ab")
    s.apply(p.Reject(seq=1, reason="not_one_rank_lower", message="ab: too high", version=3), T0)
    assert s.pending == [] and s.last_reject is not None and s.last_reject.reason == "not_one_rank_lower"


def test_progress_merges_by_seat_and_full_frames_replace() -> None:
    s = RaceState(race_ref="r1")
    s.apply(welcome(progress=[progress(0, 0, 1), progress(1, 0, 2)]), T0)
    s.apply(p.Progress(version=5, server_time=T0, race_status="running", players=[progress(1, 9, 1)]), T0)
    s.apply(p.Progress(version=6, server_time=T0, race_status="running", players=[progress(0, 3, 2)]), T0)
    assert [(pp.seat, pp.home, pp.rank) for pp in s.ranking()] == [(1, 9, 1), (0, 3, 2)]
    s.apply(p.Progress(version=7, server_time=T0, race_status="running", players=[progress(1, 9, 1)], full=True), T0)
    assert list(s.players) == [1] and s.version == 7


def test_my_status_and_the_end() -> None:
    s = RaceState(race_ref="r1")
    s.apply(welcome(race=info(status="running", starts_at=T0, ends_at=T0 + 60_000), view=view_after()), T0)
    s.apply(p.Progress(version=5, server_time=T0, race_status="running", players=[progress(0, 0, 1, "gave_up")]), T0)
    assert s.my_status == "gave_up" and s.can_move() == "your game is over"
    results = p.Results(race="r1", variant="forty-thieves", deal=1, salt="s", commitment="c", starts_at=T0,
                        ended_at=T0 + 5000, standings=[], records=[])
    s.apply(p.Finished(version=8, results=results), T0)
    assert s.phase() is Phase.FINISHED and s.can_move() == "the race is over" and s.seconds_elapsed() == 5.0


def test_a_refused_hello_is_fatal_but_a_later_error_is_not() -> None:
    s = RaceState(race_ref="nope")
    s.apply(p.Error(code="race_not_found", message="no race has that id or join code", ref="hello"), T0)
    assert s.fatal == "no race has that id or join code"
    s2 = RaceState(race_ref="r1")
    s2.apply(welcome(), T0)
    s2.apply(p.Error(code="rate_limited", message="slow down"), T0)
    assert s2.fatal is None


def test_spectators_cannot_move() -> None:
    s = RaceState(race_ref="r1", role="spectator")
    s.apply(welcome(role="spectator", seat=None, token=""), T0)
    assert s.can_move() == "spectators watch; they cannot play" and s.token is None


def test_hints_checked_deals_and_the_help_mark() -> None:
    s = RaceState(race_ref="ABCDEF", name="ann")
    s.apply(welcome(race=info(status="running", starts_at=T0 - 1_000, ends_at=T0 + 60_000),
                    view=view_after(), progress=[progress(0, 0, 1)]), local_ms=T0)
    assert s.checked_text() == "not checked" and not s.helped
    assert s.can_hint(T0) == p.ErrorCode.HINTS_NOT_ALLOWED.explanation
    s.info = info(status="running", starts_at=T0 - 1_000, ends_at=T0 + 60_000, hints=True, checked=True)
    assert s.checked_text() == "checked" and s.can_hint(T0) is None
    s.apply(p.HintAnswer(move="hd", winning=False, verdict="unknown", seq=0, version=4), local_ms=T0)
    assert s.hint is not None and s.hint.move == "hd"
    helped = progress(0, 0, 1)
    helped.helped = True
    s.apply(p.Progress(version=5, server_time=T0, race_status="running", players=[helped]), local_ms=T0)
    assert s.helped
    s.apply(p.Ack(seq=1, move="hd", version=6, view=view_after("hd"), status="racing"), local_ms=T0)
    s.apply(p.HintAnswer(move="S", winning=False, verdict="unknown", seq=0, version=6), local_ms=T0)
    assert s.hint is None, "an answer for a position already left is dropped"
    s.apply(p.GaveUp(version=7), local_ms=T0)
    assert s.can_hint(T0) == "your game is over"


def test_a_refused_field_is_told_in_words_with_its_limit() -> None:
    """An older server's msgspec text (``Expected `str` of length <= 32``) becomes a sentence (issue #12, item 2)."""
    s = RaceState(race_ref="ABCDEF", name="x" * 40)
    s.apply(p.Error(code="bad_field", message="hello: Expected `str` of length <= 32 - at `$.name`", ref="hello"), T0)
    assert s.fatal == "a player name must be 1 to 32 characters long"


def test_a_reject_keeps_the_move_it_refuses() -> None:
    s = RaceState(race_ref="r1")
    s.apply(welcome(), T0)
    s.new_move("hj")
    s.new_move("S")
    s.apply(p.Reject(seq=1, reason="not_one_rank_lower", message="hj: ...", version=3), T0)
    assert s.last_reject_move == "hj"
