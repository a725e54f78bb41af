"""``thieves variants``: the games of the family and their dials."""

from __future__ import annotations

import argparse
import json

from shared.variants import DEFAULT_VARIANT, VARIANTS


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("variants", help="list the variants the engine plays")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.json:
        out = []
        for v in VARIANTS.values():
            out.append(
                {
                    "key": v.key,
                    "name": v.name,
                    "packs": v.packs,
                    "columns": v.columns,
                    "cards_per_column": v.cards_per_column,
                    "face_down_per_column": v.face_down_per_column,
                    "packing": v.packing.value,
                    "group_moves": v.group_moves.value,
                    "empty_column": v.empty_column.value,
                    "stock_passes": v.stock_passes,
                    "draw_count": v.draw_count,
                    "aces_first": v.aces_first,
                    "stock": v.stock_size,
                    "pysol_id": v.pysol_id,
                }
            )
        print(json.dumps(out, indent=2))
        return 0
    width = max(len(k) for k in VARIANTS)
    for v in VARIANTS.values():
        mark = " (default)" if v is DEFAULT_VARIANT else ""
        print(f"{v.key:<{width}}  {v.name}{mark}: {v.describe()}")
    return 0
