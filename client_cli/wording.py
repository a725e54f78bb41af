"""The player's words for what the protocol says: limits, refusals, moves.

The wire speaks codes, the move notation (``hj``, ``WF``) and, for a field
out of range, msgspec's own text (``Expected `int` >= 1 - at `$.seats```).
A player reads none of those: they press keys ``1``..``0``, ``w`` and ``f``
and want to know the limit they broke. Everything the client shows about a
move or a refused value is worded here, from the codes and the schema in
:mod:`shared.protocol` (never from parsing the server's English), so the
limits cannot drift from the ones the server enforces.
"""

from __future__ import annotations

import re
import time
from typing import Annotated, Any, Literal

import msgspec

from shared import protocol as p
from shared.moves import Move, MoveParseError

from .keymap import describe_move

FIELD_LABELS = {
    "name": "a player name",
    "race": "a race id or join code",
    "seats": "the number of seats",
    "time_limit": "the time limit (seconds)",
    "deal": "the deal number",
    "deal_source": "the deal source",
    "start_mode": "the start mode",
    "variant": "the variant",
    "move": "a move",
    "starts_at": "the start time",
}
"""How a wire field is named to a player when the server refuses its value."""

_MSGSPEC_ERROR = re.compile(r"^(?:(?P<kind>[a-z_]+): )?(?P<detail>.*?)(?: - at `\$\.(?P<path>[\w.\[\]]+)`)?$", re.S)
_BOUND = re.compile(r"^Expected `(?P<type>int|str)`(?: of length)? (?P<op>>=|<=|>|<) (?P<limit>-?\d+)$")
_MISSING = re.compile(r"^Object missing required field `(?P<field>\w+)`$")
_WRONG_TYPE = re.compile(r"^Expected `(?P<type>\w+)`(?: \| \w+)*, got `\w+`$")
_TYPE_WORDS = {"int": "a whole number", "str": "text", "bool": "true or false", "float": "a number"}
_OP_WORDS = {">=": "at least", "<=": "at most", ">": "more than", "<": "less than"}


def field_type(struct: type[msgspec.Struct], field: str) -> Any:
    """The schema's type of ``struct.field`` (an optional field's non-``None`` side), or ``None``."""
    for f in msgspec.inspect.type_info(struct).fields:  # type: ignore[union-attr]
        if f.name == field:
            kind = f.type
            if isinstance(kind, msgspec.inspect.UnionType):
                kinds = [t for t in kind.types if not isinstance(t, msgspec.inspect.NoneType)]
                kind = kinds[0] if len(kinds) == 1 else kind
            return kind
    return None


def _range_words(lo: int | None, hi: int | None, unit: str = "") -> str | None:
    """``from 1 to 500`` / ``1 to 32 characters long``, one bound alone, or ``None`` for none."""
    if lo is not None and hi is not None:
        return f"{lo} to {hi}{unit}" if unit else f"from {lo} to {hi}"
    bound = lo if lo is not None else hi
    if bound is None:
        return None
    if unit and bound == 1:
        unit = unit.replace("characters", "character")
    return f"{'at least' if lo is not None else 'at most'} {bound}{unit}"


def limit_words(kind: Any) -> str | None:
    """``from 1 to 500``, ``1 to 32 characters long``, ``one of a, b``: the rule a value must keep."""
    if isinstance(kind, msgspec.inspect.IntType):
        lo = kind.ge if kind.ge is not None else (kind.gt + 1 if kind.gt is not None else None)
        hi = kind.le if kind.le is not None else (kind.lt - 1 if kind.lt is not None else None)
        return _range_words(lo, hi)
    if isinstance(kind, msgspec.inspect.StrType):
        return _range_words(kind.min_length, kind.max_length, " characters long")
    if isinstance(kind, msgspec.inspect.LiteralType):
        return "one of " + ", ".join(str(v) for v in kind.values)
    return None


def field_problem(struct: type[msgspec.Struct], field: str, value: Any, label: str) -> str | None:
    """What is wrong with ``value`` for ``struct.field`` in words with the limit, or ``None`` when it fits.

    The client checks what the player typed with this before sending, so a
    ``--seats 0`` or a 40-character name is refused before anything is
    created or joined, with the same limits the server applies.
    """
    kind = field_type(struct, field)
    if value is None and field in _optional_fields(struct):
        return None
    try:
        msgspec.convert(value, _annotated(kind))
    except msgspec.ValidationError:
        rule = limit_words(kind) or "valid"
        if isinstance(kind, msgspec.inspect.StrType) and isinstance(value, str):
            return f"{label} must be {rule} (this one has {len(value)})"
        return f"{label} must be {rule}, not {value!r}" if isinstance(value, str) else f"{label} must be {rule}, not {value}"
    return None


