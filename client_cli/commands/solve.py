"""``thieves solve``: run the solver on one deal and print its verdict and line."""

from __future__ import annotations

import argparse
import json
import sys
import textwrap

from shared.deals import DealNumberError
from shared.solver import Progress, Verdict, fast, solve_deal
from shared.variants import DEFAULT_VARIANT, UnknownVariant, get_variant


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "solve",
        help="search a deal for a win (the solver sees the stock)",
        description="Search deal N for a winning line. Verdicts: won (with the line), unwinnable (the "
        "whole position graph was searched), unknown (a budget ran out first). With --json the output "
        "is a record `thieves replay` accepts. Exit status 0 whatever the verdict, 2 on bad input.",
    )
    p.add_argument("number", type=int, help="deal number (PySolFC's game number)")
    p.add_argument("--variant", "-v", default=DEFAULT_VARIANT.key, help="variant key (see `thieves variants`)")
    p.add_argument(
        "--time-limit", "-t", type=float, default=10.0, metavar="S", help="give up after S seconds (default 10)"
    )
    p.add_argument("--nodes", type=int, default=None, metavar="N", help="give up after N positions searched")
    p.add_argument(
        "--strategy",
        choices=["portfolio", "depth-first", "best-first"],
        default="portfolio",
        help="search order (default portfolio: short depth-first searches, each with its own cap on the "
        "waste, then best first, then plain depth first with the rest of the budget)",
    )
    p.add_argument(
        "--python",
        action="store_true",
        help="run the pure-Python search even where the compiled one is built (the same search, "
        "many times slower: for checking one against the other)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object {variant, deal, verdict, moves, ...}")
    p.set_defaults(func=run)


def _progress_printer():
    """A callback that redraws one status line on a terminal's stderr, else None."""
    if not sys.stderr.isatty():
        return None

    def show(p: Progress) -> None:
        sys.stderr.write(
            f"\rsearching: {p.nodes:,} positions, {p.seconds:.1f} s, depth {p.depth}, "
            f"best {p.best_home}/{p.total} home "
        )
        sys.stderr.flush()

    return show


def run(args: argparse.Namespace) -> int:
    if args.time_limit is not None and args.time_limit <= 0:
        print("thieves solve: --time-limit must be positive", file=sys.stderr)
        return 2
    if args.nodes is not None and args.nodes <= 0:
        print("thieves solve: --nodes must be positive", file=sys.stderr)
        return 2
    try:
        variant = get_variant(args.variant)
        show = _progress_printer()
        result = solve_deal(
            variant,
            args.number,
            time_limit=args.time_limit,
            node_limit=args.nodes,
            progress=show,
            strategy=args.strategy,
            compiled=not args.python,
        )
    except (UnknownVariant, DealNumberError) as exc:
        print(f"thieves solve: {exc}", file=sys.stderr)
        return 2
    if show is not None:
        sys.stderr.write("\r\033[K")
        sys.stderr.flush()
    if args.json:
        print(
            json.dumps(
                {
                    "variant": variant.key,
                    "deal": args.number,
                    "verdict": result.verdict.value,
                    "moves": result.move_texts(),
                    "nodes": result.nodes,
                    "seconds": round(result.seconds, 3),
                }
            )
        )
        return 0
    rate = f"{result.nodes_per_second:,.0f} positions/s"
    head = f"{variant.name}, deal {args.number}: "
    if result.verdict is Verdict.WON:
        print(head + f"won in {len(result.moves)} moves")
    elif result.verdict is Verdict.UNWINNABLE:
        print(head + "unwinnable (every reachable position searched)")
    else:
        limit = {"time": "time limit", "memory": "memory limit"}.get(result.stopped_by or "", "position limit")
        print(head + f"unknown ({limit} reached; best {result.best_home}/{variant.total_cards} cards home)")
    engine = "compiled" if fast.available() and not args.python else "pure-Python"
    print(f"searched {result.nodes:,} positions in {result.seconds:.2f} s ({rate}, {engine} search)")
    if result.moves:
        print(textwrap.fill(" ".join(result.move_texts()), width=100))
        print("save it with --json and check it with `thieves replay FILE`")
    return 0
