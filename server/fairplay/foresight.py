"""Foresight: how often a player's choices were good only given stock cards it had not seen yet.

The tableau is face up; the one hidden thing is the order of the stock cards not drawn yet. A player
who knows that order (from a scout) picks, at the decisions the order settles, the move that wins with
the true order, even where what it could see favoured another. So at each decision of a finished game
(a position with two moves or more while cards are unseen) the solver can score a move twice:

- with the **true order** (what the server knows): does a win follow within the node budget?
- over **sampled orders** (the unseen cards shuffled, ``samples`` times): how often does a win follow?
  That is what the visible information says of the move.

Scoring every move of every decision would cost too much and say little: most choices are the natural
move (the first in the solver's own move ordering, which a greedy player takes too), and the server's
checked deals are ones that ordering nearly wins, so a line through them is mostly natural moves. What
knowing the order changes is where a player **deviates** from the natural move. At each deviation the
chosen and the natural move are scored:

- a **foresight deviation**: the chosen move wins with the true order, the natural one does not, and
  over sampled orders of the unseen cards the chosen move did not win more often than the natural one
  by more than ``EVIDENCE_MARGIN``: the deviation was right for a reason the player could not see;
- a **costly deviation**: the natural move wins with the true order, the chosen one does not, and the
  visible cards did not favour the natural one by more than the margin either.

A player who deviates on its own judgement makes both kinds, about as often; one who knows the order
makes only the first. The statistic is ``foresight - costly``; flagged at ``FORESIGHT_THRESHOLD`` or more
(server/fairplay/report.py), a threshold the bench measures against honest players (bench/fairplay.py).

The analysis also notes a game whose moves are the server's own stored winning line (or begin with most
of it) and the undos. It is pure (no I/O), deterministic for a seed, and bounded: at most
``max_decisions`` decisions and ``cpu_budget`` seconds of this process's CPU per game. It runs in the
solver workers (server/ops/workers.py), after the race, never on the move path.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field

from shared import protocol as p
from shared.cards import Card, card_text
from shared.engine import Game
from shared.moves import Move
from shared.solver import Verdict, solve
from shared.solver.board import Board
from shared.variants import get_variant


EVIDENCE_MARGIN = 0.2
"""A deviation counts (either way) only when the visible cards did not favour the move taken (or the one
passed over) by more than this share of sampled orders: late in a game, with few cards unseen, the
sampled orders already tell a player which move wins, and taking it is no foresight."""


@dataclass(frozen=True)
class Budget:
    """What one game's analysis may spend."""

    samples: int = 16
    """Sampled orders of the unseen cards per candidate."""
    nodes: int = 20_000
    """Solver nodes per solve (a position the solver cannot settle in these counts as not won)."""
    max_decisions: int = 400
    cpu_budget: float = 6.0
    """Seconds of CPU per game; the decisions analysed so far stand when it runs out."""


@dataclass
class Foresight:
    """One game's foresight analysis."""

    decisions: int = 0
    """Decisions looked at (positions with a choice while cards were unseen)."""
    deviations: int = 0
    """Of these, how many the player left the natural move at."""
    settled: list[p.FairPlayDecision] = field(default_factory=list)
    """The deviations the true order settles (one of the two moves wins, the other not)."""
    foresight: int = 0
    costly: int = 0
    stored_line_share: float = 0.0
    """The share of the server's stored winning line the game's moves begin with (1.0: the very line)."""
    undos: int = 0
    cpu_seconds: float = 0.0
    complete: bool = True
    """False: the CPU budget ran out before every decision was analysed."""

    @property
    def statistic(self) -> int:
        return self.foresight - self.costly


def _wins(game: Game, nodes: int) -> bool:
    return solve(game, time_limit=None, node_limit=nodes).verdict is Verdict.WON


def _with_order(game: Game, unseen_at: list[int], order: list[Card]) -> Game:
    """``game`` with its unseen stock cards (at ``unseen_at`` in ``game.stock``) in ``order``."""
    g = game.copy(history=False)
    for place, card in zip(unseen_at, order):
        g.stock[place] = card
    return g


def _after(game: Game, move: Move) -> Game:
    g = game.copy(history=False)
    g.push(move)
    return g


def natural_move(game: Game) -> Move | None:
    """The first move of the solver's ordering (foundations, uncovering moves, waste plays, draws)."""
    moves = Board(game).moves()
    return moves[0] if moves else None


def stored_line_share(moves: list[str], line: list[str]) -> float:
    """How much of ``line`` the game's moves (undos taken out) begin with, as a share of ``line``."""
    if not line:
        return 0.0
    played = [m for m in moves if m != "U"]
    same = 0
    for a, b in zip(played, line):
        if a != b:
            break
        same += 1
    return same / len(line)


def analyse(variant: str, deal: int, moves: list[str], line: list[str], seed: int,
            budget: Budget = Budget()) -> Foresight:
    """The foresight analysis of one finished game: ``moves`` (its record, ``U`` = undo) on ``deal``."""
    started = time.process_time()
    rng = random.Random(seed)
    out = Foresight(stored_line_share=stored_line_share(moves, line), undos=moves.count("U"))
    game = Game.new(get_variant(variant), deal)
    size = len(game.stock)
    drawn = 0  # the most the first pass took off the stock: the cards below that were never seen
    for ply, text in enumerate(moves):
        if text == "U":
            game.pop()
            continue
        move = Move.parse(text)
        unseen_at = list(range(size - drawn)) if game.pass_number == 1 else []  # the stock's bottom, next card last
        if unseen_at and out.decisions < budget.max_decisions and len(game.legal_moves()) >= 2:
            out.decisions += 1
            natural = natural_move(game)
            if natural is not None and natural != move and game.is_legal(move):
                out.deviations += 1
                if time.process_time() - started > budget.cpu_budget:
                    out.complete = False
                else:
                    _score(game, ply, move, natural, unseen_at, rng, budget, out)
        game.push(move)
        drawn = max(drawn, size - len(game.stock))
    out.cpu_seconds = time.process_time() - started
    return out


def _score(game: Game, ply: int, move: Move, natural: Move, unseen_at: list[int], rng: random.Random,
           budget: Budget, out: Foresight) -> None:
    """Score one deviation; note it in ``out`` when the true order settles it."""
    chosen_wins, natural_wins = (_wins(_after(game, m), budget.nodes) for m in (move, natural))
    if chosen_wins == natural_wins:
        return  # the true order does not tell the two apart: nothing to know beforehand
    unseen = [game.stock[i] for i in unseen_at]
    won = [0, 0]
    for _ in range(budget.samples):
        order = unseen[:]
        rng.shuffle(order)
        sampled = _with_order(game, unseen_at, order)
        for i, m in enumerate((move, natural)):
            won[i] += _wins(_after(sampled, m), budget.nodes)
    chosen_share, natural_share = (w / budget.samples for w in won)
    foresight = chosen_wins and chosen_share <= natural_share + EVIDENCE_MARGIN
    out.foresight += foresight
    out.costly += natural_wins and natural_share <= chosen_share + EVIDENCE_MARGIN
    out.settled.append(p.FairPlayDecision(
        ply=ply, move=move.text(), natural=natural.text(), position=game.position(),
        unseen=[card_text(c) for c in reversed(unseen)], chosen_wins=chosen_wins, natural_wins=natural_wins,
        chosen_share=chosen_share, natural_share=natural_share, foresight=foresight))
