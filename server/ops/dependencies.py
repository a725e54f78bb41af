"""The libraries this server builds on below their public surface, held to the versions it was tested with.

The transport subclasses two of uvicorn's own protocol classes (``server/transport/websocket.py``: the
websockets-sansio protocol, with websockets' frame and state types; ``server/transport/edge.py``: the h11
protocol), and the store leans on redis-py's cluster pipeline and retry classes
(``server/store/client.py``). None of these is a promise their authors keep between minor releases:
a uvicorn that renames a method the edge overrides would not fail at import but serve connections
that are never counted or never time out. So ``pyproject.toml`` pins each of them to the range the
test suite ran on, and a start outside that range (a hand-made environment, a ``pip install -U``)
stops at once with one line that says which library, which version, which range, and how to mend it,
rather than misbehaving later under load.

The ranges are written once, in ``pyproject.toml``: this module reads them from the installed
package's metadata (a source tree run without an install has none, and is not checked).
"""

from __future__ import annotations

import importlib.metadata
from typing import Iterable, Mapping

from packaging.requirements import InvalidRequirement, Requirement

DISTRIBUTION = "forty-thieves-race"
"""The name this project is installed under (``[project] name`` in pyproject.toml)."""

PINNED = {
    "uvicorn": "server/transport/websocket.py and server/transport/edge.py subclass its protocol classes",
    "websockets": "server/transport/websocket.py drives its sans-I/O protocol and frame types",
    "redis": "server/store/client.py uses its cluster pipeline and retry classes",
}
"""Each library held to its tested range, and why (said in the refusal)."""


def problems(requirements: Iterable[str], installed: Mapping[str, str | None]) -> list[str]:
    """What is wrong with the ``installed`` versions of the :data:`PINNED` libraries, one sentence each.

    ``requirements`` are the project's requirement strings (as in its metadata); ``installed`` maps a
    library's name to its installed version (None: not installed). Pure, so the rule is tested on any
    versions without installing them.
    """
    found: list[str] = []
    for text in requirements:
        try:
            requirement = Requirement(text)
        except InvalidRequirement:
            continue
        name = requirement.name.lower()
        if name not in PINNED:
            continue
        version = installed.get(name)
        wanted = str(requirement.specifier) or "any version"
        if version is None:
            found.append(f"{name} is not installed; this server needs {name}{wanted} ({PINNED[name]})")
        elif not requirement.specifier.contains(version, prereleases=True):
            found.append(f"{name} {version} is installed, but this server was tested with {name}{wanted} "
                         f"({PINNED[name]}): pip install '{name}{wanted}'")
    return found


def _installed(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def installed_problems() -> list[str]:
    """:func:`problems` of this environment: empty when every pinned library is in its range, or when
    the project is not installed (run from a source tree: there is no metadata to hold it to)."""
    try:
        requirements = importlib.metadata.requires(DISTRIBUTION) or []
    except importlib.metadata.PackageNotFoundError:
        return []
    return problems(requirements, {name: _installed(name) for name in PINNED})
