"""``thieves watch``: follow a race as a spectator, then replay its games."""

from __future__ import annotations

import argparse

from client_cli.commands.netargs import add_server_option, refused, run_race_app, server_of
from shared import protocol as p


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "watch",
        help="watch a race live: every racer's progress, the clock, the standings, then replays",
        description="Watch a race as a spectator. When it ends, the standings appear; press 1-9 to "
        "replay the game of that rank move by move (left/right arrows step, Home/End jump, Esc returns).",
    )
    p.add_argument("race", metavar="RACE_OR_CODE", help="race id or join code")
    add_server_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from client_cli.watch_app import WatchApp

    if refused("watch", (p.Hello, "race", args.race, "RACE_OR_CODE")):
        return 2
    return run_race_app(WatchApp(server_of(args), args.race), "watch")
