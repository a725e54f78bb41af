"""``thieves register NAME``: create an account on the server and keep its key here."""

from __future__ import annotations

import argparse
import re
import sys

from client_cli.commands.netargs import add_server_option, server_of
from shared import protocol as p


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "register",
        help="create an account on the server; its key is kept on this machine",
        description="Create an account NAME on the server (2 to 24 letters, digits, '_' or '-'; unique on "
        "the server ignoring case). The server answers a secret key once; it is kept in "
        "$XDG_CONFIG_HOME/thieves/servers.json (else ~/.config/thieves/servers.json, mode 0600), one "
        "account per server, and `thieves play`, `thieves bot` and `thieves me` use it from then on. "
        "Exit 0 registered, 1 refused (name taken, too many registrations, an account already kept "
        "here without --force), 2 a name that cannot be an account's.",
    )
    parser.add_argument("name", metavar="NAME", help="the account's name (it keeps the case you type)")
    parser.add_argument("--force", action="store_true",
                        help="replace the account already kept for this server (its key is then lost here)")
    add_server_option(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from client_cli import api
    from client_cli.identity import keep_issued_key
    from client_cli.local_store import LocalStore, StoreError

    if re.fullmatch(p.ACCOUNT_NAME_PATTERN, args.name) is None:
        print(f"thieves register: {args.name!r} cannot be an account name: {p.ErrorCode.BAD_NAME.explanation}",
              file=sys.stderr)
        return 2
    server = server_of(args)
    store = LocalStore()
    try:
        kept = store.account(server)
    except StoreError as exc:
        print(f"thieves register: {exc}", file=sys.stderr)
        return 1
    if kept is not None and not args.force:
        print(f"thieves register: this machine already keeps the account {kept.name} for {server}; "
              f"--force replaces it (and loses its key here: see `thieves account show --key` first)",
              file=sys.stderr)
        return 1
    try:
        answer = api.register(server, args.name)
    except api.ApiError as exc:
        print(f"thieves register: cannot register {args.name}: {exc.words()}", file=sys.stderr)
        return 1
    if not keep_issued_key(store, server, answer, "register", "the account's key"):
        return 1
    print(f"registered {answer.name} on {server}")
    print(f"its key is kept in {store.path} (only you can read it); keep a copy: `thieves account show --key`")
    if kept is not None:
        print(f"(it replaces the account {kept.name} this machine kept for the server)")
    return 0
