"""What a server process costs, read from outside: CPU and memory from /proc, counters from /metrics.

The benchmarks measure the server as a black box (Linux only, no extra
dependency): CPU seconds of a process over a window divided by the work the
server says it did in that window (its own ``/metrics`` counters) is the
cost of one unit of work, whatever the client's speed.
"""

from __future__ import annotations

import os
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process so far (utime + stime of /proc/<pid>/stat)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    # The command name (field 2) is in parentheses and may hold spaces: count fields after the last ')'.
    fields = stat[stat.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # fields 14 and 15 of the whole line


def io_calls(pid: int) -> int:
    """Read and write system calls of a process so far (syscr + syscw of /proc/<pid>/io: read, write and
    their vector forms, which is how libuv and Redis use sockets; recv and send are not counted)."""
    fields = dict(line.split(": ") for line in Path(f"/proc/{pid}/io").read_text().splitlines())
    return int(fields["syscr"]) + int(fields["syscw"])


def rss_kb(pid: int) -> int:
    """Resident memory of a process in KB (VmRSS of /proc/<pid>/status)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for process {pid}")


def child_named(pid: int, name: str) -> int | None:
    """The first child process of ``pid`` whose command name is ``name`` (the embedded redis-server)."""
    for children in Path(f"/proc/{pid}/task").glob("*/children"):
        for child in children.read_text().split():
            try:
                if Path(f"/proc/{child}/comm").read_text().strip() == name:
                    return int(child)
            except FileNotFoundError:  # gone since the listing
                continue
    return None


def metric(base: str, name: str) -> float:
    """One unlabelled sample of the server's Prometheus text at ``base``/metrics."""
    with urllib.request.urlopen(base + "/metrics", timeout=10) as resp:
        for line in resp.read().decode().splitlines():
            if line.startswith(name + " "):
                return float(line.split()[1])
    raise RuntimeError(f"{base}/metrics has no {name}")


@dataclass
class Window:
    """CPU seconds of each watched process, and the growth of one /metrics counter, over a measured window.

    ``pids`` maps a name to a pid, or to ``None`` for a process that cannot be
    watched (a server or Redis elsewhere), whose figure is then ``None`` too.
    The counter is read first at the start and last at the end, so the
    requests' own CPU stays out of the window. After :meth:`stop`, ``cpu``
    and ``count`` hold the figures.
    """

    pids: dict[str, int | None]
    base: str | None = None
    counter: str | None = None
    cpu: dict[str, float | None] = field(default_factory=dict)
    calls: dict[str, float | None] = field(default_factory=dict)
    """Read and write system calls of each watched process over the window (:func:`io_calls`)."""
    count: float | None = None

    def start(self) -> None:
        self.count = self._read()
        self.cpu, self.calls = self._sample(cpu_seconds), self._sample(io_calls)

    def stop(self) -> None:
        cpu, calls = self._sample(cpu_seconds), self._sample(io_calls)
        self.cpu = {k: None if v is None else v - self.cpu[k] for k, v in cpu.items()}  # type: ignore[operator]
        self.calls = {k: None if v is None else v - self.calls[k] for k, v in calls.items()}  # type: ignore[operator]
        end = self._read()
        self.count = None if end is None or self.count is None else end - self.count

    def _sample(self, read: "Callable[[int], float]") -> dict[str, float | None]:
        return {k: None if pid is None else read(pid) for k, pid in self.pids.items()}

    def _read(self) -> float | None:
        return metric(self.base, self.counter) if self.base and self.counter else None
