"""``thieves solo``: play a deal alone, offline, in the terminal."""

from __future__ import annotations

import argparse
import random
import sys

from shared.deals import MAX_DEAL, MIN_DEAL, DealNumberError, deal
from shared.variants import DEFAULT_VARIANT, VARIANTS, UnknownVariant, get_variant


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "solo",
        help="play a deal alone, offline (practice, or trying the client without a server)",
        description="Play one deal on the local rules engine with unlimited undo and redo. "
        "Keys: 1-9,0 pick columns 1-10 (shift+1..3 = 11-13), w the waste; then a column, or f/Enter "
        "for the foundation (picking a column twice also sends it home); space draws, r turns the "
        "waste over where allowed, u/ctrl+z undo, y/ctrl+y redo, h hint, R restart, n new deal, "
        "Esc cancels, q quits. Mouse clicks work too.",
    )
    p.add_argument(
        "number",
        nargs="?",
        type=int,
        help=f"deal number (PySolFC's game number, {MIN_DEAL}..{MAX_DEAL}); random when left out",
    )
    p.add_argument(
        "--variant",
        "-v",
        default=DEFAULT_VARIANT.key,
        help=f"variant key (default {DEFAULT_VARIANT.key}; one of {', '.join(VARIANTS)})",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from client_cli.solo import NEW_DEAL_LIMIT, SoloApp

    number = args.number if args.number is not None else random.randint(MIN_DEAL, NEW_DEAL_LIMIT)
    try:
        variant = get_variant(args.variant)
        deal(variant, number)
    except (UnknownVariant, DealNumberError) as exc:
        print(f"thieves solo: {exc}", file=sys.stderr)
        return 2
    SoloApp(variant, number).run()
    return 0
