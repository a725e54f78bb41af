"""A plain-text picture of a player view, for terminals and logs."""

from __future__ import annotations

from .cards import card_text
from .moves import column_letter
from .view import PlayerView


def render_text(view: PlayerView) -> str:
    """Foundations, stock and waste on top, then the columns side by side."""
    found = " ".join(card_text(c) if c is not None else "--" for c in view.foundation_cards())
    waste = card_text(view.waste[-1]) if view.waste else "--"
    lines = [
        f"{view.variant}  home {view.cards_home}/{view.total_cards}  moves {view.move_count}  {view.status}",
        f"foundations: {found}",
        f"stock: {view.stock_count:>3}  waste: {waste} ({len(view.waste)})"
        + (f"  pass {view.pass_number}/{view.stock_passes}" if view.stock_passes > 1 else ""),
        "  ".join(f" {column_letter(i)}" for i in range(len(view.tableau))),
    ]
    depth = max((len(col) for col in view.tableau), default=0)
    for row in range(depth):
        cells = []
        for col in view.tableau:
            if row < len(col):
                c = col[row]
                cells.append(card_text(c) if c is not None else "##")
            else:
                cells.append("  ")
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)
