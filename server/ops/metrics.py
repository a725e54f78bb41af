"""Counters, gauges and a histogram for ``GET /metrics`` in the Prometheus text format.

Why hand-written: the exposition format is a few lines of text, and the
hot path (a move) only bumps a dict entry; a client library would add a
dependency and a lock per increment for nothing a single-threaded asyncio
process needs. Each process reports its own figures; Prometheus sums them
over the replicas.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from typing import Callable, Iterable, Mapping

REDIS_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
"""Seconds: a healthy Redis answers a batch in well under a millisecond; the tail shows trouble."""
HINT_BUCKETS = (0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
"""Seconds: a hint that follows its previous line takes a millisecond, a search up to its budget."""


class Histogram:
    """Cumulative buckets, a sum and a count, per label value."""

    def __init__(self, buckets: Iterable[float] = REDIS_BUCKETS) -> None:
        self.buckets = tuple(buckets)
        self.counts: dict[str, list[int]] = {}
        self.sums: dict[str, float] = defaultdict(float)

    def observe(self, label: str, seconds: float) -> None:
        counts = self.counts.get(label)
        if counts is None:
            counts = self.counts[label] = [0] * (len(self.buckets) + 1)
        counts[bisect.bisect_left(self.buckets, seconds)] += 1
        self.sums[label] += seconds

    def lines(self, name: str, label_name: str) -> list[str]:
        out = []
        for label, counts in sorted(self.counts.items()):
            running = 0
            for bound, count in zip(self.buckets, counts):
                running += count
                out.append(f'{name}_bucket{{{label_name}="{label}",le="{bound}"}} {running}')
            running += counts[-1]
            out.append(f'{name}_bucket{{{label_name}="{label}",le="+Inf"}} {running}')
            out.append(f'{name}_sum{{{label_name}="{label}"}} {self.sums[label]:.6f}')
            out.append(f'{name}_count{{{label_name}="{label}"}} {running}')
        return out


class Metrics:
    """One process's figures; the server bumps them, :meth:`render` prints them."""

    def __init__(self) -> None:
        self.connections_opened = 0
        self.creations_refused: dict[str, int] = defaultdict(int)
        """error code -> race creations refused by a creation limit (HTTP and WebSocket)."""
        self.moves_accepted = 0
        self.moves_rejected: dict[str, int] = defaultdict(int)
        self.frames_out: dict[str, int] = defaultdict(int)
        self.redis_errors = 0
        self.redis_seconds = Histogram()
        self.hint_seconds = Histogram(HINT_BUCKETS)
        self.checked_tried: dict[str, int] = defaultdict(int)
        """``variant|verdict`` -> random deals the solver tried for the private pool."""
        self.checked_added: dict[str, int] = defaultdict(int)
        """variant -> checked deals this process added to the private pool."""
        self.checked_taken: dict[str, int] = defaultdict(int)
        """``variant|source`` -> pool races created (source pool / on_demand) or refused (none)."""
        self.seek_events: dict[str, int] = defaultdict(int)
        """what -> seeks this process saw: ``placed`` (matched), ``cancelled``, ``expired``, ``no_show``,
        ``requeued``, ``dropped`` (their connection stopped vouching), and ``races`` formed."""
        self.seek_cpu_seconds = 0.0
        """Process CPU time spent in pairing waves (forming groups, creating and seating their races)."""

    def rejected(self, reason: str) -> None:
        self.moves_rejected[reason] += 1

    def sent(self, kind: str, count: int = 1) -> None:
        self.frames_out[kind] += count

    def render(self, gauges: Mapping[str, tuple[str, float]],
               labelled: dict[str, tuple[str, str, dict[str, int]]] | None = None,
               counters: dict[str, tuple[str, str, dict[str, int]]] | None = None) -> str:
        """The exposition text; gauges are read at scrape time: ``gauges`` name -> (help, value),
        ``labelled`` name -> (help, label name, {label value: value}); ``counters`` as ``labelled``,
        kept elsewhere (the edge's refusals, server/transport/edge.py)."""
        lines: list[str] = []

        def family(name: str, kind: str, help_text: str, samples: Iterable[str]) -> None:
            lines.append(f"# HELP {name} {help_text}")
            lines.append(f"# TYPE {name} {kind}")
            lines.extend(samples)

        for name, (help_text, value) in gauges.items():
            family(name, "gauge", help_text, [f"{name} {_num(value)}"])
        for name, (help_text, label, values) in (labelled or {}).items():
            family(name, "gauge", help_text, _labelled(name, label, values))
        for name, (help_text, label, values) in (counters or {}).items():
            family(name, "counter", help_text, _labelled(name, label, values))
        family("thieves_connections_opened_total", "counter", "WebSocket connections accepted",
               [f"thieves_connections_opened_total {self.connections_opened}"])
        family("thieves_creations_refused_total", "counter",
               "race creations refused by a creation limit, by error code (HTTP 429/503 and create frames)",
               _labelled("thieves_creations_refused_total", "code", self.creations_refused))
        family("thieves_moves_accepted_total", "counter", "moves acknowledged (committed to Redis)",
               [f"thieves_moves_accepted_total {self.moves_accepted}"])
        family("thieves_moves_rejected_total", "counter", "moves refused, by reject reason",
               _labelled("thieves_moves_rejected_total", "reason", self.moves_rejected))
        family("thieves_frames_sent_total", "counter",
               "frames queued to clients, by message type (progress, countdown and finished are the fan-out)",
               _labelled("thieves_frames_sent_total", "type", self.frames_out))
        family("thieves_redis_errors_total", "counter", "Redis calls that failed (connection lost, timeout)",
               [f"thieves_redis_errors_total {self.redis_errors}"])
        family("thieves_redis_seconds", "histogram", "Redis round-trip time by operation",
               self.redis_seconds.lines("thieves_redis_seconds", "op"))
        family("thieves_hint_seconds", "histogram", "solver time of the hints given, by verdict",
               self.hint_seconds.lines("thieves_hint_seconds", "verdict"))
        family("thieves_checked_tried_total", "counter",
               "random deals this process solved for the private checked pool, by verdict",
               _labelled("thieves_checked_tried_total", "variant|verdict", self.checked_tried))
        family("thieves_checked_added_total", "counter", "checked deals this process added to the private pool",
               _labelled("thieves_checked_added_total", "variant", self.checked_added))
        family("thieves_checked_races_total", "counter",
               "pool races by where their deal came from (pool, on_demand) or none (refused pool_empty)",
               _labelled("thieves_checked_races_total", "variant|source", self.checked_taken))
        family("thieves_seeks_total", "counter",
               "seeks seen by this process: placed in a race, cancelled, no_show (did not join its race), "
               "requeued (a partner did not), dropped (its connection went), and races formed",
               _labelled("thieves_seeks_total", "what", self.seek_events))
        family("thieves_seek_wave_cpu_seconds_total", "counter",
               "process CPU time spent in this process's pairing waves",
               [f"thieves_seek_wave_cpu_seconds_total {_num(round(self.seek_cpu_seconds, 6))}"])
        return "\n".join(lines) + "\n"


def _labelled(name: str, label: str, values: dict[str, int]) -> list[str]:
    """Samples of one family; ``a|b`` label names pair with ``x|y`` keys (two labels)."""
    names = label.split("|")
    out = []
    for key, value in sorted(values.items()):
        pairs = ",".join(f'{n}="{v}"' for n, v in zip(names, key.split("|")))
        out.append(f"{name}{{{pairs}}} {value}")
    return out


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


Timer = Callable[[str, float], None]
"""How the store reports a round trip: ``(operation, seconds)``."""
