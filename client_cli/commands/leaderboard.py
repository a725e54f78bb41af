"""``thieves leaderboard``: the best rated players of a variant."""

from __future__ import annotations

import argparse
import sys

import msgspec

from client_cli.commands.netargs import add_server_option, server_of
from shared.variants import DEFAULT_VARIANT, VARIANTS

MAX_LIMIT = 100


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "leaderboard",
        help="the best rated players of a variant",
        description="The rated players of a variant, best first by the shown rating (? while provisional: "
        "until its uncertainty sigma falls below 5, some 20 races). Only races created with --rated count.",
    )
    parser.add_argument("--variant", "-v", default=DEFAULT_VARIANT.key, choices=list(VARIANTS),
                        help=f"game of the family (default {DEFAULT_VARIANT.key})")
    parser.add_argument("--limit", type=int, default=20, metavar="N",
                        help=f"players to list (default 20, at most {MAX_LIMIT})")
    parser.add_argument("--json", action="store_true", help="print the server's answer as JSON")
    add_server_option(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from client_cli import api
    from client_cli.standings_text import leaderboard_lines

    if not 1 <= args.limit <= MAX_LIMIT:
        print(f"thieves leaderboard: --limit must be from 1 to {MAX_LIMIT}, not {args.limit}", file=sys.stderr)
        return 2
    try:
        board = api.leaderboard(server_of(args), args.variant, args.limit)
    except api.ApiError as exc:
        print(f"thieves leaderboard: {exc.words()}", file=sys.stderr)
        return 1
    if args.json:
        print(msgspec.json.encode(board).decode())
    else:
        print("\n".join(leaderboard_lines(board)))
    return 0
