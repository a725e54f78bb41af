"""Winnability of a variant, measured: the solver on a fixed range of deals.

    python bench/solver.py --variant forty-thieves --first 1 --last 200 --time-limit 10

Runs on every core (``--jobs``), appends each deal's answer to a results
file (JSON lines) as it comes, and skips deals already in that file, so an
interrupted run resumes. Prints won / proven unwinnable / unknown, time per
deal (median and p90), nodes per second, and the winnable share with 95%
Wilson intervals: the share proven winnable among all deals (a lower bound
while unknowns remain) and among decided deals. Unknowns are reported
apart, never guessed.

Long runs: ``nohup nice -n 10 python bench/solver.py ... &`` (the machine is
shared); ``--report`` prints the table from the results file without solving.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from client_cli.commands.pool import run_deals  # noqa: E402
from shared.solver import SOLVER_VERSION, fast, percentile, wilson_interval  # noqa: E402
from shared.variants import get_variant  # noqa: E402


def search_kind() -> str:
    """Which search answers here: a time budget buys the compiled one far more positions."""
    return "compiled" if fast.available() else "python"


def load_results(path: Path, time_limit: float) -> dict[int, dict]:
    """Earlier answers at the same time limit, solver version and search kind (others are ignored)."""
    results: dict[int, dict] = {}
    if not path.exists():
        return results
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        r = json.loads(line)
        same = r.get("time_limit") == time_limit and r.get("solver") == SOLVER_VERSION
        if same and r.get("search", "python") == search_kind():
            results[r["deal"]] = r
    return results


def report(variant_name: str, first: int, last: int, time_limit: float, results: dict[int, dict]) -> str:
    rows = [results[n] for n in range(first, last + 1) if n in results]
    won = sum(r["verdict"] == "won" for r in rows)
    lost = sum(r["verdict"] == "unwinnable" for r in rows)
    unknown = sum(r["verdict"] == "unknown" for r in rows)
    n = len(rows)
    secs = [r["seconds"] for r in rows]
    nodes = sum(r["nodes"] for r in rows)
    won_secs = [r["seconds"] for r in rows if r["verdict"] == "won"]
    lo, hi = wilson_interval(won, n) if n else (0.0, 1.0)
    dlo, dhi = wilson_interval(won, won + lost) if won + lost else (0.0, 1.0)
    decided = won + lost
    lines = [
        f"{variant_name}: deals {first}-{last} ({n} run), {time_limit:g} s per deal, "
        f"solver v{SOLVER_VERSION} ({search_kind()} search)",
        f"  won {won}, proven unwinnable {lost}, unknown {unknown}  (decided {decided}/{n})",
        f"  time per deal: median {percentile(secs, 50):.2f} s, p90 {percentile(secs, 90):.2f} s; "
        f"{nodes / max(sum(secs), 1e-9):,.0f} positions/s per process",
        f"  won deals: median {percentile(won_secs, 50):.2f} s, p90 {percentile(won_secs, 90):.2f} s, "
        f"slowest {max(won_secs, default=float('nan')):.2f} s",
        f"  proven winnable among all run: {won}/{n} = {won / max(n, 1):.1%} "
        f"(95% Wilson {lo:.1%}-{hi:.1%}; a lower bound while {unknown} are unknown)",
    ]
    if decided:
        lines.append(
            f"  winnable among decided: {won}/{decided} = {won / decided:.1%} (95% Wilson {dlo:.1%}-{dhi:.1%})"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--variant", "-v", default="forty-thieves")
    ap.add_argument("--first", type=int, default=1)
    ap.add_argument("--last", type=int, default=200)
    ap.add_argument("--time-limit", "-t", type=float, default=10.0)
    ap.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--results", type=Path, default=None, help="JSON-lines results file (default bench/results-VARIANT.jsonl)")
    ap.add_argument("--report", action="store_true", help="only print the table from the results file")
    args = ap.parse_args(argv)
    variant = get_variant(args.variant)
    path = args.results or Path(__file__).resolve().parent / f"results-{variant.key}.jsonl"
    results = load_results(path, args.time_limit)
    todo = [n for n in range(args.first, args.last + 1) if n not in results]
    if not args.report and todo:
        print(f"{len(todo)} deals to solve ({len(results)} already in {path.name}), {args.jobs} jobs", file=sys.stderr)
        start = time.monotonic()
        with path.open("a", encoding="utf-8") as out:
            for i, r in enumerate(run_deals(variant.key, todo, args.time_limit, args.jobs), 1):
                r.update(time_limit=args.time_limit, solver=SOLVER_VERSION, search=search_kind())
                out.write(json.dumps(r) + "\n")
                out.flush()
                results[r["deal"]] = r
                print(f"[{i}/{len(todo)} {time.monotonic() - start:.0f} s] deal {r['deal']}: {r['verdict']} "
                      f"({r['nodes']:,} positions, {r['seconds']:.1f} s)", file=sys.stderr, flush=True)
    print(report(variant.name, args.first, args.last, args.time_limit, results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
