"""A sound dead-end test: cards that can never reach the foundations.

The test solves a relaxation of the game that is easier than the game
itself, so when the relaxation is lost the game is lost too. In the
relaxation a card that leaves its place goes to an unlimited free cell,
from which it may go home whenever its foundation allows; the only
constraints kept are the ones that hold for a card's *first* departure:

- everything that lies on it now (in its column, or above it in the
  waste) has left before;
- it goes home (some copy of the card below it in its suit went home
  before), or onto a card it may be packed on that is then exposed (a
  column card whose cards above it have all left, or a card that itself
  left its place, since a moved card lands on top of something), or into
  an empty column (one that is empty now, or whose cards have all left)
  when the empty-column rule lets it in.

The least fixpoint of these conditions over-approximates what can ever
happen: by induction on the time of each card's first departure (and of
each card's arrival home), a card that ever leaves is marked removable,
and a card that ever goes home is marked homeable. If some card in play
is never marked homeable, no sequence of moves wins: the position is
dead. ``docs/solver.md`` has the argument in full.

Stock cards have nothing above them in the relaxation (a card just drawn
is the top of the waste), and so do waste cards when a redeal is still to
come (they will be drawn again one by one). Group moves break the
"everything above left first" step, so the test declines (answers "not
dead") for variants with group moves.
"""

from __future__ import annotations

from ..variants import GroupMoves
from .board import Board


def dead(board: Board) -> bool:
    """Whether the relaxation proves that ``board`` cannot be won (never wrong when True)."""
    rules = board.rules
    if rules.group is not GroupMoves.NONE:
        return False
    cols = sorted([col for col in board.cols if col], key=len)  # short columns empty first
    if len(cols) < len(board.cols):
        return False  # an empty column now: every top card can move, the relaxation never blocks
    home = board.home
    packs = rules.packs
    parents = rules.parents
    empty_any = rules.empty_any
    empty_kings = rules.empty_kings
    left_out = [0] * 52  # in-play copies of each card that can leave their place
    # reach[c]: how many copies of c can ever be home (an upper bound).
    reach = list(home)
    exposed = [False] * 52  # some copy of c can be the top of a column (a packing target)
    for col in cols:
        exposed[col[-1]] = True
    free: list[int] = list(board.stock[board.si :])
    waste = board.waste
    if board.pass_no < rules.passes:
        free.extend(waste)
        stack = b""
    else:
        stack = waste
    left = [len(col) for col in cols]  # each column's cards not yet removed (removable ones are a suffix)
    wleft = len(stack)
    free_done = [False] * len(free)
    can_empty = False

    def leaves(c: int) -> bool:
        # Its first departure: home (a copy of the card below is home beyond the
        # copies of c home now), onto an exposed card it packs on, or into an empty column.
        r0 = c % 13
        if r0 == 0 or reach[c - 1] > home[c]:
            return True
        for p in parents[c]:
            if exposed[p]:
                return True
        return can_empty and (empty_any or (empty_kings and r0 == 12))

    changed = True
    while changed:
        changed = False
        for i, col in enumerate(cols):
            n = left[i]
            while n and leaves(col[n - 1]):
                c = col[n - 1]
                exposed[c] = True
                left_out[c] += 1
                n -= 1
                if n:
                    exposed[col[n - 1]] = True
            if n != left[i]:
                left[i] = n
                changed = True
                if n == 0:
                    if empty_any:
                        return False  # every card can now leave, so every card can go home
                    can_empty = True
        while wleft and leaves(stack[wleft - 1]):
            c = stack[wleft - 1]
            exposed[c] = True
            left_out[c] += 1
            wleft -= 1
            changed = True
        for j, c in enumerate(free):
            if not free_done[j] and leaves(c):
                free_done[j] = True
                exposed[c] = True
                left_out[c] += 1
                changed = True
        for suit in range(0, 52, 13):
            prev = packs  # a foundation's base: every copy of a rank may start one
            for c in range(suit, suit + 13):
                r = home[c] + left_out[c]
                if r > prev:
                    r = prev
                if r != reach[c]:
                    reach[c] = r
                    changed = True
                prev = r
    return any(r < packs for r in reach)


__all__ = ["dead"]
