"""The strict text forms of query parameters (shared/params.py): ASCII digits, ISO days."""

from __future__ import annotations

import datetime as dt

import pytest

from shared import params


@pytest.mark.parametrize("text, value", [("0", 0), ("7", 7), ("0012", 12), ("9" * 18, 10**18 - 1)])
def test_a_count_is_ascii_digits(text: str, value: int) -> None:
    assert params.count(text) == value


@pytest.mark.parametrize("text", ["", " 3", "3 ", "+3", "-3", "3_0", "3.0", "３", "٣", "𝟑", "1e3", "9" * 19])
def test_anything_else_is_not_a_count(text: str) -> None:
    with pytest.raises(ValueError):
        params.count(text)


def test_a_day_is_yyyy_mm_dd() -> None:
    assert params.day("2026-12-01") == dt.date(2026, 12, 1)


@pytest.mark.parametrize("text", ["20261201", "2026-12-01T00:00", "2026-12-1", "2026-W49-2", "２０２６-１２-０１",
                                  "2026-02-30", " 2026-12-01", "2026-12-01\n", ""])
def test_anything_else_is_not_a_day(text: str) -> None:
    with pytest.raises(ValueError):
        params.day(text)
