"""Entry conditions: what an account must have to enter an event, and to count on the daily board.

A scout is a fresh second account: it has no rated races and is minutes old. Asking for a few finished
rated races and an account some days old makes each scout cost days and real games (and the
registration limit per address makes many of them cost an address each). The check reads the account
as it is when it enters; the refusal says what is missing, in the player's words.
"""

from __future__ import annotations

from dataclasses import dataclass

import msgspec

from shared import protocol as p

from ..accounts.ratings import MU, SIGMA, shown
from ..store.fairplay import AccountFacts, FairPlayStore

DAY = 86_400


def _age_words(seconds: int) -> str:
    if seconds % DAY == 0 and seconds >= DAY:
        days = seconds // DAY
        return f"{days} day{'s' if days != 1 else ''}"
    if seconds % 3600 == 0 and seconds >= 3600:
        hours = seconds // 3600
        return f"{hours} hour{'s' if hours != 1 else ''}"
    return f"{seconds} s"


def rating_of(facts: AccountFacts) -> int | None:
    """The account's shown rating in the variant (None: not rated there yet)."""
    if facts.mu is None or facts.sigma is None:
        return None
    return shown(facts.mu, facts.sigma)


def missing(conditions: p.EntryConditions, facts: AccountFacts, variant: str, now: int) -> list[str]:
    """What ``facts``' account lacks to meet ``conditions`` (empty: it meets them), each in words."""
    out = []
    if facts.rated < conditions.min_rated_races:
        need = conditions.min_rated_races - facts.rated
        out.append(f"{conditions.min_rated_races} finished rated races of {variant} (you have {facts.rated}: "
                   f"{need} more)")
    age = max(0, (now - facts.created_at) // 1000)
    if age < conditions.min_account_age:
        out.append(f"an account at least {_age_words(conditions.min_account_age)} old (yours is "
                   f"{_age_words(int(age))} old)")
    rating = rating_of(facts)
    if conditions.min_rating is not None and (rating is None or rating < conditions.min_rating):
        have = "none yet" if rating is None else str(rating)
        out.append(f"a {variant} rating of at least {conditions.min_rating} (yours: {have})")
    if conditions.max_rating is not None and (rating if rating is not None else shown(MU, SIGMA)) > conditions.max_rating:
        out.append(f"a {variant} rating of at most {conditions.max_rating} (yours: {rating})")
    return out


def refusal_words(lacking: list[str]) -> str:
    """The whole refusal: ``this event asks for …``."""
    return "this event asks for " + "; ".join(lacking)


def bad_conditions(conditions: p.EntryConditions | None) -> str | None:
    """Why the organiser's conditions cannot be met by anyone (a range upside down), or None."""
    if conditions is None or conditions.min_rating is None or conditions.max_rating is None:
        return None
    if conditions.min_rating > conditions.max_rating:
        return (f"conditions: min_rating {conditions.min_rating} is above max_rating {conditions.max_rating}: "
                "nobody could enter")
    return None


@dataclass(frozen=True)
class DailyCondition:
    """The server's condition for counting on the daily board (``--daily-min-rated``, ``--daily-min-age``)."""

    min_rated_races: int
    min_account_age: int

    def counts(self, facts: AccountFacts, variant: str, now: int) -> bool:
        cond = p.EntryConditions(min_rated_races=self.min_rated_races, min_account_age=self.min_account_age)
        return not missing(cond, facts, variant, now)


async def entry_refusal(store: FairPlayStore, conditions_json: str, account: str, variant: str,
                        now: int) -> str | None:
    """Why ``account`` may not enter an event of these conditions (its stored JSON; "" for none), or None."""
    if not conditions_json:
        return None
    conditions = msgspec.json.decode(conditions_json, type=p.EntryConditions)
    (facts,) = await store.facts([account], variant)
    lacking = missing(conditions, facts, variant, now)
    return refusal_words(lacking) if lacking else None
