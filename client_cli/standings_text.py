"""Profiles, histories and leaderboards as text lines that fit 80 columns.

Pure functions of the typed answers (:class:`shared.protocol.Profile`,
``HistoryEntry``, ``Leaderboard``), so the layout is tested without a
server. A provisional rating (high uncertainty, some twenty rated
races) carries a ``?``, as the protocol's reference asks.
"""

from __future__ import annotations

import time

from shared import protocol as p
from shared.standings import status_words
from shared.variants import UnknownVariant, get_variant

NONE = "-"


def rating_text(rating: int | None, provisional: bool) -> str:
    """``1012`` or ``1012?`` (provisional), ``-`` before any rated race."""
    if rating is None:
        return NONE
    return f"{rating}?" if provisional else str(rating)


def duration_text(ms: int | None) -> str:
    """``4:12`` (or ``1:02:03``) from milliseconds; ``-`` for none."""
    if ms is None:
        return NONE
    seconds = int(ms // 1000)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def when_text(ms: int) -> str:
    """A moment in the local time zone, to the minute."""
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ms / 1000))


def variant_name(key: str) -> str:
    try:
        return get_variant(key).name
    except UnknownVariant:
        return key


def profile_lines(profile: p.Profile) -> list[str]:
    """The account's totals, then one line per variant played."""
    lines = [f"{profile.name} · registered {when_text(profile.created_at)[:10]} · "
             f"{profile.races} race{'s' * (profile.races != 1)} · {profile.wins} win{'s' * (profile.wins != 1)}"]
    if not profile.variants:
        lines.append("no races yet")
        return lines
    lines += ["", f"{'variant':<20} {'rating':>7} {'rated':>5} {'races':>6} {'wins':>5} {'best win':>9}"]
    for key in sorted(profile.variants, key=lambda k: (-profile.variants[k].races, k)):
        rec = profile.variants[key]
        lines.append(f"{variant_name(key)[:20]:<20} {rating_text(rec.rating, rec.provisional):>7} "
                     f"{rec.rated_races:>5} {rec.races:>6} {rec.wins:>5} {duration_text(rec.best_ms):>9}")
    if any(rec.rating is not None and rec.provisional for rec in profile.variants.values()):
        lines.append("? provisional: too few rated races for the rating to settle")
    return lines


def history_lines(entries: list[p.HistoryEntry]) -> list[str]:
    """The latest races, newest first: when, which race, place, cards home, time, rating change."""
    if not entries:
        return ["no finished races yet"]
    lines = [f"{'ended':<16} {'code':<8} {'variant':<15} {'place':>5} {'home':>7} {'time':>11}  rating"]
    for e in entries:
        change = NONE
        if e.rated and e.rating_before is not None and e.rating_after is not None:
            delta = e.rating_after - e.rating_before
            change = f"{e.rating_after} ({delta:+d})"
        time_text = duration_text(e.time_ms) if e.time_ms is not None else status_words(e.status, final=True)
        lines.append(f"{when_text(e.ended_at):<16} {e.code[:8]:<8} {variant_name(e.variant)[:15]:<15} "
                     f"{f'{e.place}/{e.players}':>5} {f'{e.home}/{e.total}':>7} {time_text:>11}  {change}")
    return lines


def leaderboard_lines(board: p.Leaderboard) -> list[str]:
    """Rank, name, rating (``?`` provisional), rated races: best first."""
    lines = [f"Leaderboard · {variant_name(board.variant)} ({board.variant})"]
    if not board.players:
        lines.append("no rated players yet (a race created with --rated puts them here)")
        return lines
    lines.append(f"{'rank':>4}  {'name':<24} {'rating':>7} {'rated races':>12}")
    for line in board.players:
        lines.append(f"{line.rank:>4}  {line.name[:24]:<24} {rating_text(line.rating, line.provisional):>7} "
                     f"{line.rated_races:>12}")
    if any(line.provisional for line in board.players):
        lines.append("? provisional: too few rated races for the rating to settle")
    return lines
