"""The words a player reads for an event's format: what its score is called, what one of its races is.

Why one place: the terminal client and the web pages both show events, and each said it its own way
(a Swiss event's standings said "points" while its live lines said "matchpoints" and "mp now"; a Swiss
pairing and an arena race were called a "heat", a duplicate round's word). Both read these.
"""

from __future__ import annotations

SCORE_WORDS: dict[str, str] = {"matchpoints": "matchpoints", "points": "points", "score": "points"}
"""An ``EventInfo.score_field`` as the player reads it: a Swiss ``score`` is points (a win 1)."""

RACE_WORDS: dict[str, str] = {"duplicate": "heat", "swiss": "pairing", "arena": "race"}
"""One race of an event, by its format: a duplicate round's heat, a Swiss round's pairing, an arena's race."""

TIEBREAK_WORDS: dict[str, tuple[str, str]] = {"buchholz": ("Buchholz", "Bu"),
                                              "sonneborn_berger": ("Sonneborn-Berger", "SB")}
"""A tie-break column (``EventInfo.tiebreaks``): its name, and the short form a narrow screen shows."""


def score_word(score_field: str) -> str:
    """What the event's score is called (``EventInfo.score_field``)."""
    return SCORE_WORDS.get(score_field, score_field)


def tiebreak_words(field: str) -> tuple[str, str]:
    """A tie-break's name and its short form (the field's own name for one not named here)."""
    return TIEBREAK_WORDS.get(field, (field.replace("_", "-").title(), field[:2]))


def race_word(event_format: str) -> str:
    """What one race of the event is called (``EventInfo.format``); "race" for a format not named here."""
    return RACE_WORDS.get(event_format, "race")
