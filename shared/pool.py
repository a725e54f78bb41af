"""The pool of deals the solver proved winnable, per variant.

A race may take its deal from the pool (shown as "checked": a winning line
exists) or be any deal (shown as "not checked"), as the rule pages do. The
pool files ship inside the package (``shared/data/pool-<variant>.json``),
written by ``thieves pool build``; each winnable deal carries its winning
line, so anyone can replay it and trust the mark.

The only I/O here is reading those package files (once, cached); parsing
and choosing are pure functions of their arguments, and the random choice
takes the caller's ``random.Random`` so a server can seed or audit it.

File form::

    {"format": 1, "variant": "forty-thieves", "solver": 1, "time_limit": 10.0,
     "deals": [{"deal": 2, "moves": ["S", "aF", ...], "nodes": 350, "seconds": 0.01}, ...],
     "unwinnable": [..deal numbers..], "unknown": [..deal numbers..]}

``unwinnable`` and ``unknown`` record what was tried, so a build resumes
where it stopped and never spends time on a deal twice.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

from .variants import Variant, get_variant

POOL_FORMAT = 1


class PoolError(ValueError):
    """A pool file that is not well formed, or an empty pool asked for a deal."""


@dataclass
class Pool:
    """Deals of one variant: proven winnable (with lines), unwinnable, undecided."""

    variant: str
    lines: dict[int, tuple[str, ...]] = field(default_factory=dict)
    unwinnable: set[int] = field(default_factory=set)
    unknown: set[int] = field(default_factory=set)
    time_limit: float | None = None
    solver: int | None = None
    stats: dict[int, dict[str, float]] = field(default_factory=dict)
    """Per winnable deal: nodes and seconds the solver spent (for the curious)."""

    @property
    def deals(self) -> tuple[int, ...]:
        """The winnable deal numbers, ascending."""
        return tuple(sorted(self.lines))

    def tried(self, number: int) -> bool:
        return number in self.lines or number in self.unwinnable or number in self.unknown

    def record(self, number: int, verdict: str, moves: list[str] | tuple[str, ...] = (), **stats: float) -> None:
        """Note one solver answer (``verdict`` is ``won``/``unwinnable``/``unknown``)."""
        self.unknown.discard(number)
        if verdict == "won":
            self.lines[number] = tuple(moves)
            self.unwinnable.discard(number)
            if stats:
                self.stats[number] = dict(stats)
        elif verdict == "unwinnable":
            self.unwinnable.add(number)
        elif verdict == "unknown":
            if number not in self.lines and number not in self.unwinnable:
                self.unknown.add(number)
        else:
            raise PoolError(f"unknown verdict {verdict!r}")

    def to_json(self) -> dict[str, Any]:
        deals = []
        for n in self.deals:
            entry: dict[str, Any] = {"deal": n, "moves": list(self.lines[n])}
            entry.update(self.stats.get(n, {}))
            deals.append(entry)
        return {
            "format": POOL_FORMAT,
            "variant": self.variant,
            "solver": self.solver,
            "time_limit": self.time_limit,
            "deals": deals,
            "unwinnable": sorted(self.unwinnable),
            "unknown": sorted(self.unknown),
        }

    def dumps(self) -> str:
        """The file text: one deal per line keeps diffs of a growing pool readable."""
        data = self.to_json()
        head = {k: v for k, v in data.items() if k not in ("deals", "unwinnable", "unknown")}
        lines = ["{"]
        for k, v in head.items():
            lines.append(f"  {json.dumps(k)}: {json.dumps(v)},")
        lines.append('  "deals": [')
        lines.append(",\n".join("    " + json.dumps(d) for d in data["deals"]))
        lines.append("  ],")
        lines.append(f'  "unwinnable": {json.dumps(data["unwinnable"])},')
        lines.append(f'  "unknown": {json.dumps(data["unknown"])}')
        lines.append("}")
        return "\n".join(lines) + "\n"


def parse_pool(text: str) -> Pool:
    """Read a pool file's text; raise :class:`PoolError` with the reason when malformed."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PoolError(f"pool file is not JSON: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != POOL_FORMAT:
        raise PoolError(f"not a pool file of format {POOL_FORMAT}")
    variant = data.get("variant")
    if not isinstance(variant, str):
        raise PoolError("pool file names no variant")
    get_variant(variant)
    pool = Pool(variant, time_limit=data.get("time_limit"), solver=data.get("solver"))
    for entry in data.get("deals", []):
        if not isinstance(entry, dict) or not _is_deal(entry.get("deal")):
            raise PoolError(f"bad pool entry {entry!r}")
        moves = entry.get("moves")
        if not isinstance(moves, list) or not all(isinstance(m, str) for m in moves):
            raise PoolError(f"pool entry for deal {entry['deal']} has no move list")
        stats = {k: v for k, v in entry.items() if k not in ("deal", "moves") and isinstance(v, (int, float))}
        pool.record(entry["deal"], "won", moves, **stats)
    for name in ("unwinnable", "unknown"):
        numbers = data.get(name, [])
        if not isinstance(numbers, list) or not all(_is_deal(n) for n in numbers):
            raise PoolError(f"pool file's {name} is not a list of deal numbers")
        for n in numbers:
            pool.record(n, name)
    return pool


def _is_deal(n: object) -> bool:
    return isinstance(n, int) and not isinstance(n, bool) and n >= 1


def _key(variant: Variant | str) -> str:
    return variant.key if isinstance(variant, Variant) else get_variant(variant).key


def pool_file_name(variant: Variant | str) -> str:
    return f"pool-{_key(variant)}.json"


@lru_cache(maxsize=None)
def load_pool(variant: Variant | str) -> Pool:
    """The shipped pool of ``variant`` (an empty pool when none ships)."""
    key = _key(variant)
    try:
        text = resources.files("shared").joinpath("data", pool_file_name(key)).read_text(encoding="utf-8")
    except FileNotFoundError:
        return Pool(key)
    return parse_pool(text)


def pool_deals(variant: Variant | str) -> tuple[int, ...]:
    """Deal numbers of ``variant`` proven winnable, ascending."""
    return load_pool(_key(variant)).deals


def is_checked(variant: Variant | str, number: int) -> bool:
    """Whether deal ``number`` is in the pool: a winning line is known."""
    return number in load_pool(_key(variant)).lines


def winning_line(variant: Variant | str, number: int) -> tuple[str, ...] | None:
    """The shipped winning line of a pool deal, or ``None`` outside the pool."""
    return load_pool(_key(variant)).lines.get(number)


def random_pool_deal(variant: Variant | str, rng: random.Random) -> int:
    """A pool deal chosen with the caller's ``rng``; :class:`PoolError` when the pool is empty."""
    deals = pool_deals(variant)
    if not deals:
        raise PoolError(f"no checked deals ship for {_key(variant)}")
    return rng.choice(deals)


__all__ = [
    "Pool",
    "PoolError",
    "parse_pool",
    "load_pool",
    "pool_deals",
    "is_checked",
    "winning_line",
    "random_pool_deal",
    "pool_file_name",
]
