"""``thieves play``: join a race and play it in the terminal."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from client_cli.commands.netargs import add_server_option, refused, run_race_app, server_of
from shared import protocol as proto

if TYPE_CHECKING:
    from client_cli.race_state import RaceState


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "play",
        help="join a race by id or join code and play it",
        description="Join a race and play. The board is the server's copy of your game; keys as in "
        "`thieves solo` (1-9,0 and shift+1..3 pick columns, w the waste, f/Enter home, space draws), "
        "u undoes where the race allows it, g gives up (it asks first: g or y again). In the lobby, s says you are ready and b starts "
        "the race (its creator only). A dropped connection is retried by itself; your seat and game wait. "
        "With an account kept for the server (`thieves register NAME`) you join as that account and need "
        "no --name. Your seat is saved: after q, a crash or a closed terminal, the same command takes the "
        "same seat and game back (an empty lobby seat is held only for the server's presence lease, 15 s by "
        "default). q in the lobby offers to give the seat back (l) or to quit for now (k).",
    )
    p.add_argument("race", metavar="RACE_OR_CODE", help="race id or join code (see `thieves list`)")
    p.add_argument("--name", "-n", default=None,
                   help="your name in the race (1-32 characters); needed without an account, unless this "
                   "machine already keeps a seat in the race")
    p.add_argument("--anonymous", action="store_true",
                   help="play without the account kept for this server (named, unrated, no history)")
    p.add_argument("--creator-token", default=None,
                   help="the token `thieves create` printed: lets you start the race (kept by `thieves create` "
                   "on this machine, so usually not needed)")
    add_server_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    return play(args)[0]


def play_rematch(args: argparse.Namespace, race: str) -> "tuple[int, RaceState | None]":
    """Join and play the rematch every racer said yes to, saying ready at once: where the end screen of
    any race command leads (``thieves play``, a challenge's race, a seek's). ``args`` are the command's
    own: its ``--server``, and ``--name``/``--anonymous`` to join as the same player."""
    print(f"rematch: race {race}", flush=True)
    return play(argparse.Namespace(**{**vars(args), "race": race, "creator_token": None, "rematch": True}))


def play(args: argparse.Namespace) -> "tuple[int, RaceState | None]":
    """Join and play the race; the exit status and the race as the screen left it (None when it never
    opened): ``thieves event play`` reads from it whether the race ended or the player left it."""
    from client_cli.identity import IdentityProblem, SeatKeeper, resolve
    from client_cli.local_store import LocalStore, StoreError
    from client_cli.play_app import PlayApp
    from client_cli.race_state import Phase

    if refused("play", *([(proto.Hello, "name", args.name, "--name")] if args.name is not None else []),
               (proto.Hello, "race", args.race, "RACE_OR_CODE")):
        return 2, None
    server = server_of(args)
    store = LocalStore()
    try:
        joining = resolve(store, server, args.race, args.name, args.anonymous, args.creator_token)
    except IdentityProblem as exc:
        print(f"thieves play: {exc}", file=sys.stderr)
        return 2, None
    except StoreError as exc:
        print(f"thieves play: {exc}", file=sys.stderr)
        return 1, None
    keeper = SeatKeeper(store, server, joining)
    app = PlayApp(server, args.race, joining.name, joining.creator_token, key=joining.key, token=joining.token,
                  keeper=keeper, auto_ready=getattr(args, "rematch", False), then=getattr(args, "then", None))
    status = run_race_app(app, "play")
    if status == 0 and app.next_race is not None:  # every racer said yes to a rematch: play it now
        return play_rematch(args, app.next_race)
    if keeper.problem:
        print(f"thieves play: {keeper.problem}", file=sys.stderr)
    state = app.state
    code = state.info.code if state.info is not None else args.race
    if status == 0 and state.left:
        print(f"you left race {code}: the seat is free")
    elif status == 0 and state.results is None and state.seat is not None:
        if state.phase() is Phase.LOBBY:
            print(f"your seat in race {code} is held while the server's presence lease lasts (15 s by default): "
                  f"`thieves play {code}` takes it back, or later joins afresh")
        else:
            print(f"your game in race {code} waits: `thieves play {code}` takes your seat back")
    return status, state
