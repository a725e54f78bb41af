"""``thieves replay FILE``: check a recorded game move by move."""

from __future__ import annotations

import argparse
import sys

from shared.deals import DealNumberError
from shared.record import GameRecord, RecordError, replay


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "replay",
        help="replay a recorded game and say whether it is legal and won",
        description="Replay a JSON game record {variant, deal, moves}; exit 0 when every move is legal, "
        "1 when a move is illegal, 2 when the file is not a record. Use - for standard input.",
    )
    p.add_argument("file", help="JSON record file, or - for standard input")
    p.add_argument("--quiet", "-q", action="store_true", help="print only the verdict")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        text = sys.stdin.read() if args.file == "-" else open(args.file, encoding="utf-8").read()
    except OSError as exc:
        print(f"thieves replay: cannot read {args.file}: {exc.strerror}", file=sys.stderr)
        return 2
    except UnicodeDecodeError:
        print(f"thieves replay: {args.file} is not UTF-8 text", file=sys.stderr)
        return 2
    try:
        record = GameRecord.loads(text)
        result = replay(record)
    except (RecordError, DealNumberError) as exc:
        print(f"thieves replay: {exc}", file=sys.stderr)
        return 2
    game = result.game
    if not args.quiet:
        print(game)
        print(f"position: {game.position()}")
    if not result.ok:
        bad = record.moves[result.failed_at]
        print(
            f"illegal: move {result.failed_at + 1} ({bad!r}): {result.error}",
        )
        return 1
    status = game.status().value
    print(f"{len(record.moves)} moves replayed; {game.cards_home}/{game.total_cards} home; {status}")
    return 0
