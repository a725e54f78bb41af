"""``thieves me``: the profile and latest races of the account kept for the server."""

from __future__ import annotations

import argparse
import sys

from client_cli.commands.netargs import add_server_option, server_of
from client_cli.commands.player import add_profile_options, show_profile


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "me",
        help="your account's ratings, races, wins and latest races",
        description="The profile of the account kept for the server (`thieves register NAME`): the rating "
        "per variant (? while provisional), races, wins and best times, then the latest races. "
        "Exit 0 shown, 1 no account kept or the server refused.",
    )
    add_profile_options(parser)
    add_server_option(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from client_cli.local_store import LocalStore, StoreError

    server = server_of(args)
    try:
        account = LocalStore().account(server)
    except StoreError as exc:
        print(f"thieves me: {exc}", file=sys.stderr)
        return 1
    if account is None:
        print(f"thieves me: no account is kept for {server} (`thieves register NAME` makes one; "
              "`thieves player NAME` shows anyone's)", file=sys.stderr)
        return 1
    return show_profile("me", server, account.name, args)