def _optional_fields(struct: type[msgspec.Struct]) -> set[str]:
    """Fields whose schema type admits ``None`` (left out, they are simply not sent)."""
    return {
        f.name for f in msgspec.inspect.type_info(struct).fields  # type: ignore[union-attr]
        if isinstance(f.type, msgspec.inspect.UnionType)
        and any(isinstance(t, msgspec.inspect.NoneType) for t in f.type.types)
    }


def argument_problem(*checks: tuple[type[msgspec.Struct], str, Any, str]) -> str | None:
    """The first of ``(struct, field, value, label)`` checks that fails, worded; ``None`` when all fit."""
    for struct, field, value, label in checks:
        problem = field_problem(struct, field, value, label)
        if problem is not None:
            return problem
    return None


def _annotated(kind: Any) -> Any:
    """A type msgspec can convert into that carries the inspected constraints."""
    if isinstance(kind, msgspec.inspect.IntType):
        return Annotated[int, msgspec.Meta(ge=kind.ge, le=kind.le, gt=kind.gt, lt=kind.lt)]
    if isinstance(kind, msgspec.inspect.StrType):
        return Annotated[str, msgspec.Meta(min_length=kind.min_length, max_length=kind.max_length,
                                           pattern=kind.pattern)]
    if isinstance(kind, msgspec.inspect.LiteralType):
        return Literal[kind.values]  # type: ignore[valid-type]
    return Any


_STRUCTS: dict[str, type[msgspec.Struct]] = {
    c.__struct_config__.tag: c for c in p.ClientMessage.__args__  # type: ignore[attr-defined]
}
"""Client messages by their ``type``: a refusal names the frame, the schema gives the whole rule."""


def validation_words(text: str, struct: type[msgspec.Struct] | None = None) -> str:
    """msgspec's validation text (``[kind: ]Expected ... - at `$.field```) in words.

    The whole rule comes from the schema when the field is known (``a player
    name must be 1 to 32 characters long``); otherwise the bound the text
    itself names is used. Text of any other shape is returned unchanged.
    """
    m = _MSGSPEC_ERROR.match(text.strip())
    if m is None:
        return text
    detail, path = m["detail"], m["path"]
    struct = struct or _STRUCTS.get(m["kind"] or "")
    missing = _MISSING.match(detail)
    if missing:
        return f"{FIELD_LABELS.get(missing['field'], missing['field'].replace('_', ' '))} is missing"
    if path is None:
        return text
    field = path.split(".")[0].split("[")[0]
    label = FIELD_LABELS.get(field, field.replace("_", " "))
    kind = field_type(struct, field) if struct is not None else None
    rule = limit_words(kind) if kind is not None else None
    bound = _BOUND.match(detail)
    if bound and field.endswith("_at"):  # a moment (ms since the epoch): said as a date, not a 13-digit number
        when = moment_words(int(bound["limit"]))
        return f"{label} must be {'no later than' if bound['op'] in ('<=', '<') else 'no earlier than'} {when}"
    if bound:
        if rule is None:
            unit = " characters long" if bound["type"] == "str" else ""
            unit = unit.replace("characters", "character") if bound["limit"] == "1" else unit
            rule = f"{_OP_WORDS[bound['op']]} {bound['limit']}{unit}"
        return f"{label} must be {rule}"
    wrong = _WRONG_TYPE.match(detail)
    if wrong:
        return f"{label} must be {_TYPE_WORDS.get(wrong['type'], wrong['type'])}"
    if detail.startswith("Invalid enum value"):
        return f"{label} must be {rule}" if rule else f"{label}: {detail}"
    return f"{label}: {detail}" if detail.startswith("Expected") else text


def error_words(code: str, message: str) -> str:
    """A server ``error``'s text for the player: field errors worded, others as the server says them.

    ``bad_field`` messages carry msgspec's text (this server and older ones
    alike); other codes carry a sentence already, else the protocol's
    explanation of the code. Account refusals get what to do about them.
    """
    if code == p.ErrorCode.BAD_FIELD.value:
        return validation_words(message)
    return account_words(code, message or p.explain(code))


def move_text_words(text: str) -> str:
    """A move in the wire notation as the keys that play it (``hj`` → ``8 → 0``, ``U`` → ``u (undo)``)."""
    if text == p.UNDO:
        return "u (undo)"
    try:
        return describe_move(Move.parse(text))
    except MoveParseError:
        return text


