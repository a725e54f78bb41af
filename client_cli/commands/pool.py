"""``thieves pool``: build and inspect the pool of deals proven winnable.

``thieves pool build`` solves deal after deal (in parallel, one process per
job) and writes every answer to the pool file after each deal, so an
interrupted build resumes where it stopped. ``run_deals`` is also what
``bench/solver.py`` uses to solve a range of deals on every core.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any, Iterable, Iterator

import shared
from shared.deals import DealNumberError, check_deal_number
from shared.pool import Pool, PoolError, parse_pool, pool_file_name
from shared.solver import SOLVER_VERSION, solve_deal
from shared.variants import DEFAULT_VARIANT, UnknownVariant, get_variant


def solve_one(task: tuple[str, int, float | None, int | None]) -> dict[str, Any]:
    """Solve one deal; the worker function of :func:`run_deals` (top level so it pickles).

    The time limit is CPU time of the worker, not wall time: on a shared
    machine a busy neighbour must not turn won deals into unknown ones.
    """
    key, number, time_limit, node_limit = task
    r = solve_deal(
        get_variant(key), number, time_limit=time_limit, node_limit=node_limit, clock=time.process_time
    )
    return {
        "deal": number,
        "verdict": r.verdict.value,
        "moves": r.move_texts(),
        "nodes": r.nodes,
        "seconds": round(r.seconds, 3),
        "best_home": r.best_home,
    }


def run_deals(
    variant_key: str,
    numbers: Iterable[int],
    time_limit: float | None,
    jobs: int,
    node_limit: int | None = None,
) -> Iterator[dict[str, Any]]:
    """Solve ``numbers`` with ``jobs`` processes, yielding results as they finish (any order).

    Workers are replaced every few deals so that one huge search does not
    leave its memory behind for the rest of the run.
    """
    tasks = [(variant_key, n, time_limit, node_limit) for n in numbers]
    _exit_on_sigterm()
    if jobs <= 1 or len(tasks) <= 1:
        for t in tasks:
            yield solve_one(t)
        return
    with multiprocessing.get_context("spawn").Pool(min(jobs, len(tasks)), maxtasksperchild=8) as workers:
        yield from workers.imap_unordered(solve_one, tasks)


def _exit_on_sigterm() -> None:
    """Turn SIGTERM into SystemExit in the main thread, so that leaving the
    ``with Pool`` block terminates the workers instead of orphaning them."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, lambda _signum, _frame: sys.exit(143))


def default_pool_path(variant_key: str) -> Path:
    """The pool file inside the source tree, which the package ships."""
    return Path(shared.__file__).resolve().parent / "data" / pool_file_name(variant_key)


def write_atomically(path: Path, text: str) -> None:
    """Write via a temporary file and rename, so an interrupted build never leaves half a file."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("pool", help="build or show the pool of deals proven winnable")
    psub = p.add_subparsers(dest="pool_command", metavar="ACTION")
    psub.required = True
    b = psub.add_parser(
        "build",
        help="solve deals until the pool file holds COUNT winnable ones (resumable)",
        description="Solve deals START, START+1, ... and record every verdict in the pool file after each "
        "deal; deals already in the file are skipped, so running the same command again resumes. Stops "
        "when the file holds COUNT winnable deals or after --max-tries new deals.",
    )
    b.add_argument("--variant", "-v", default=DEFAULT_VARIANT.key, help="variant key (see `thieves variants`)")
    b.add_argument("--count", "-n", type=int, required=True, help="winnable deals wanted in the pool")
    b.add_argument("--time-limit", "-t", type=float, default=10.0, metavar="S", help="seconds per deal (default 10)")
    b.add_argument("--start", type=int, default=1, help="first deal number to try (default 1)")
    b.add_argument("--max-tries", type=int, default=None, help="stop after trying this many new deals")
    b.add_argument("--out", type=Path, default=None, help="pool file (default: the shipped shared/data file)")
    b.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 1, help="parallel solver processes")
    b.set_defaults(func=run_build)
    s = psub.add_parser("show", help="print what a pool file holds")
    s.add_argument("--variant", "-v", default=DEFAULT_VARIANT.key, help="variant key")
    s.add_argument("--file", type=Path, default=None, help="pool file (default: the shipped one)")
    s.set_defaults(func=run_show)


def _load(path: Path, variant_key: str) -> Pool:
    if not path.exists():
        return Pool(variant_key)
    pool = parse_pool(path.read_text(encoding="utf-8"))
    if pool.variant != variant_key:
        raise PoolError(f"{path} is a pool of {pool.variant}, not {variant_key}")
    return pool


def run_build(args: argparse.Namespace) -> int:
    err = sys.stderr
    try:
        variant = get_variant(args.variant)
        check_deal_number(args.start)
        if args.count < 1 or args.jobs < 1 or args.time_limit <= 0:
            raise ValueError("--count, --jobs and --time-limit must be positive")
        path = args.out or default_pool_path(variant.key)
        pool = _load(path, variant.key)
    except (UnknownVariant, DealNumberError, PoolError, ValueError, OSError) as exc:
        print(f"thieves pool build: {exc}", file=err)
        return 2
    if pool.time_limit is not None and pool.time_limit != args.time_limit:
        print(f"note: {path.name} was built with {pool.time_limit} s per deal; new deals use {args.time_limit} s",
              file=err)
    pool.time_limit = args.time_limit
    pool.solver = SOLVER_VERSION
    tried = 0
    number = args.start
    batch_size = max(2, 2 * args.jobs)
    print(f"pool {path}: {len(pool.lines)} winnable, {len(pool.unwinnable)} unwinnable, "
          f"{len(pool.unknown)} unknown already; target {args.count}", file=err)
    while len(pool.lines) < args.count and (args.max_tries is None or tried < args.max_tries):
        batch = []
        while len(batch) < batch_size and (args.max_tries is None or tried + len(batch) < args.max_tries):
            if not pool.tried(number):
                batch.append(number)
            number += 1
        for res in run_deals(variant.key, batch, args.time_limit, args.jobs):
            tried += 1
            pool.record(res["deal"], res["verdict"], res["moves"], nodes=res["nodes"], seconds=res["seconds"])
            write_atomically(path, pool.dumps())
            what = f"won in {len(res['moves'])} moves" if res["verdict"] == "won" else res["verdict"]
            print(f"deal {res['deal']}: {what} ({res['nodes']:,} positions, {res['seconds']:.1f} s); "
                  f"pool {len(pool.lines)}/{args.count}", file=err, flush=True)
    print(f"{path}: {len(pool.lines)} winnable, {len(pool.unwinnable)} unwinnable, {len(pool.unknown)} unknown")
    return 0


def run_show(args: argparse.Namespace) -> int:
    try:
        variant = get_variant(args.variant)
        path = args.file or default_pool_path(variant.key)
        pool = _load(path, variant.key)
    except (UnknownVariant, PoolError, OSError) as exc:
        print(f"thieves pool show: {exc}", file=sys.stderr)
        return 2
    print(f"{variant.name}: {len(pool.lines)} deals proven winnable, {len(pool.unwinnable)} proven unwinnable, "
          f"{len(pool.unknown)} undecided (solver version {pool.solver}, {pool.time_limit} s per deal)")
    if pool.lines:
        print("winnable: " + " ".join(str(n) for n in pool.deals))
    return 0
