"""An event's states and the transitions between them: one table, read by the runner's formats and
filled into the Redis step script (server/store/scripts/lib_event_state.lua), which refuses any move
the table does not list. So a bug in a format, or two processes racing, can never put an event in a
state the table does not lead to.

A state is the pair (status, round_state) of docs/events.md. Which transitions a format uses is its
own business (a round-based format: ``start_rounds`` then claim, open, start and score each round; an
arena: ``start_pairing``, ``pair`` again and again, ``close``); the table holds them all, and
``cancel``, the organiser's calling off of an event that has not started.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from .protocol import EventStatus, RoundState

State = tuple[EventStatus, RoundState]

REGISTRATION: State = ("registration", "waiting")
BETWEEN_ROUNDS: State = ("running", "done")
OPENING: State = ("running", "opening")
OPEN: State = ("running", "open")
RACING: State = ("running", "running")
FINISHED: State = ("finished", "done")
CANCELLED: State = ("cancelled", "waiting")
"""Called off before the start: no round was played, no race made."""


class Transition(enum.StrEnum):
    """The name of a move an event may make. Its value is the name stored and sent to the Redis step
    script (server/store/scripts/lib_event_state.lua), so a value never changes; a member is a str, so it
    goes to Redis as its value. Why an enum: a misspelt transition is an AttributeError at import (and a
    mypy error) rather than an ``illegal_transition`` refusal at run time."""

    START_ROUNDS = "start_rounds"
    START_PAIRING = "start_pairing"
    CLAIM_ROUND = "claim_round"
    TAKE_OVER_CLAIM = "take_over_claim"
    OPEN_ROUND = "open_round"
    START_HEATS = "start_heats"
    SCORE_ROUND = "score_round"
    SCORE_LAST_ROUND = "score_last_round"
    PAIR = "pair"
    CLOSE = "close"
    CANCEL = "cancel"


@dataclass(frozen=True)
class Rule:
    """A transition's rule: a move from any of ``sources`` to ``target``. ``after_claim``: only once the
    state's claim (``claim_until``) has run out, so a live claimer keeps its claim."""

    sources: tuple[State, ...]
    target: State
    after_claim: bool = False


TRANSITIONS: dict[Transition, Rule] = {
    # The organiser's start (or a scheduled event's own, at its starts_at: the same step): a round-based
    # format's first round is due at once; an arena pairs at once.
    Transition.START_ROUNDS: Rule((REGISTRATION,), BETWEEN_ROUNDS),
    Transition.START_PAIRING: Rule((REGISTRATION,), RACING),
    # A round: claimed for drawing (a dead claimer's claim is taken over once it ran out), drawn, raced, scored.
    Transition.CLAIM_ROUND: Rule((BETWEEN_ROUNDS,), OPENING),
    Transition.TAKE_OVER_CLAIM: Rule((OPENING,), OPENING, after_claim=True),
    Transition.OPEN_ROUND: Rule((OPENING,), OPEN),
    Transition.START_HEATS: Rule((OPEN,), RACING),
    Transition.SCORE_ROUND: Rule((RACING,), BETWEEN_ROUNDS),
    Transition.SCORE_LAST_ROUND: Rule((RACING,), FINISHED),
    # An arena: pairings while it runs (each counted: ``pairings``), then closed once all races are scored.
    Transition.PAIR: Rule((RACING,), RACING),
    Transition.CLOSE: Rule((RACING,), FINISHED),
    # The organiser calls an event off while it takes entries (never once it started: its races are real).
    Transition.CANCEL: Rule((REGISTRATION,), CANCELLED),
}
"""(state, transition) -> next state: every move an event may make."""

PROTECTED_FIELDS = ("status", "round_state", "version")
"""Fields a transition's other changes may not set: the table sets the state, the script the version."""


def next_state(state: State, name: Transition) -> State | None:
    """The state ``name`` leads to from ``state``; None when the table does not allow it."""
    t = TRANSITIONS.get(name)
    return t.target if t is not None and state in t.sources else None


def lua_table() -> str:
    """The table as a Lua table constructor's body (the step script's copy of it)."""
    rows = []
    for name, t in TRANSITIONS.items():
        sources = ", ".join(f"['{s}/{r}'] = true" for s, r in t.sources)
        rows.append(f"['{name.value}'] = {{from = {{{sources}}}, status = '{t.target[0]}', "
                    f"round_state = '{t.target[1]}', after_claim = {str(t.after_claim).lower()}}}")
    return ", ".join(rows)
