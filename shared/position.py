"""Whole positions as text and as bytes; both round-trip exactly.

Text form (one line, six fields separated by single spaces)::

    <variant> <pass> <foundations> <tableau> <waste> <stock>

- ``variant``: the variant key, e.g. ``forty-thieves``.
- ``pass``: the stock pass in progress, 1 for the first.
- ``foundations``: the top card of each foundation, comma separated, ``-``
  for an empty one. Foundation ``i`` holds suit ``i % 4`` (clubs, diamonds,
  hearts, spades, clubs, ...).
- ``tableau``: columns separated by ``/``, each written bottom card first as
  two-character cards back to back; face-down cards come first and are ended
  by ``|``; an empty column is ``-``.
- ``waste``: bottom card first, or ``-``.
- ``stock``: next card to be drawn first, or ``-``. A player view writes
  ``#N`` here instead: N cards, order unknown.

Example (deal start, shortened)::

    forty-thieves 1 -,-,-,-,-,-,-,- 9h2cQd5s/... - Kd4c...

The binary form is for storage: a version byte then the same fields as
bytes (see :func:`position_bytes`). Parsing either form checks that every
card of the variant is present exactly as often as it has packs.
"""

from __future__ import annotations

from collections import Counter

from .cards import CardParseError, card_text, cards_text, parse_card, parse_cards, rank_of, suit_of
from .engine import Game
from .variants import VARIANTS, UnknownVariant, get_variant

_BINARY_VERSION = 1
_VARIANT_KEYS = list(VARIANTS)


class PositionError(ValueError):
    """Text or bytes that are not a consistent position."""


def _cards_or_dash(cards: list[int]) -> str:
    return cards_text(cards) if cards else "-"


def position_text(game: Game) -> str:
    """The text form of ``game``'s position (history is not part of it)."""
    found = ",".join(card_text(c) if c is not None else "-" for c in game.foundation_cards())
    cols = []
    for col, h in zip(game.tableau, game.hidden):
        if not col:
            cols.append("-")
        elif h:
            cols.append(cards_text(col[:h]) + "|" + cards_text(col[h:]))
        else:
            cols.append(cards_text(col))
    return " ".join(
        [
            game.variant.key,
            str(game.pass_number),
            found,
            "/".join(cols),
            _cards_or_dash(game.waste),
            _cards_or_dash(game.stock_in_draw_order()),
        ]
    )


