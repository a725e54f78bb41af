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
        "per variant (? while provisional), races, wins and best times, then the latest races; and whether "
        "the server still accepts the key kept here (a rotation on another machine replaces it). "
        "Exit 0 shown, 1 no account kept, the server refused, or the key kept no longer works.",
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
    shown = show_profile("me", server, account.name, args)
    if shown != 0:
        return shown
    return check_kept_key(server, account.name, account.key)


def check_kept_key(server: str, name: str, key: str) -> int:
    """0 when the server accepts the key kept here; else 1, saying why and what to do (the profile
    is public, so showing it proves nothing about the key)."""
    from client_cli import api

    try:
        api.check_key(server, name, key)
    except api.ApiError as exc:
        print(f"thieves me: the key kept here for {name} does not work: {exc.words()}", file=sys.stderr)
        return 1
    return 0
