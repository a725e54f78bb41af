"""Scheduled and recurring events (docs/events.md, "Schedules"): the rules of an event's ``starts_at``
and ``repeat``, written once for the server (which refuses a bad schedule before storing anything)
and the client (which reads ``--starts-at``).

A repeat schedule is a standard five-field cron expression (minute hour day-of-month month
day-of-week), read in UTC by croniter: the usual cron library of Python, kept up by the pallets-eco
group (and used by Airflow). Six-field forms (seconds) and other extensions are refused, so that what
an organiser writes means what cron means.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone

from croniter import CroniterBadDateError, croniter

CRON_FIELDS = 5
MAX_REPEAT_LENGTH = 100
LAST_MS = 253_402_300_799_999
"""The latest time a schedule may name (9999-12-31 23:59:59.999 UTC): a later one has no date to show
(Python's datetime ends there), so every start an organiser sends or a repeat makes is bounded by it."""


class BadSchedule(ValueError):
    """A ``starts_at`` or ``repeat`` the server refuses (``bad_schedule``); the message says why."""


def _utc(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc)


def next_start(repeat: str, after_ms: int) -> int:
    """The first time (ms) strictly after ``after_ms`` that the cron expression ``repeat`` names (UTC).
    Raises :class:`BadSchedule` when it is not a five-field cron expression, never fires, or next fires
    after :data:`LAST_MS`."""
    fields = repeat.split()
    if len(repeat) > MAX_REPEAT_LENGTH or len(fields) != CRON_FIELDS or not croniter.is_valid(repeat):
        raise BadSchedule(f"repeat: {repeat!r} is not a five-field cron expression "
                          "(minute hour day month weekday, e.g. '0 * * * *': every hour)")
    try:
        at = int(round(croniter(repeat, _utc(after_ms)).get_next(float) * 1000))
    except CroniterBadDateError:
        raise BadSchedule(f"repeat: {repeat!r} never comes (no such date)") from None
    except (OverflowError, ValueError):  # (croniter's dates, like Python's, end with the year 9999)
        at = LAST_MS + 1
    if at > LAST_MS:
        raise BadSchedule(f"repeat: {repeat!r} next comes after the year 9999")
    return at


def check(starts_at: int | None, repeat: str | None, now_ms: int) -> None:
    """Refuse a schedule that cannot be kept: a start in the past (or now) or after the year 9999, a
    repeat without a start (a series needs its first occurrence's time), a repeat that is not cron or
    never comes again (or next comes after the year 9999)."""
    if starts_at is not None and starts_at <= now_ms:
        raise BadSchedule(f"starts_at: {starts_at} is not in the future (now is {now_ms})")
    if starts_at is not None and starts_at > LAST_MS:
        raise BadSchedule(f"starts_at: {starts_at} is after the year 9999 (the latest is {LAST_MS})")
    if repeat is not None:
        if starts_at is None:
            raise BadSchedule("repeat: a repeating event needs starts_at, its first occurrence's start")
        next_start(repeat, starts_at)


_MINUTES = re.compile(r"^\+(\d{1,6})$")


def parse_start(text: str, now_ms: int) -> int:
    """``--starts-at``: ``+MINUTES`` from now, or an ISO 8601 time (UTC unless it says its offset), in ms."""
    if (m := _MINUTES.match(text.strip())) is not None:
        return now_ms + int(m.group(1)) * 60_000
    try:
        at = datetime.fromisoformat(text.strip())
    except ValueError:
        raise BadSchedule(f"--starts-at: {text!r} is neither +MINUTES nor an ISO time (2026-12-24T18:00Z)") from None
    if at.tzinfo is None:
        at = at.replace(tzinfo=timezone.utc)
    return int(at.timestamp() * 1000)


def shown(ms: int) -> str:
    """A time as people read it, UTC date and minute (``2026-12-24 18:00 UTC``): no guess at the reader's
    time zone (the pages and the client alike)."""
    return _utc(ms).strftime("%Y-%m-%d %H:%M UTC")
