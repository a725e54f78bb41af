"""The seat session without sockets or Redis: a move frame in, a decision out; the store's answer in, an ack out."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path

import pytest

from server.race import rules
from server.race.session import MOVE_RETRIES, CatchUp, Failed, Pending, Refused, Resend, SeatSession
from server.store import Committed, Conflict, Duplicate, Line, MoveCommit, PlayerState, RaceMeta, StoreError
from shared import protocol as p
from shared.engine import Game
from shared.variants import get_variant

WIN = json.loads((Path(__file__).parent / "data" / "race_win_line.json").read_text())
NOW = 1_000_000


def _meta(**kw: object) -> RaceMeta:
    meta = rules.new_race(p.Create(seats=2, deal_source="number", deal=WIN["deal"]), NOW - 5000)
    running: dict[str, object] = {"status": "started", "starts_at": NOW - 1000, "ends_at": NOW + 60_000, "players": 1}
    return replace(meta, **{**running, **kw})  # type: ignore[arg-type]


def _state(moves: list[str], seq: int | None = None, status: str = "racing") -> PlayerState:
    line = Line(0, "ann", status, 0, len(moves), 0, 0, 1)
    return PlayerState(0, "ann", status, len(moves) if seq is None else seq, len(moves), moves, line)


def _session(moves: list[str] | None = None, **meta_kw: object) -> tuple[SeatSession, RaceMeta]:
    meta = _meta(**meta_kw)
    session = SeatSession(0)
    session.load(meta, _state(moves or []))
    return session, meta


def test_a_legal_move_is_pending_with_what_to_store_and_its_ack_carries_the_new_board() -> None:
    session, meta = _session()
    step = session.check(p.Move(seq=1, move=WIN["moves"][0]), meta, NOW)
    assert isinstance(step, Pending)
    mirror = Game.new(get_variant("forty-thieves"), WIN["deal"])
    mirror.push_text(WIN["moves"][0])
    assert step.commit(0) == MoveCommit(seat=0, now=NOW, seq=1, expected_n=0, move=WIN["moves"][0],
                                        home=mirror.cards_home, moves=mirror.move_count, status="racing")
    ack = session.settle(step, Committed(version=7, race_done=False))
    assert isinstance(ack, p.Ack) and ack.seq == 1 and ack.version == 7 and not ack.duplicate
    assert ack.view == p.View.from_player_view(mirror.view())
    assert (session.n, session.seq, session.version) == (1, 1, 7)


@pytest.mark.parametrize("result", [Conflict(n=3), Duplicate(version=9, n=1)])
def test_a_move_the_store_did_not_take_is_taken_back(result: Conflict | Duplicate) -> None:
    session, meta = _session()
    before = session.view()
    step = session.check(p.Move(seq=1, move=WIN["moves"][0]), meta, NOW)
    assert isinstance(step, Pending)
    assert session.settle(step, result) is None, "reload and decide again"
    assert session.view() == before and (session.n, session.seq) == (0, 0)


@pytest.mark.parametrize(("meta_kw", "code"), [
    ({"status": "lobby"}, "race_not_started"),
    ({"starts_at": NOW + 1}, "race_not_started"),
    ({"ends_at": NOW}, "race_over"),
    ({"status": "finished"}, "race_over"),
])
def test_moves_outside_the_running_race_are_refused(meta_kw: dict[str, object], code: str) -> None:
    session, meta = _session(**meta_kw)
    with pytest.raises(Refused) as refused:
        session.check(p.Move(seq=1, move=WIN["moves"][0]), meta, NOW)
    assert refused.value.code == code


def test_refusals_by_rule_change_nothing() -> None:
    session, meta = _session()
    before = session.view()
    for text, code in [("aa", "same_column"), ("zz9", "bad_move"), ("U", "nothing_to_undo")]:
        with pytest.raises(Refused) as refused:
            session.check(p.Move(seq=1, move=text), meta, NOW)
        assert refused.value.code == code
    with pytest.raises(Refused) as refused:
        session.check(p.Move(seq=1, move=WIN["moves"][0], seat=1), meta, NOW)
    assert refused.value.code == "not_your_seat"
    assert session.view() == before and session.n == 0


def test_undo_follows_the_race_setting_and_never_takes_back_a_draw() -> None:
    session, meta = _session(["S"])
    with pytest.raises(Refused) as refused:
        session.check(p.Move(seq=2, move="U"), meta, NOW)
    assert refused.value.code == "undo_not_allowed"
    session, meta = _session([WIN["moves"][0]], undo=False)
    with pytest.raises(Refused) as refused:
        session.check(p.Move(seq=2, move="U"), meta, NOW)
    assert refused.value.code == "undo_disabled"
    session, meta = _session([WIN["moves"][0]])
    step = session.check(p.Move(seq=2, move="U"), meta, NOW)
    assert isinstance(step, Pending) and step.text == "U" and step.moves == 0, "an undone move does not count"


def test_a_used_seq_is_a_resend_answered_from_the_stored_log() -> None:
    session, meta = _session([WIN["moves"][0]])
    assert isinstance(session.check(p.Move(seq=1, move=WIN["moves"][0]), meta, NOW), Resend)
    ack = session.resent(p.Move(seq=1, move=WIN["moves"][0]), _state([WIN["moves"][0]]))
    assert ack.duplicate and ack.move == WIN["moves"][0]
    with pytest.raises(Refused) as refused:
        session.resent(p.Move(seq=1, move="S"), _state([WIN["moves"][0]]))
    assert refused.value.code == "stale_sequence"


def test_the_winning_move_finishes_the_player_and_later_moves_are_refused() -> None:
    session, meta = _session(WIN["moves"][:-1])
    step = session.check(p.Move(seq=len(WIN["moves"]), move=WIN["moves"][-1]), meta, NOW)
    assert isinstance(step, Pending) and step.status == "finished" and step.home == 104
    ack = session.settle(step, Committed(version=500, race_done=True))
    assert ack is not None and ack.status == "finished" and session.done
    with pytest.raises(Refused) as refused:
        session.check(p.Move(seq=len(WIN["moves"]) + 1, move="S"), meta, NOW)
    assert refused.value.code == "player_finished"


# ---------------------------------------------------------------- the move in flight and what lands


def test_a_move_in_flight_lands_as_its_ack_and_the_next_may_go() -> None:
    session, meta = _session()
    step = session.begin(p.Move(seq=1, move=WIN["moves"][0]), meta, NOW)
    assert isinstance(step, Pending) and session.moving is not None and session.moving.step is step
    landed = session.landed(Committed(version=7, race_done=False, line=b"x"))
    assert isinstance(landed, p.Ack) and landed.seq == 1 and landed.version == 7 and not landed.duplicate
    assert session.moving is None and (session.n, session.seq, session.version) == (1, 1, 7)
    assert isinstance(session.begin(p.Move(seq=2, move=WIN["moves"][1]), meta, NOW), Pending)


def test_a_resend_puts_nothing_in_flight() -> None:
    session, meta = _session([WIN["moves"][0]])
    assert isinstance(session.begin(p.Move(seq=1, move=WIN["moves"][0]), meta, NOW), Resend)
    assert session.moving is None


def test_only_one_move_is_in_flight_at_a_time() -> None:
    session, meta = _session()
    session.begin(p.Move(seq=1, move=WIN["moves"][0]), meta, NOW)
    with pytest.raises(AssertionError):
        session.begin(p.Move(seq=2, move=WIN["moves"][1]), meta, NOW)


def test_a_conflict_catches_up_and_retries_until_the_retries_are_spent() -> None:
    """Another connection of the seat moved first: reload, then check and send the same frame again, at
    most MOVE_RETRIES times; after that the move is refused ``internal`` (two connections racing that long
    is a bug, not play)."""
    session, meta = _session()
    before = session.view()
    msg = p.Move(seq=1, move=WIN["moves"][0])
    conflicts = 0
    for _ in range(MOVE_RETRIES + 1):
        session.begin(msg, meta, NOW, conflicts)
        landed = session.landed(Conflict(n=0))
        assert isinstance(landed, CatchUp) and landed.retry and landed.stored == 0 and landed.moving.msg is msg
        assert session.view() == before and session.moving is None, "the move was taken back"
        if landed.moving.conflicts == MOVE_RETRIES:
            break
        conflicts = SeatSession.again(landed.moving)
        assert conflicts == landed.moving.conflicts + 1
    with pytest.raises(Refused) as refused:
        SeatSession.again(landed.moving)
    assert refused.value.code == "internal"


def test_a_duplicate_catches_up_to_answer_it_as_a_resend() -> None:
    session, meta = _session()
    session.begin(p.Move(seq=1, move=WIN["moves"][0]), meta, NOW)
    landed = session.landed(Duplicate(version=9, n=1))
    assert isinstance(landed, CatchUp) and not landed.retry and landed.stored == 1
    assert (session.n, session.seq) == (0, 0), "the reload decides"


def test_a_move_the_store_refused_is_taken_back_and_answered_with_its_code() -> None:
    session, meta = _session()
    before = session.view()
    session.begin(p.Move(seq=1, move=WIN["moves"][0]), meta, NOW)
    landed = session.landed(StoreError("race_over"))
    assert isinstance(landed, Failed) and isinstance(landed.error, Refused) and landed.error.code == "race_over"
    assert session.loaded and session.view() == before and session.moving is None


@pytest.mark.parametrize("error", [ConnectionError("redis went away"), asyncio.CancelledError()])
def test_a_move_whose_fate_is_unknown_forgets_the_game(error: BaseException) -> None:
    """Whether Redis applied it is unknown: the cached game is dropped (the next move reloads it, and a resend
    of this seq is then acknowledged as a duplicate if it went through); a shutdown answers nothing."""
    session, meta = _session()
    session.begin(p.Move(seq=1, move=WIN["moves"][0]), meta, NOW)
    landed = session.landed(error)
    assert isinstance(landed, Failed) and not session.loaded and session.moving is None
    assert landed.error is (None if isinstance(error, asyncio.CancelledError) else error)


def test_giving_up_ends_the_moves() -> None:
    session, meta = _session([WIN["moves"][0]])
    gave_up = session.gave_up(12)
    assert gave_up == p.GaveUp(version=12) and session.done and session.version == 12
    with pytest.raises(Refused) as refused:
        session.check(p.Move(seq=2, move="S"), meta, NOW)
    assert refused.value.code == "player_finished"


def test_a_seat_given_back_in_the_lobby_is_never_loaded_again() -> None:
    """Leaving: the seat's generation moved on (or it is nobody's): this connection must not act for it."""
    meta = _meta()
    session = SeatSession(0, gen=1)
    with pytest.raises(Refused) as refused:
        session.load(meta, replace(_state([]), gen=2))
    assert refused.value.code == "bad_token" and refused.value.close is p.CloseCode.BAD_TOKEN
    assert not session.loaded
    session.load(meta, replace(_state([]), gen=1))
    assert session.loaded