def parse_position(text: str) -> Game:
    """Read :func:`position_text`'s form back into a :class:`Game`."""
    fields = text.split()
    if len(fields) != 6:
        raise PositionError(
            f"a position has 6 fields (variant pass foundations tableau waste stock), got {len(fields)}"
        )
    key, pass_s, found_s, tab_s, waste_s, stock_s = fields
    try:
        variant = get_variant(key)
        if not (pass_s.isascii() and pass_s.isdigit()):
            raise PositionError(f"pass must be a number, got {pass_s!r}")
        tops = found_s.split(",")
        foundations = []
        for i, t in enumerate(tops):
            if t == "-":
                foundations.append(0)
                continue
            c = parse_card(t)
            if suit_of(c) != i % 4:
                raise PositionError(f"foundation {i} holds suit {'cdhs'[i % 4]}, not {t!r}")
            foundations.append(rank_of(c))
        tableau: list[list[int]] = []
        hidden: list[int] = []
        for col in tab_s.split("/"):
            if col == "-":
                tableau.append([])
                hidden.append(0)
                continue
            down, bar, up = col.rpartition("|")
            cards = parse_cards(down) + parse_cards(up)
            tableau.append(cards)
            hidden.append(len(down) // 2 if bar else 0)
        waste = [] if waste_s == "-" else parse_cards(waste_s)
        if stock_s.startswith("#"):
            raise PositionError("this is a player view (hidden stock); a full position lists the stock")
        stock = [] if stock_s == "-" else parse_cards(stock_s)
    except (CardParseError, UnknownVariant) as exc:
        raise PositionError(str(exc)) from None
    game = Game(variant, tableau, stock, waste, foundations, hidden, int(pass_s))
    check_position(game)
    return game


def check_position(game: Game) -> None:
    """Raise :class:`PositionError` unless ``game`` is a consistent position of its variant."""
    v = game.variant
    if len(game.tableau) != v.columns:
        raise PositionError(f"{v.name} has {v.columns} columns, got {len(game.tableau)}")
    if len(game.foundations) != v.foundations:
        raise PositionError(f"{v.name} has {v.foundations} foundations, got {len(game.foundations)}")
    if not 1 <= game.pass_number <= v.stock_passes:
        raise PositionError(f"{v.name} allows passes 1..{v.stock_passes}, got {game.pass_number}")
    if any(not 0 <= r <= 13 for r in game.foundations):
        raise PositionError("a foundation holds 0 to 13 cards")
    counts: Counter[int] = Counter()
    for col, h in zip(game.tableau, game.hidden):
        if not 0 <= h <= len(col) or (col and h == len(col)):
            raise PositionError("a column's top card is face up")
        counts.update(col)
    counts.update(game.waste)
    counts.update(game.stock)
    for i, r in enumerate(game.foundations):
        counts.update((i % 4) * 13 + k for k in range(r))
    bad = [card_text(c) + f"x{counts.get(c, 0)}" for c in range(52) if counts.get(c, 0) != v.packs]
    if bad or len(counts) != 52:
        raise PositionError(
            f"{v.name} has every card {v.packs} times; wrong counts: {', '.join(bad[:8])}"
            + (" ..." if len(bad) > 8 else "")
        )


def position_bytes(game: Game) -> bytes:
    """A compact binary form: version, variant, pass, foundations, columns, waste, stock.

    Each list is a length byte then one byte per card (0..51); a column
    also carries its face-down count first. No variant has more than 255
    cards in one place, so bytes suffice.
    """
    out = bytearray([_BINARY_VERSION, _VARIANT_KEYS.index(game.variant.key), game.pass_number])
    out += bytes(game.foundations)
    for col, h in zip(game.tableau, game.hidden):
        out += bytes([h, len(col)])
        out += bytes(col)
    out.append(len(game.waste))
    out += bytes(game.waste)
    out.append(len(game.stock))
    out += bytes(game.stock)
    return bytes(out)


def parse_position_bytes(data: bytes) -> Game:
    """Read :func:`position_bytes`' form back, checking it as :func:`parse_position` does."""
    try:
        if data[0] != _BINARY_VERSION:
            raise PositionError(f"unknown binary position version {data[0]}")
        if len(data) > 1 and data[1] >= len(_VARIANT_KEYS):
            raise PositionError(f"unknown variant index {data[1]} in a binary position")
        variant = VARIANTS[_VARIANT_KEYS[data[1]]]
        pass_number = data[2]
        i = 3
        foundations = list(data[i : i + variant.foundations])
        i += variant.foundations
        tableau, hidden = [], []
        for _ in range(variant.columns):
            h, n = data[i], data[i + 1]
            tableau.append(list(data[i + 2 : i + 2 + n]))
            hidden.append(h)
            i += 2 + n
        n = data[i]
        waste = list(data[i + 1 : i + 1 + n])
        i += 1 + n
        n = data[i]
        stock_top_last = list(data[i + 1 : i + 1 + n])
        i += 1 + n
    except IndexError:
        raise PositionError("binary position is truncated") from None
    if i != len(data):
        raise PositionError("binary position has trailing bytes")
    if any(c > 51 for c in stock_top_last + waste) or any(c > 51 for col in tableau for c in col):
        raise PositionError("binary position holds a byte that is not a card")
    game = Game(variant, tableau, stock_top_last[::-1], waste, foundations, hidden, pass_number)
    check_position(game)
    return game
