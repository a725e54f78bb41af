"""``thieves replay``: check a recorded game move by move (a file, or a finished race on the server)."""

from __future__ import annotations

import argparse
import json
import os
import sys

import msgspec

from client_cli.commands.netargs import add_server_option, server_of
from shared import protocol as p
from shared.deals import DealNumberError
from shared.moves import IllegalMove
from shared.record import GameRecord, RecordError, replay
from shared.standings import status_words
from shared.view import PlayerView


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "replay",
        help="replay a recorded game (a file or a finished race) and say whether it is legal and won",
        description="Replay one game: a JSON game record {variant, deal, moves}, a race's results JSON "
        "(as GET /races/{race}/results answers it), or, when SOURCE is not a file, the finished race "
        "SOURCE (an id or join code) fetched from --server. From results, the game replayed is --player's "
        "or --seat's, else your account's (when it raced), else the winner's. Exit 0 when every move is "
        "legal (and, from results, the game ends where the server says), 1 when not, 2 when SOURCE is "
        "neither a record nor a finished race, or its games are still secret (a race of an event until "
        "the event is over, a daily deal's play until the day is over).",
    )
    parser.add_argument("source", metavar="SOURCE",
                        help="JSON record or results file, - for standard input, or a race id or join code")
    parser.add_argument("--player", metavar="NAME", default=None, help="from results: this player's game")
    parser.add_argument("--seat", type=int, default=None, metavar="N", help="from results: the game of seat N")
    parser.add_argument("--quiet", "-q", action="store_true", help="print only the verdict")
    add_server_option(parser)
    parser.set_defaults(func=run)


class SourceError(Exception):
    """SOURCE cannot be read or is not a record: the message says why (exit 2)."""


def run(args: argparse.Namespace) -> int:
    if args.player is not None and args.seat is not None:
        print("thieves replay: give --player or --seat, not both", file=sys.stderr)
        return 2
    try:
        record, chosen, expected, ended = load(args)
        result = replay(record)
    except SourceError as exc:
        print(f"thieves replay: {exc}", file=sys.stderr)
        return 2
    except (RecordError, DealNumberError) as exc:
        print(f"thieves replay: {exc}", file=sys.stderr)
        return 2
    if chosen:
        print(chosen)
    game = result.game
    if not args.quiet:
        print(board_text(game.view()))
        print(f"position: {game.position()}")
    if not result.ok:
        bad = record.moves[result.failed_at]  # type: ignore[index]
        print(f"illegal: move {result.failed_at + 1}, {_bad_move_words(bad, result.error)}")  # type: ignore[operator]
        return 1
    status = status_words(ended, final=True) if ended is not None else game.status().value
    print(f"{len(record.moves)} moves replayed; {game.cards_home}/{game.total_cards} home; {status}")
    if expected is not None and game.position() != expected:
        print("the replay does not end in the position the server recorded for this game")
        return 1
    return 0


def board_text(view: PlayerView) -> str:
    """The board as the game's screen draws it (keys 1..0 above the columns, ``T♠``), whole (no column
    folded), without colour: what a player reads in a replay is what they read while playing."""
    from client_cli.board import HEADER_ROWS, BoardLayout

    depth = max((len(col) for col in view.tableau), default=0)
    layout = BoardLayout(view, 80, HEADER_ROWS + depth + 1)
    return "\n".join(line.plain.rstrip() for line in layout.lines)


def _bad_move_words(text: str, error: ValueError | None) -> str:
    """A move that does not replay, by the keys that play it, and why (``1 → 2: a card must be...``)."""
    from client_cli.wording import move_text_words

    if isinstance(error, IllegalMove):
        return f"{move_text_words(text)}: {error.reason.explanation}"
    return f"{text!r}: {error}"


