"""The protocol's field types and limits, and the base of every frame: what every boundary's
bodies are built from (so no boundary module imports another for a bounded string)."""

from __future__ import annotations

from typing import Annotated, Literal, Union

import msgspec


PROTOCOL_VERSION = 1
"""Raised whenever a message changes incompatibly; ``hello`` must match it."""

MAX_FRAME_BYTES = 4096
"""Largest frame a client may send; the server closes with 1009 above it."""

MAX_NESTING = 32
"""Deepest nesting of msgpack arrays and maps in a frame (ours need 4), and of JSON arrays and
objects in an HTTP body: deeper is ``bad_frame``, found by a scan before decoding, since msgspec
would recurse once per level (and hit Python's recursion limit on a 3 KB frame of nested
one-element lists, or a JSON body of ``{"a":`` 20,000 times)."""

UNDO = "U"
"""The move text that takes back the player's previous move (as in records)."""

# --------------------------------------------------------------- field types
MAX_SEQ = 10**12
"""Highest ``seq``: the store's Lua scripts keep numbers exact only to 14 digits."""
Seq = Annotated[int, msgspec.Meta(ge=0, le=MAX_SEQ)]
Version = Annotated[int, msgspec.Meta(ge=0)]
Millis = Annotated[int, msgspec.Meta(ge=0)]
"""Milliseconds since the Unix epoch, from the server's (Redis's) clock."""
MAX_NAME_LENGTH = 32
"""Longest player name, in characters (after normalising: see shared/names.py)."""
Name = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_NAME_LENGTH)]
ACCOUNT_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_-]{1,23}$"
"""An account's name: 2 to 24 letters, digits, ``_`` or ``-``, starting with a letter or digit
(unique on a server ignoring case; it is also the player's name in every race)."""
AccountKey = Annotated[str, msgspec.Meta(min_length=1, max_length=256)]
"""An account's secret key (``<name in lower case>.<secret>``), as ``POST /players`` gave it."""
ISSUED_KEY_PATTERN = r"^[a-z0-9][a-z0-9_-]{1,23}\.[A-Za-z0-9_-]{43}$"
"""The form of every key ``POST /players`` and ``POST /players/{name}/key`` issue: the account (its name
in lower case), a dot, 256 random bits in URL-safe base64 (43 characters). A client checks a key
typed or pasted against it before asking the server (``thieves account import``)."""
RaceRef = Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
Token = Annotated[str, msgspec.Meta(max_length=512)]
JoinId = Annotated[str, msgspec.Meta(min_length=16, max_length=64)]
"""Names one attempt to take a new seat: the retry of a hello whose answer was lost takes the same seat.
Random and kept by its client alone (16 characters or more: guessing it must be hopeless), it is as
good as a token for that seat until the first welcome."""
MoveText = Annotated[str, msgspec.Meta(min_length=1, max_length=8)]
Seat = Annotated[int, msgspec.Meta(ge=0, le=999)]
SeatCount = Annotated[int, msgspec.Meta(ge=1, le=500)]
MIN_TIME_LIMIT = 30
"""The shortest race (seconds), whatever makes it: ``create``, ``POST /races``, a challenge, an event's
rounds, a seek (shared/seeks.py) and the daily deal (server/config.py). ``create --time-limit 5`` made a
5-second race while a seek refused under 30 s: one minimum, here."""
TimeLimit = Annotated[int, msgspec.Meta(ge=MIN_TIME_LIMIT, le=86_400)]
MAX_WIRE_DEAL = 2**63 - 1
"""Largest deal number a race takes: msgpack integers stop at 64 bits (PySolFC's go to 10**20)."""
DealNumber = Annotated[int, msgspec.Meta(ge=1, le=MAX_WIRE_DEAL)]

Role = Literal["player", "spectator"]
StartMode = Literal["creator", "all-ready"]
DealSource = Literal["random", "number", "pool"]
"""How the deal is chosen: a secret random number, the number given in
``deal`` (a daily deal, a rematch), or a secret deal from the server's private
pool of fresh deals the solver proved winnable (the race is then "checked")."""
HintVerdict = Literal["won", "unwinnable", "unknown"]
RaceStatus = Literal["lobby", "countdown", "running", "finished"]
PlayerStatus = Literal["waiting", "ready", "racing", "blocked", "finished", "gave_up", "disconnected"]
"""``waiting``/``ready`` in the lobby; ``blocked`` is a racer with no legal
move at all (it may still undo, where the race allows it, or give up);
``disconnected`` is a racer whose last connection dropped while the race
runs (its game goes on when it comes back)."""
FinalStatus = Literal["finished", "racing", "gave_up"]
"""A racer's status once its race is over: won, played on to the clock (racing, blocked or
disconnected at the end), or gave up (``shared.standings.final_status``)."""


class _Message(msgspec.Struct, tag_field="type", kw_only=True):
    """Base of every wire message; ``type`` is the class's tag."""
