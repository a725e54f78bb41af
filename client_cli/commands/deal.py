"""``thieves deal``: show a deal's layout (PySolFC-compatible numbering)."""

from __future__ import annotations

import argparse
import json
import sys

from shared.deals import DealNumberError, deal
from shared.engine import Game
from shared.variants import DEFAULT_VARIANT, UnknownVariant, get_variant
from shared.cards import cards_text


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("deal", help="print the layout of a deal")
    p.add_argument("number", type=int, help="deal number (PySolFC's game number)")
    p.add_argument("--variant", "-v", default=DEFAULT_VARIANT.key, help="variant key (see `thieves variants`)")
    p.add_argument("--json", action="store_true", help="print {variant, deal, tableau, stock} as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        d = deal(get_variant(args.variant), args.number)
    except (UnknownVariant, DealNumberError) as exc:
        print(f"thieves deal: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(d.to_json()))
        return 0
    game = Game.from_deal(d)
    print(f"{d.variant.name}, deal {d.number}")
    print(game)
    print(f"stock (next card first): {cards_text(d.stock)}")
    print(f"position: {game.position()}")
    return 0