def reject_words(move_text: str | None, reason: str) -> str:
    """Why the server refused a move, led by the move in the player's keys.

    Built from the move the client sent and the reject's ``reason`` code, so
    it does not depend on the wording (or the notation) of the server's
    ``message``.
    """
    why = p.explain(reason)
    return f"{move_text_words(move_text)}: {why}" if move_text else why


WORDS = {
    p.ErrorCode.NAME_REGISTERED.value: "that name belongs to an account: pick another --name (or, if the account "
    "is yours, `thieves account import KEY` here and leave --name out)",
    p.ErrorCode.ACCOUNT_REQUIRED.value: "this race is rated, for accounts only: `thieves register NAME` once, "
    "then join without --anonymous",
    p.ErrorCode.NOT_ENOUGH_PLAYERS.value: "a rated race starts with at least two players",
}
"""The player's whole sentence for a refusal the server gives no words of its own for (its message is
only the code's explanation): what happened and what to do, in the client's commands. Said instead of
the explanation, never after it (both said the same thing twice)."""

ADVICE = {
    p.ErrorCode.BAD_NAME.value: "pick a name of 2 to 24 letters, digits, '_' or '-' (starting with a letter or digit)",
    p.ErrorCode.ACCOUNT_NAME_TAKEN.value: "pick another name",
    p.ErrorCode.REGISTER_RATE_LIMITED.value: "this address registered too many accounts lately",
    p.ErrorCode.BAD_KEY.value: "if `thieves account rotate` ran on another machine, copy its key here; "
    "else `thieves account forget` and play with --anonymous or register again",
    p.ErrorCode.ORGANISER_REQUIRED.value: "give the organiser token the server was started with "
    "(--organiser-token TOKEN, or $THIEVES_ORGANISER_TOKEN)",
}
"""What a player can do about a refusal whose message says only why: said after the server's reason."""

REQUEST_WORDED = frozenset({p.ErrorCode.BAD_KEY.value, p.ErrorCode.ORGANISER_REQUIRED.value})
"""Codes whose HTTP reason speaks of the request (its ``Authorization`` header), which the client sent, not
the player: the client says the code's explanation and the advice instead."""


def account_words(code: str | None, text: str, retry_after: float | None = None) -> str:
    """An account refusal (``bad_key``, ``account_name_taken``...) with what to do about it.

    ``text`` is what the server said (already worded). A refusal the server words only by the code's
    explanation gets the client's own sentence (:data:`WORDS`); one it words itself (a seek's "a rated
    race is for accounts only: seek an unrated race, or register") is said alone, not followed by a
    second sentence about another command. The advice comes from the code, so it stays right whatever
    the server's wording.
    """
    if code in WORDS:
        return WORDS[code] if text in ("", p.explain(code)) else text
    advice = ADVICE.get(code or "")
    if code == p.ErrorCode.REGISTER_RATE_LIMITED.value and retry_after is not None:
        advice = f"{advice}: try again in {retry_after:g} s"
    return f"{text}; {advice}" if advice and advice not in text else text


def moment_words(at_ms: int) -> str:
    """A moment (ms since the epoch) as a date and time a player reads: ``9999-12-31 23:59 UTC``."""
    import datetime

    try:
        when = datetime.datetime.fromtimestamp(at_ms / 1000, datetime.timezone.utc)
    except (OverflowError, OSError, ValueError):  # beyond the calendar: say so rather than the number
        return "the year 9999" if at_ms > 0 else "1970"
    return f"{when:%Y-%m-%d %H:%M} UTC"


def clock_time(at_ms: float) -> str:
    """A moment (ms since the epoch) as this terminal's local time of day (``21:40:05``)."""
    return time.strftime("%H:%M:%S", time.localtime(at_ms / 1000))


def unreachable_words(server: str, why: str) -> str:
    """What every command says when no race server answers at ``server`` (``why``: in a few words, as
    :func:`network_words` puts it): the HTTP commands (``client_cli.api``) and the race screens alike."""
    return f"no race server answers at {server} ({why})"


def network_words(exc: BaseException) -> str:
    """Why a connection could not be made, in a few words (never ``[Errno 111] Connection refused``)."""
    import socket

    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, socket.gaierror):
        return "unknown host"
    if isinstance(exc, TimeoutError):
        return "no answer in time"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror.lower()
    return str(exc) or type(exc).__name__
