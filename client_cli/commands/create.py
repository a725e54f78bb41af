"""``thieves create``: open a new race on the server."""

from __future__ import annotations

import argparse
import sys

from typing import TYPE_CHECKING

import msgspec

from client_cli.commands.netargs import add_server_option, refused, run_race_app, server_of
from client_cli.wording import validation_words
from shared import protocol as p
from shared.variants import DEFAULT_VARIANT, VARIANTS

if TYPE_CHECKING:
    from client_cli.local_store import LocalStore


def register(sub: argparse._SubParsersAction) -> None:
    d = p.Create()
    parser = sub.add_parser(
        "create",
        help="create a race and print its id and join code",
        description="Create a race. Prints the race id, the join code racers type into "
        "`thieves play CODE` (with --name NAME when they have no account), and the creator token that "
        "starts it (kept on this machine too, so your own `thieves play CODE` can start it). "
        "With --join you take a seat at once and play (as your account, or as --join NAME). "
        "--rated races update the players' ratings; only players with an account may join them.",
    )
    parser.add_argument("--variant", "-v", default=DEFAULT_VARIANT.key, choices=list(VARIANTS), help="game of the family")
    parser.add_argument("--seats", type=int, default=d.seats, help=f"most racers (default {d.seats})")
    parser.add_argument(
        "--time-limit", type=int, default=d.time_limit,
        help=f"seconds from the start, {p.MIN_TIME_LIMIT} or more (default {d.time_limit})"
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
    parser.add_argument("--rated", action="store_true",
                        help="the standings update each player's rating for the variant (accounts only; "
                        "it starts with at least two players)")
    parser.add_argument("--join", metavar="NAME", nargs="?", const=True, default=None,
                        help="take a seat and play right away: as your account, or under NAME")
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
        *([(p.Hello, "name", args.join, "--join")] if isinstance(args.join, str) else []),
    ):
        return 2
    if args.join is True:
        from client_cli.local_store import LocalStore, StoreError

        try:
            has_account = LocalStore().account(server) is not None
        except StoreError as exc:
            print(f"thieves create: {exc}", file=sys.stderr)
            return 1
        if not has_account:
            print("thieves create: --join without NAME plays as your account, and none is kept for this "
                  "server: give --join NAME, or `thieves register NAME` first", file=sys.stderr)
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
                "rated": args.rated,
            },
            p.Create,
        )
        created = create_race(server, request)
    except msgspec.ValidationError as exc:
        print(f"thieves create: {validation_words(str(exc), p.Create)}", file=sys.stderr)
        return 2
    except ApiError as exc:
        print(f"thieves create: {exc.words()}", file=sys.stderr)
        return 1
    race = created.race
    from client_cli.local_store import LocalStore, StoreError

    store = LocalStore()
    try:
        own = store.account(server)
        # The seat the creator plays under holds the kept token; without --join NAME or an account the
        # first seat this machine plays in the race does.
        holder = args.join if isinstance(args.join, str) else own.name if own is not None else None
        store.save_created(server, race.id, race.code, created.creator_token, holder)
    except StoreError as exc:
        own = None
        print(f"thieves create: the creator token is not kept ({exc}): copy it from here", file=sys.stderr)
    if args.json:
        print(msgspec.json.encode(created).decode())
    else:
        print(f"race id:       {race.id}")
        print(f"join code:     {race.code}")
        print(f"creator token: {created.creator_token}")
        print(f"variant {race.variant}, {race.seats} seats, {race.time_limit}s, undo {'on' if race.undo else 'off'}, "
              f"hints {'on' if race.hints else 'off'}, started by {race.start_mode}"
              f"{', rated (accounts only)' if race.rated else ''}")
        print("deal:          " + ("checked (drawn from the pool of deals proved winnable)" if race.checked
                                   else "not checked (it may have no winning line)"))
        if race.rated:
            print(f"players join with:  thieves play {race.code}   (each with an account: thieves register NAME)")
        else:
            print(f"players join with:  thieves play {race.code} --name NAME   (no --name with an account)")
        # Without an account kept here, `thieves play CODE` alone stops at "--name NAME is needed".
        you = (f"thieves play {race.code}" if own is not None or race.rated
               else f"thieves play {race.code} --name NAME")
        print(f"you start it with:  {you}   (this machine keeps the creator token; "
              f"elsewhere add --creator-token {created.creator_token})")
        if own is None and race.rated:
            print("                    (a rated race: `thieves register NAME` first)")
        print(f"spectators:         thieves watch {race.code}")
    if args.join is not None:
        return _join(server, race.id, args.join if isinstance(args.join, str) else None, created.creator_token, store)
    return 0


def _join(server: str, race: str, name: str | None, creator_token: str, store: "LocalStore") -> int:
    """``--join``: play the new race at once, as the account or under ``name``, the seat kept."""
    from client_cli.identity import IdentityProblem, SeatKeeper, resolve
    from client_cli.local_store import StoreError
    from client_cli.play_app import PlayApp

    account = None
    try:
        account = store.account(server)
        anonymous = name is not None and (account is None or name.casefold() != account.name.casefold())
        joining = resolve(store, server, race, name, anonymous, creator_token)
    except (IdentityProblem, StoreError) as exc:
        print(f"thieves create: {exc}", file=sys.stderr)
        return 2
    keeper = SeatKeeper(store, server, joining)
    app = PlayApp(server, race, joining.name, creator_token, key=joining.key, token=joining.token, keeper=keeper)
    return run_race_app(app, "create")
