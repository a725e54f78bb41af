"""The standings rule (shared/standings.py): giving up never ranks above playing on with the same
cards home, and when two lines tie (for ratings, later for matchpoints)."""

from __future__ import annotations

from server.store import Line
from shared.standings import places, ranked, tied
from shared import protocol as p


def _line(seat: int, status: str = "racing", home: int = 0, home_at: int = 0, finished_at: int = 0,
          moves: int = 10, online: int = 1) -> Line:
    return Line(seat, f"p{seat}", status, home, moves, home_at, finished_at, online)


def _order(lines: list[Line]) -> list[int]:
    return [line.seat for _, line in ranked(lines)]


def test_the_issue_example_giving_up_early_ranks_below_playing_on_with_the_same_cards_home() -> None:
    quitter = _line(0, status="gave_up", home=1, home_at=1_000, finished_at=1_500, moves=2)
    stayer = _line(1, status="racing", home=1, home_at=40_000, moves=300)
    assert _order([quitter, stayer]) == [1, 0]
    assert not tied(quitter, stayer)


def test_blocked_and_disconnected_players_played_on_too() -> None:
    quitter = _line(0, status="gave_up", home=5, home_at=100)
    blocked = _line(1, status="blocked", home=5, home_at=900)
    gone = _line(2, status="racing", home=5, home_at=800, online=0)  # shows as disconnected
    assert _order([quitter, blocked, gone]) == [2, 1, 0]


def test_more_cards_home_still_beats_playing_on() -> None:
    quitter = _line(0, status="gave_up", home=6, home_at=100)
    stayer = _line(1, status="racing", home=5, home_at=50)
    assert _order([stayer, quitter]) == [0, 1]


def test_within_a_class_who_got_there_first_then_seat() -> None:
    lines = [_line(0, home=3, home_at=500), _line(1, home=3, home_at=400), _line(2, home=3, home_at=400),
             _line(3, status="gave_up", home=3, home_at=100), _line(4, status="gave_up", home=3, home_at=50)]
    assert _order(lines) == [1, 2, 0, 4, 3]


def test_finishers_first_by_time() -> None:
    lines = [_line(0, home=100, home_at=10), _line(1, status="finished", home=104, finished_at=900),
             _line(2, status="finished", home=104, finished_at=800)]
    assert _order(lines) == [2, 1, 0]


def test_ties_only_when_the_standings_cannot_tell_them_apart() -> None:
    assert tied(_line(0, status="finished", home=104, finished_at=900),
                _line(1, status="finished", home=104, finished_at=900))
    assert not tied(_line(0, status="finished", home=104, finished_at=900),
                    _line(1, status="finished", home=104, finished_at=901))
    assert tied(_line(0, home=7, home_at=300), _line(1, status="blocked", home=7, home_at=300))
    assert tied(_line(0, status="gave_up", home=7, home_at=300), _line(1, status="gave_up", home=7, home_at=300))
    assert not tied(_line(0, home=7, home_at=300), _line(1, status="gave_up", home=7, home_at=300))
    assert not tied(_line(0, home=7, home_at=300), _line(1, home=7, home_at=301))
    assert not tied(_line(0, home=7, home_at=300), _line(1, home=8, home_at=300))
    assert tied(_line(0, home=0), _line(1, home=0)), "nothing home, both played on: nothing tells them apart"
    assert not tied(_line(0, status="finished", home=104, finished_at=300), _line(1, home=104, home_at=300))


def test_places_are_shared_by_ties_competition_style() -> None:
    lines = [_line(0, home=2, home_at=50), _line(1, home=2, home_at=50), _line(2, home=1, home_at=10),
             _line(3, home=0), _line(4, home=0), _line(5, status="gave_up", home=0)]
    ordered = [line for _, line in ranked(lines)]
    assert [line.seat for line in ordered] == [0, 1, 2, 3, 4, 5]
    assert places(ordered) == [1, 1, 3, 4, 4, 6]


def test_final_standings_use_the_same_rule_and_ties() -> None:
    """A Standing (times None, not 0) orders and ties like the live line it came from."""
    a = p.Standing(rank=1, seat=0, name="a", status="racing", home=1, total=104, moves=300, home_at=40_000)
    b = p.Standing(rank=2, seat=1, name="b", status="gave_up", home=1, total=104, moves=2, home_at=1_000,
                   finished_at=1_500)
    c = p.Standing(rank=3, seat=2, name="c", status="racing", home=0, total=104, moves=0)
    d = p.Standing(rank=4, seat=3, name="d", status="racing", home=0, total=104, moves=4)
    assert [s.seat for _, s in ranked([d, c, b, a])] == [0, 1, 2, 3]
    assert places([a, b, c, d]) == [1, 2, 3, 3]
