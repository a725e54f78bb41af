"""``thieves account``: the account this machine keeps for a server (show, rotate, import, forget)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from client_cli.commands.netargs import add_server_option, server_of

if TYPE_CHECKING:
    from client_cli.local_store import LocalStore


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "account",
        help="show, rotate, import or forget the account kept for a server",
        description="The account this machine keeps for the server (`thieves register` made it). "
        "show: its name and where the key is kept (--key prints the key, to copy it to another machine); "
        "rotate: ask the server for a new key, which replaces the old one everywhere at once; "
        "import KEY: keep a key copied from another machine; "
        "forget: remove it from this machine (the account stays on the server); "
        "challenges on|off: take challenges (`thieves challenge`) or refuse them all. "
        "Exit 0 done, 1 refused or nothing kept.",
    )
    parser.add_argument("action", nargs="?", default="show", choices=["show", "rotate", "import", "forget", "challenges"],
                        help="what to do (default show)")
    parser.add_argument("key", nargs="?", default=None, metavar="KEY", help="with import: the account's key; with challenges: on or off")
    parser.add_argument("--key", dest="show_key", action="store_true", help="with show: print the secret key too")
    parser.add_argument("--force", action="store_true", help="with import: replace an account kept already")
    add_server_option(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from client_cli.local_store import LocalStore, StoreError

    server = server_of(args)
    store = LocalStore()
    if args.action != "challenges" and (args.key is not None) != (args.action == "import"):
        print("thieves account: a KEY goes with `import` (and only with it)", file=sys.stderr)
        return 2
    try:
        return ACTIONS[args.action](args, server, store)
    except StoreError as exc:
        print(f"thieves account: {exc}", file=sys.stderr)
        return 1


def _none_kept(server: str) -> int:
    print(f"thieves account: no account is kept for {server} (`thieves register NAME` makes one)", file=sys.stderr)
    return 1


def _show(args: argparse.Namespace, server: str, store: "LocalStore") -> int:
    account = store.account(server)
    if account is None:
        return _none_kept(server)
    print(f"account {account.name} on {server}")
    print(f"key kept in {store.path}")
    if args.show_key:
        print(f"key: {account.key}")
    return 0


def _rotate(args: argparse.Namespace, server: str, store: "LocalStore") -> int:
    from client_cli import api
    from client_cli.identity import keep_issued_key

    account = store.account(server)
    if account is None:
        return _none_kept(server)
    try:
        answer = api.rotate_key(server, account.name, account.key)
    except api.ApiError as exc:
        print(f"thieves account: cannot rotate the key of {account.name}: {exc.words()}", file=sys.stderr)
        return 1
    if not keep_issued_key(store, server, answer, "account", "the new key"):
        return 1
    print(f"new key for {answer.name} kept in {store.path}; the old key no longer works anywhere")
    return 0


def _import(args: argparse.Namespace, server: str, store: "LocalStore") -> int:
    """Keep a key from another machine, once the server says it is the account's current key (which
    also gives the name's registered case): a mistyped or replaced key is refused here, not at the
    next race."""
    import re

    from client_cli import api
    from client_cli.local_store import Account
    from shared.protocol import ISSUED_KEY_PATTERN

    key = args.key.strip()
    if not re.match(ISSUED_KEY_PATTERN, key):
        print("thieves account: that is not an account key: a key is the account's name in lower case, a dot "
              "and 43 letters, digits, - or _ (as `thieves account show --key` prints it)", file=sys.stderr)
        return 2
    lower = key.partition(".")[0]
    kept = store.account(server)
    if kept is not None and kept.key != key and not args.force:
        print(f"thieves account: the account {kept.name} is kept for {server} already; --force replaces it",
              file=sys.stderr)
        return 1
    try:
        name = api.check_key(server, lower, key).name
    except api.ApiError as exc:
        print(f"thieves account: cannot import the key of {lower}: {exc.words()}", file=sys.stderr)
        return 1
    store.set_account(server, Account(name, key))
    print(f"account {name} kept for {server} in {store.path} (the server accepts the key)")
    return 0


def _forget(args: argparse.Namespace, server: str, store: "LocalStore") -> int:
    account = store.forget_account(server)
    if account is None:
        return _none_kept(server)
    print(f"forgot the account {account.name} for {server}: its key is no longer on this machine "
          "(the account stays on the server)")
    return 0


def _challenges(args: argparse.Namespace, server: str, store: "LocalStore") -> int:
    from client_cli.commands.challenge import account_setting

    return account_setting(args, server, store)


ACTIONS = {"show": _show, "rotate": _rotate, "import": _import, "forget": _forget, "challenges": _challenges}
