"""The text forms HTTP query parameters (and path parts) take: one strict reading each.

Why strict: Python's ``int()`` reads ``"٣"``, ``"３"``, ``" 3 "``, ``"+3"`` and ``"3_0"`` as numbers,
and ``date.fromisoformat`` reads ``"20261201"`` and (through ``datetime``) ``"2026-12-01T00:00"``
as days. The documents promise ASCII digits and ``YYYY-MM-DD``; anything else is ``bad_field``
(a :class:`ValueError` here), so that every spelling of a value means one thing.
"""

from __future__ import annotations

import datetime as dt
import re

MAX_DIGITS = 18
"""A count or version longer than this is not one (it stays within a signed 64-bit integer)."""

_COUNT = re.compile(r"[0-9]{1,%d}" % MAX_DIGITS)
_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def count(text: str) -> int:
    """A whole number >= 0 written in ASCII digits only; :class:`ValueError` for anything else."""
    if not _COUNT.fullmatch(text):
        raise ValueError(f"{text!r} is not a whole number in ASCII digits")
    return int(text)


def day(text: str) -> dt.date:
    """A calendar day written ``YYYY-MM-DD`` (ISO 8601, ASCII digits); :class:`ValueError` otherwise."""
    if not _DAY.fullmatch(text):
        raise ValueError(f"{text!r} is not a day written YYYY-MM-DD")
    return dt.date.fromisoformat(text)
