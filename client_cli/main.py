"""``thieves``: the user's command, one subcommand per module.

Each module in ``client_cli.commands`` has ``register(subparsers)`` that adds
its subparser and sets ``func``; ``func(args) -> int`` is the exit status.
"""

from __future__ import annotations

import argparse
import importlib
import sys

COMMAND_MODULES = [
    "variants",
    "deal",
    "replay",
    "solo",
    "play",
    "seek",
    "watch",
    "create",
    "races",
    "solve",
    "pool",
    "bot",
    "register",
    "account",
    "me",
    "player",
    "leaderboard",
    "event",
    "daily",
    "challenge",
    "verify",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="thieves",
        description="Forty Thieves races: play, watch and check games of the Forty Thieves family.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in COMMAND_MODULES:
        importlib.import_module(f"client_cli.commands.{name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    from client_cli.api import ServerAddressError

    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except ServerAddressError as exc:
        print(f"thieves {args.command}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
