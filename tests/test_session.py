"""The seat session without sockets or Redis: a move frame in, a decision out; the store's answer in, an ack out."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from server.race import rules
from server.race.session import Pending, Refused, Resend, SeatSession
from server.store import Committed, Conflict, Duplicate, Line, MoveCommit, PlayerState, RaceMeta
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
