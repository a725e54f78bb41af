"""``thieves play``: join a race and play it in the terminal."""

from __future__ import annotations

import argparse

from client_cli.commands.netargs import add_server_option, refused, run_race_app, server_of
from shared import protocol as proto


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "play",
        help="join a race by id or join code and play it",
        description="Join a race and play. The board is the server's copy of your game; keys as in "
        "`thieves solo` (1-9,0 and shift+1..3 pick columns, w the waste, f/Enter home, space draws), "
        "u undoes where the race allows it, g gives up. In the lobby, s says you are ready and b starts "
        "the race (its creator only). A dropped connection is retried by itself; your seat and game wait.",
    )
    p.add_argument("race", metavar="RACE_OR_CODE", help="race id or join code (see `thieves list`)")
    p.add_argument("--name", "-n", required=True, help="your name in the race (1-32 characters)")
    p.add_argument("--creator-token", default=None, help="the token `thieves create` printed: lets you start the race")
    add_server_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from client_cli.play_app import PlayApp

    if refused("play", (proto.Hello, "name", args.name, "--name"), (proto.Hello, "race", args.race, "RACE_OR_CODE")):
        return 2
    return run_race_app(PlayApp(server_of(args), args.race, args.name, args.creator_token), "play")
