"""How many sockets this process may hold, and who a request comes from.

Why this exists: every connection is an open file. With the usual soft
limit of 1,024 descriptors a server took about a thousand spectators and
then reset every new connection, ``/health`` included, without a log line:
the kernel refused ``accept`` (EMFILE) before the application saw anything.
So, as Redis does for ``maxclients``:

- at start the soft ``RLIMIT_NOFILE`` is raised to the hard one
  (:func:`raise_open_files`) and the outcome is logged;
- the server holds at most ``--max-connections`` connections of any kind
  (counted by :mod:`server.transport.edge`); by default that is the open-file
  limit less :func:`reserved_descriptors`, the headroom that Redis
  connections, the edge's reserve for ``/health`` and ``/metrics``, worker
  pipes, log files and refusals in flight need;
- one beyond the limit gets a typed answer (``server_full``) instead of a reset.

:func:`client_address` names the client that creation and connection
limits count against: the socket peer, or the address a trusted proxy
forwarded.
"""

from __future__ import annotations

import ipaddress
import logging
import resource
from dataclasses import dataclass
from typing import Mapping

from ..config import DealSettings, EdgeSettings
from .log import log

POOL_SIZE = 64
"""Redis connections a process may open (server/store/client.py's pool; on a cluster, to each node).
Defined here, where the descriptors are budgeted, so that the budget needs nothing of the store."""
REDIS_POOL = POOL_SIZE + 8
"""Connections the Redis clients may open: the pool (``server.store.client``), its pub/sub
connection and the few the no-retry probe uses."""
BASE_DESCRIPTORS = 48
"""Standard streams, the listening socket, the event loop's own descriptors, log files,
the embedded Redis's pipe and socket, the pub/sub connection, modules being read."""
HTTP_SPARE = 48
"""The edge's reserve for ``/health``, ``/metrics`` and typed refusals (``edge.RESERVE``) and
refused connections still being closed: what must stay free when the connections are full."""
PER_WORKER = 8
"""Pipes and the process sentinel of each solver worker process."""
MIN_CONNECTIONS = 1
RAISE_CAP = 1 << 20
"""Where the hard limit is unlimited (RLIM_INFINITY), raise the soft one this far only."""


@dataclass(frozen=True)
class OpenFiles:
    """The soft and hard ``RLIMIT_NOFILE`` after :func:`raise_open_files`, and what it did."""

    soft: int
    hard: int
    before: int
    """The soft limit found at start."""
    error: str | None = None
    """Why raising failed (None: raised, or nothing to raise)."""


def raise_open_files() -> OpenFiles:
    """Raise the soft open-file limit to the hard one (an unprivileged process may)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = RAISE_CAP if hard == resource.RLIM_INFINITY else hard
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError) as exc:
            return OpenFiles(soft, hard, soft, error=str(exc))
        return OpenFiles(target, hard, soft)
    return OpenFiles(soft, hard, soft)


def open_file_limit() -> int:
    """The soft open-file limit now (RLIM_INFINITY counted as :data:`RAISE_CAP`)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return RAISE_CAP if soft == resource.RLIM_INFINITY else soft


def reserved_descriptors(deals: DealSettings) -> int:
    """Descriptors kept out of the WebSockets' reach (see the constants): the deals' worker processes
    (hints, the checked pool's filler) hold some."""
    workers = deals.hint_workers + (1 if deals.checked_targets() else 0)
    return BASE_DESCRIPTORS + REDIS_POOL + HTTP_SPARE + PER_WORKER * workers


def derive_max_connections(open_files: int, reserved: int) -> int:
    """WebSockets a process with ``open_files`` descriptors may hold, ``reserved`` kept spare.

    A limit below twice the reserve leaves no good answer; a quarter of it
    then still serves a few clients while the rest stays spare for Redis
    and ``/health`` (the start log warns).
    """
    return max(MIN_CONNECTIONS, open_files - reserved, open_files // 4 if open_files < 2 * reserved else 0)


def max_connections(edge: EdgeSettings, reserved: int, open_files: int | None = None) -> int:
    """``--max-connections``, or derived from the open-file limit when it is 0 (``reserved``:
    :func:`reserved_descriptors`)."""
    if edge.max_connections > 0:
        return edge.max_connections
    return derive_max_connections(open_file_limit() if open_files is None else open_files, reserved)


def log_open_files(edge: EdgeSettings, reserved: int, files: OpenFiles) -> None:
    """One line at start: the limit, whether it was raised, the connections it allows."""
    allowed = max_connections(edge, reserved, files.soft)
    fields = dict(soft=files.soft, hard=files.hard, max_connections=allowed, reserved=reserved)
    if files.error is not None:
        log("open_files_not_raised", logging.WARNING, **fields, was=files.before, error=files.error)
    elif files.soft > files.before:
        log("open_files_raised", **fields, was=files.before)
    else:
        log("open_files", **fields)
    if files.soft < 2 * reserved:
        log("open_files_low", logging.WARNING, soft=files.soft, hard=files.hard, reserved=reserved,
            advice="raise the hard limit (ulimit -Hn, LimitNOFILE=, docker --ulimit nofile=)")
    if edge.max_connections > derive_max_connections(files.soft, reserved):
        log("max_connections_above_open_files", logging.WARNING, max_connections=edge.max_connections,
            soft=files.soft, reserved=reserved, risk="new connections may be reset once descriptors run out")


Networks = list[ipaddress.IPv4Network | ipaddress.IPv6Network]


def _networks(text: str) -> Networks:
    """``--trusted-proxies``: comma-separated addresses or CIDR networks; ValueError names a bad one."""
    out = []
    for item in text.split(","):
        if item.strip():
            try:
                out.append(ipaddress.ip_network(item.strip(), strict=False))
            except ValueError as exc:
                raise ValueError(f"--trusted-proxies: {exc}") from None
    return out


def trusted_networks(edge: EdgeSettings) -> Networks:
    return _networks(edge.trusted_proxies)


def is_trusted(peer: str | None, trusted: Networks) -> bool:
    """Whether the socket peer is one of ``--trusted-proxies``."""
    if not trusted:
        return False
    try:
        addr = ipaddress.ip_address(peer or "")
    except ValueError:
        return False
    return any(addr in net for net in trusted)


def client_address(peer: str | None, headers: Mapping[str, str], trusted: Networks) -> str:
    """Whom a request counts against: the socket peer, unless that is a trusted proxy.

    Behind trusted proxies the client is the right-most ``X-Forwarded-For``
    address that is not itself a trusted proxy (the left part of the header
    is whatever the client wrote). An IPv6 client counts by its /64, which
    one host is usually given whole.
    """
    try:
        addr = ipaddress.ip_address(peer or "")
    except ValueError:
        return peer or "unknown"
    if trusted and any(addr in net for net in trusted):
        hops = [h.strip() for h in headers.get("x-forwarded-for", "").split(",") if h.strip()]
        for hop in reversed(hops):
            try:
                forwarded = ipaddress.ip_address(hop)
            except ValueError:
                break  # garbage from the client's side of the chain: stop at the last good hop
            addr = forwarded
            if not any(forwarded in net for net in trusted):
                break
    if isinstance(addr, ipaddress.IPv6Address):
        if addr.ipv4_mapped is not None:
            return str(addr.ipv4_mapped)
        return str(ipaddress.ip_network(f"{addr}/64", strict=False))
    return str(addr)
