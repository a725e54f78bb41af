"""Which key names which column, for every variant of the family (up to 13 columns).

The scheme, in one sentence: the digit keys 1..9 and 0 are columns 1..10,
and *shift* plus a digit is ten more, so ``!`` ``@`` ``#`` (shift+1..3) are
columns 11, 12 and 13. The board prints each column's key above it, so a
player never has to remember the rule. Letters stay free for commands
(``w`` waste, ``f`` foundation, ``u`` undo, ...); the move notation's column
letters (``a``..``m``) would have collided with them.
"""

from __future__ import annotations

from shared.moves import FOUNDATION, STOCK, WASTE, Move

MAX_KEYED_COLUMNS = 13

_COLUMN_CHARS = "1234567890!@#"
"""The character of each column's key, in column order."""


def column_label(index: int) -> str:
    """The key to press for 0-based column ``index``, as printed above it."""
    if not 0 <= index < MAX_KEYED_COLUMNS:
        raise ValueError(f"columns are keyed up to {MAX_KEYED_COLUMNS}, not {index + 1}")
    return _COLUMN_CHARS[index]


def column_labels(columns: int) -> list[str]:
    """The keys of the first ``columns`` columns."""
    return [column_label(i) for i in range(columns)]


def column_for_key(character: str | None, columns: int) -> int | None:
    """The 0-based column a typed character picks, or ``None`` when it picks none.

    A key beyond this variant's columns picks none, so a stray ``#`` in a
    ten-column game is ignored rather than reported as a bad column.
    """
    if not character or len(character) != 1:
        return None
    index = _COLUMN_CHARS.find(character)
    return index if 0 <= index < columns else None


def describe_move(move: Move) -> str:
    """A move in the keys that play it: ``8 → 4``, ``w (waste) → f (home)``, ``1 → 2 (3 cards)``.

    Every message a player reads names a move this way, never in the wire
    notation (``hd``, ``WF``), whose column letters are not on the keys.
    """

    def place(where: int) -> str:
        if where == WASTE:
            return "w (waste)"
        if where == FOUNDATION:
            return "f (home)"
        if where == STOCK:
            return "stock"
        return column_label(where) if 0 <= where < MAX_KEYED_COLUMNS else f"column {where + 1}"

    if move.src == STOCK:
        return "space (draw)"
    if move.dst == STOCK:
        return "r (turn the waste over)"
    cards = f" ({move.count} cards)" if move.count > 1 else ""
    return f"{place(move.src)} → {place(move.dst)}{cards}"