def load(args: argparse.Namespace) -> tuple[GameRecord, str | None, str | None, str | None]:
    """The record to replay, the line naming whose game it is (from results), the final position
    the server recorded (from results) and how the game ended (its standing's status, from results:
    the engine cannot tell a game given up from one still playable)."""
    source = args.source
    if source == "-" or os.path.exists(source):
        data = _read_json(source)
        if isinstance(data, dict) and "records" in data and "standings" in data:
            try:
                results = msgspec.convert(data, p.Results)
            except msgspec.ValidationError as exc:
                raise SourceError(f"{source} looks like a race's results but is not: {exc}") from None
            return from_results(results, args)
        return GameRecord.from_json(data), None, None, None
    if os.sep in source or source.endswith(".json"):
        raise SourceError(f"cannot read {source}: no such file")
    return from_results(_fetch(args), args)


def _read_json(source: str) -> object:
    try:
        text = sys.stdin.read() if source == "-" else open(source, encoding="utf-8").read()
    except OSError as exc:
        raise SourceError(f"cannot read {source}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise SourceError(f"{source} is not UTF-8 text") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise RecordError(f"not JSON: {exc}") from None
    except RecursionError:
        raise RecordError("not a game record: JSON nested too deeply") from None


def _fetch(args: argparse.Namespace) -> p.Results:
    from client_cli import api

    server = server_of(args)
    try:
        return api.results(server, args.source)
    except api.ApiError as exc:
        if exc.code == p.ErrorCode.RACE_NOT_FOUND.value:
            raise SourceError(f"{args.source} is neither a file nor a race on {server} (finished races are "
                              "kept for the server's --retention, 7 days by default)") from None
        if exc.code == p.ErrorCode.RACE_NOT_OVER.value:
            raise SourceError(f"race {args.source} has not ended yet: its games are revealed at the end "
                              f"(`thieves watch {args.source}` follows it)") from None
        raise SourceError(exc.words()) from None


def from_results(results: p.Results, args: argparse.Namespace) -> tuple[GameRecord, str, str, str]:
    """One player's game from a race's results: --seat, --player, the own account, or the winner."""
    secret = results.secret_words()
    if secret is not None:
        raise SourceError(f"race {results.race} is over, but its game cannot be replayed yet. {secret}")
    if not results.records:
        raise SourceError(f"race {results.race} has no games in its results")
    by_seat = {r.seat: r for r in results.records}
    standing = _choose(results, args)
    record = by_seat.get(standing.seat) if standing is not None else None
    if record is None:
        if args.seat is not None:
            raise SourceError(f"race {results.race} has no seat {args.seat} (seats {sorted(by_seat)})")
        names = ", ".join(s.name for s in results.standings)
        raise SourceError(f"race {results.race} has no player {args.player!r} (players: {names})")
    assert standing is not None
    chosen = (f"race {results.race}, {results.variant} deal #{results.deal}: {record.name}'s game "
              f"(seat {record.seat}, place {standing.rank} of {len(results.standings)}, "
              f"{status_words(standing.status, final=True)})")
    return GameRecord(results.variant, results.deal, tuple(record.moves)), chosen, record.position, standing.status


def _choose(results: p.Results, args: argparse.Namespace) -> p.Standing | None:
    standings = results.standings
    if args.seat is not None:
        return next((s for s in standings if s.seat == args.seat), None)
    if args.player is not None:
        wanted = args.player.casefold()
        return next((s for s in standings if s.name.casefold() == wanted or s.account == wanted), None)
    mine = _own_account(args)
    if mine is not None:
        own = next((s for s in standings if s.account == mine), None)
        if own is not None:
            return own
    return min(standings, key=lambda s: s.rank) if standings else None


def _own_account(args: argparse.Namespace) -> str | None:
    """The account kept for --server, case-folded; ``None`` without one (or an unreadable store)."""
    from client_cli.api import ServerAddressError
    from client_cli.local_store import LocalStore, StoreError

    try:
        account = LocalStore().account(server_of(args))
    except (StoreError, ServerAddressError):  # a file replay needs no server: choose the winner
        return None
    return account.name.casefold() if account is not None else None
