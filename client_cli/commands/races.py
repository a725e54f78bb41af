"""``thieves list``: the server's open and running races (``--all``: and the latest finished ones)."""

from __future__ import annotations

import argparse
import sys
import time

import msgspec

from client_cli.commands.netargs import add_server_option, server_of
from shared import protocol as p


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("list", help="list open and running races", description="List the races a player can join "
                            "(lobby) and those running (to watch).")
    parser.add_argument("--all", action="store_true", help="also the latest finished races (their results and "
                        "replays: thieves replay CODE)")
    parser.add_argument("--json", action="store_true", help="print the races as JSON")
    add_server_option(parser)
    parser.set_defaults(func=run)


def race_row(race: p.RaceInfo, now_ms: float) -> str:
    """One line per race; the time column is age in the lobby, time left while running."""
    if race.status == "finished":
        when = "finished"
    elif race.status == "running" and race.ends_at is not None:
        when = f"{max(0, int((race.ends_at - now_ms) / 1000))}s left"
    elif race.status == "countdown":
        when = "starting"
    else:
        when = f"{max(0, int((now_ms - race.created_at) / 1000))}s old"
    return (
        f"{race.code:<6} {race.id:<12} {race.status:<9} {race.variant:<15} "
        f"{race.players:>3}/{race.seats:<3} {race.time_limit:>5}s {'undo' if race.undo else '    '} {when}"
    )


HEADER = f"{'code':<6} {'id':<12} {'status':<9} {'variant':<15} {'seats':>7} {'limit':>6}      age/left"
"""The columns of :func:`race_row`, sized to the longest value each holds (a join code is 6 characters,
an id 12, ``forty-and-eight`` 15), so that a row fits an 80-column terminal."""


def seek_rows(pools: p.SeekPools) -> list[str]:
    """The seek pools (``thieves seek``) and how many wait in each, for the top of the list."""
    return [f"seeking: {line.waiting:>3} waiting  {line.variant}, {line.seats} players, {line.time_limit} s, "
            f"{'rated' if line.rated else 'casual'}" for line in pools.pools if line.waiting]


def run(args: argparse.Namespace) -> int:
    from client_cli.api import ApiError, list_races, seek_pools

    try:
        races = list_races(server_of(args), finished=args.all)
        pools = seek_pools(server_of(args))
    except ApiError as exc:
        print(f"thieves list: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(msgspec.json.encode(races).decode())
        return 0
    for row in seek_rows(pools):
        print(row)
    if not races:
        print(f"no open or running races{' and none finished lately' if args.all else ''} "
              "(create one with `thieves create`)")
        return 0
    print(HEADER)
    now = time.time() * 1000
    for race in races:
        print(race_row(race, now))
    return 0
