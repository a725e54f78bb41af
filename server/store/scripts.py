"""The Lua scripts: one file each in ``scripts/``, read once and registered once per client.

A script's first line may name the libraries it needs (``-- uses: events
running``): ``lib_<name>.lua`` goes before it, in that order. ``{{NAME}}``
marks a layout that Python defines (:data:`PLACEHOLDERS`), so that a field
order or a cap is written once. ``register_script`` keeps the SHA and
reloads a script Redis has forgotten (SCRIPT FLUSH, a restarted Redis).
"""

from __future__ import annotations

import functools
from importlib import resources
from typing import Any

from shared import event_states

from .keys import EVENTS_MAX
from .records import LINE_FIELDS, MOVE_FIELDS

PLACEHOLDERS = {
    "EVENTS_MAX": str(EVENTS_MAX),
    "LINE_FIELDS": ", ".join(f"'{name}'" for name in LINE_FIELDS),
    # cmsgpack.pack's arguments for a stored line f (two texts, then whole numbers, 0 when not written):
    # spelled out, since packing a table built for the purpose cost Redis about a microsecond more a move
    "LINE_PACK": ", ".join(["f[1]", "f[2]"] + [f"tonumber(f[{i}]) or 0" for i in range(3, len(LINE_FIELDS) + 1)]),
    # the event's state table, which the step scripts enforce (shared/event_states.py)
    "EVENT_TRANSITIONS": event_states.lua_table(),
    # a move's place of each value in moves.lua's packed moves: its race's number, then records.MOVE_FIELDS
    "MOVE_AT": ", ".join(f"{name} = {i}" for i, name in enumerate(("race", *MOVE_FIELDS), 1)),
    "EVENT_PROTECTED": ", ".join(f"['{name}'] = true" for name in event_states.PROTECTED_FIELDS),
}
_USES = "-- uses:"
if len(LINE_FIELDS) >= 16:
    raise ValueError("lib_events.lua packs a line as a msgpack fixarray: fewer than 16 fields")


def _read(filename: str) -> str:
    return resources.files(__package__).joinpath("scripts", filename).read_text()


@functools.cache
def source(name: str) -> str:
    """The full text of script ``name`` (its libraries first, placeholders filled in)."""
    body = _read(f"{name}.lua")
    first = body.split("\n", 1)[0]
    libraries = first[len(_USES):].split() if first.startswith(_USES) else []
    text = "".join(_read(f"lib_{lib}.lua") for lib in libraries) + body
    for key, value in PLACEHOLDERS.items():
        text = text.replace("{{" + key + "}}", value)
    if "{{" in text:
        raise ValueError(f"script {name}: a placeholder without a value: {text[text.index('{{'):][:40]!r}")
    return text


def register(redis: Any, name: str) -> Any:
    """Script ``name`` registered on ``redis`` (call it with ``keys=`` and ``args=``)."""
    return redis.register_script(source(name))
