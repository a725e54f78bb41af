"""``thieves daily``: today's deal (one a day per variant, UTC): play it once, on your own clock, or
see the day's board. The deal and everyone's games are revealed once the day is over."""

from __future__ import annotations

import argparse
import sys

from client_cli.commands.netargs import add_server_option, server_of
from shared.variants import DEFAULT_VARIANT, VARIANTS


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "daily",
        help="today's deal: play it once with your account, or see the day's board",
        description="One deal a day per variant (UTC), the same for everyone. `thieves daily play` opens "
        "your race on it (the same race if you ask again: one play a day); press s in the lobby to start "
        "your own clock. `thieves daily board` lists the day's results by time, then cards home; the "
        "deal and everyone's moves are shown once the day is over.",
    )
    parser.add_argument("action", choices=["play", "board"], nargs="?", default="board")
    parser.add_argument("--variant", "-v", default=DEFAULT_VARIANT.key, choices=list(VARIANTS))
    parser.add_argument("--date", default=None, metavar="YYYY-MM-DD", help="board: another day's (default today)")
    add_server_option(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from client_cli import api

    server = server_of(args)
    try:
        if args.action == "board":
            board = api.daily_board(server, args.variant, args.date)
            print("\n".join(board_lines(board)))
            return 0
        from client_cli.local_store import LocalStore

        account = LocalStore().account(server)
        if account is None:
            print(f"thieves daily: the daily deal is played with an account: `thieves register NAME` "
                  f"makes one for {server}", file=sys.stderr)
            return 1
        play = api.play_daily(server, args.variant, account.key)
    except api.ApiError as exc:
        print(f"thieves daily: {exc.words()}", file=sys.stderr)
        return 1
    print(f"your race on the {play.date} deal of {play.variant}: {play.code} ({play.time_limit} s from your start)")
    from client_cli.commands import play as play_cmd

    return play_cmd.run(argparse.Namespace(race=play.code, name=None, anonymous=False, creator_token=None,
                                           server=args.server))


def board_lines(board: object) -> list[str]:
    from shared import protocol as p
    from shared.standings import status_words

    assert isinstance(board, p.DailyBoard)
    if not board.revealed:
        deal = "revealed when the day is over (UTC)"
    elif board.deal is None:
        deal = "nobody played it, so no deal was drawn"
    else:
        deal = f"deal {board.deal}, revealed"
    out = [f"the {board.date} deal of {board.variant}: {deal}"]
    if not board.lines:
        return out if board.revealed else out + ["  nobody has played it yet"]
    out.append(f"{'rank':>4}  {'name':<24} {'result':<11} {'cards':>5} {'time':>8}")
    for line in board.lines:
        time_text = f"{line.time_ms / 1000:>7.1f}s" if line.time_ms is not None else f"{'':>8}"
        out.append(f"{line.rank:>4}  {line.name[:24]:<24} {status_words(line.status, final=True):<11} "
                   f"{line.home:>5} {time_text}" + ("" if line.counted else "  (not counted)"))
    if not all(line.counted for line in board.lines):
        out.append("(not counted: accounts newer or with fewer rated races than the server asks of the board)")
    return out
