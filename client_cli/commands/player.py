"""``thieves player NAME``: anyone's profile and latest races."""

from __future__ import annotations

import argparse
import sys

import msgspec

from client_cli.commands.netargs import add_server_option, server_of

MAX_RACES = 1000
"""Most races ``--races`` asks for (the server keeps an account's latest 1,000)."""


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "player",
        help="a player's ratings, races, wins and latest races",
        description="The profile of account NAME on the server (any case of the name): the rating per "
        "variant (? while provisional), races, wins and best times, then the latest races. "
        "Exit 0 shown, 1 no such account or no answer.",
    )
    parser.add_argument("name", metavar="NAME", help="the account's name")
    add_profile_options(parser)
    add_server_option(parser)
    parser.set_defaults(func=run)


def add_profile_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--races", type=int, default=10, metavar="N",
                        help=f"latest races to list (default 10, 0 for none, at most {MAX_RACES})")
    parser.add_argument("--json", action="store_true", help="print the profile and races as JSON")


def run(args: argparse.Namespace) -> int:
    return show_profile("player", server_of(args), args.name, args)


def show_profile(command: str, server: str, name: str, args: argparse.Namespace) -> int:
    """Fetch and print a profile and its ``--races`` latest races (pages followed through ``next``)."""
    from client_cli import api
    from client_cli.standings_text import history_lines, profile_lines

    if not 0 <= args.races <= MAX_RACES:
        print(f"thieves {command}: --races must be from 0 to {MAX_RACES}, not {args.races}", file=sys.stderr)
        return 2
    try:
        profile = api.profile(server, name)
        races = api.latest_races(server, profile.name, args.races) if args.races else []
    except api.ApiError as exc:
        print(f"thieves {command}: {exc.words()}", file=sys.stderr)
        return 1
    if args.json:
        print(msgspec.json.encode({"profile": profile, "races": races}).decode())
        return 0
    print("\n".join(profile_lines(profile)))
    if args.races:
        print()
        if races:
            print("latest races, newest first")
        print("\n".join(history_lines(races)))
    return 0
