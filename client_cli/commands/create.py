"""``thieves create``: open a new race on the server."""

from __future__ import annotations

import argparse
import sys

import msgspec

from client_cli.commands.netargs import add_server_option, refused, run_race_app, server_of
from client_cli.wording import validation_words
from shared import protocol as p
from shared.variants import DEFAULT_VARIANT, VARIANTS


def register(sub: argparse._SubParsersAction) -> None:
    d = p.Create()
    parser = sub.add_parser(
        "create",
        help="create a race and print its id and join code",
        description="Create a race. Prints the race id, the join code racers type into "
        "`thieves play CODE --name NAME`, and the creator token that starts it. "
        "With --join NAME you take a seat at once and play.",
    )
    parser.add_argument("--variant", "-v", default=DEFAULT_VARIANT.key, choices=list(VARIANTS), help="game of the family")
    parser.add_argument("--seats", type=int, default=d.seats, help=f"most racers (default {d.seats})")
    parser.add_argument(
        "--time-limit", type=int, default=d.time_limit, help=f"seconds from the start (default {d.time_limit})"
    )
    parser.add_argument("--no-undo", dest="undo", action="store_false", help="forbid taking moves back")
    parser.add_argument(
        "--start",
        dest="start_mode",
        choices=["creator", "all-ready"],
        default=d.start_mode,
        help="who starts the race: its creator (default) or everyone being ready",
    )
    parser.add_argument("--deal", type=int, default=None, help="play this deal number instead of a secret random one")
    parser.add_argument(
        "--deal-source",
        choices=["random", "number", "pool"],
        default=None,
        help="random: any secret deal (not checked); number: the --deal given; pool: a secret deal the "
        "solver proved winnable (checked). Default: number with --deal, else random",
    )
    parser.add_argument("--pool", dest="deal_source", action="store_const", const="pool",
                        help="same as --deal-source pool: a checked deal")
    parser.add_argument("--hints", action="store_true",
                        help="allow hints (key h in `thieves play`); players who take one are marked as played with help")
    parser.add_argument("--join", metavar="NAME", default=None, help="take a seat under NAME and play right away")
    parser.add_argument("--json", action="store_true", help="print the server's answer as JSON")
    add_server_option(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from client_cli.api import ApiError, create_race

    server = server_of(args)
    if refused(
        "create",
        (p.Create, "seats", args.seats, "--seats"),
        (p.Create, "time_limit", args.time_limit, "--time-limit"),
        (p.Create, "deal", args.deal, "--deal"),
        *([(p.Hello, "name", args.join, "--join")] if args.join is not None else []),
    ):
        return 2
    source = args.deal_source or ("number" if args.deal is not None else "random")
    if (source == "number") != (args.deal is not None):
        print(f"thieves create: --deal goes with deal source 'number' (not {source!r})"
              if args.deal is not None else "thieves create: deal source 'number' needs --deal N", file=sys.stderr)
        return 2
    try:
        request = msgspec.convert(
            {
                "variant": args.variant,
                "deal_source": source,
                "hints": args.hints,
                "deal": args.deal,
                "seats": args.seats,
                "time_limit": args.time_limit,
                "undo": args.undo,
                "start_mode": args.start_mode,
            },
            p.Create,
        )
        created = create_race(server, request)
    except msgspec.ValidationError as exc:
        print(f"thieves create: {validation_words(str(exc), p.Create)}", file=sys.stderr)
        return 2
    except ApiError as exc:
        print(f"thieves create: {exc}", file=sys.stderr)
        return 1
    race = created.race
    if args.json:
        print(msgspec.json.encode(created).decode())
    else:
        print(f"race id:       {race.id}")
        print(f"join code:     {race.code}")
        print(f"creator token: {created.creator_token}")
        print(f"variant {race.variant}, {race.seats} seats, {race.time_limit}s, undo {'on' if race.undo else 'off'}, "
              f"hints {'on' if race.hints else 'off'}, started by {race.start_mode}")
        print("deal:          " + ("checked (drawn from the pool of deals proved winnable)" if race.checked
                                   else "not checked (it may have no winning line)"))
        print(f"players join with:  thieves play {race.code} --name NAME")
        print(f"you start it with:  thieves play {race.code} --name NAME --creator-token {created.creator_token}")
        print(f"spectators:         thieves watch {race.code}")
    if args.join is not None:
        from client_cli.play_app import PlayApp

        return run_race_app(PlayApp(server, race.id, args.join, created.creator_token), "create")
    return 0
