"""Rules-engine throughput: legal-move generations and apply+undo pairs per second.

Why: the server validates every racer's move and the solver walks millions
of positions, so the engine's hot paths set the ceiling for both. The issue
asks for more than 100,000 apply+undo pairs per second on one core.

Positions are reachable Forty Thieves positions: random legal play (foundation
moves favoured, draws rationed so columns empty and foundations fill) from
many numbered deals, sampled at random depths. Each figure is timed over the
whole corpus several times on one pinned core; the median is reported with
the spread. An apply+undo pair is ``push(move)`` (which checks legality) then
``pop()``, for every legal move of every corpus position; ``--unchecked`` adds
the same pairs without the legality check, as a solver that generated the
move itself might play them.

Usage: ``python bench/engine.py [--deals 300] [--runs 5] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from shared.engine import Game  # noqa: E402
from shared.moves import FOUNDATION, STOCK, Move  # noqa: E402
from shared.variants import FORTY_THIEVES, get_variant  # noqa: E402


def reachable_positions(variant_key: str, deals: int, per_deal: int, seed: int) -> list[Game]:
    """``per_deal`` positions from random play on each of ``deals`` deals."""
    rng = random.Random(seed)
    variant = get_variant(variant_key)
    corpus: list[Game] = []
    for number in range(1, deals + 1):
        game = Game.new(variant, number)
        stops = sorted(rng.sample(range(0, 200), per_deal))
        played = 0
        for stop in stops:
            while played < stop:
                moves = game.legal_moves()
                if not moves:
                    break
                home = [m for m in moves if m.dst == FOUNDATION]
                others = [m for m in moves if m.src != STOCK]
                if home and rng.random() < 0.7:
                    game.push(rng.choice(home))
                elif others and rng.random() < 0.8:
                    game.push(rng.choice(others))
                else:
                    game.push(rng.choice(moves))
                played += 1
            corpus.append(game.copy(history=False))
        if number % 50 == 0:
            print(f"  corpus: {number}/{deals} deals", file=sys.stderr, flush=True)
    return corpus


def time_generation(corpus: list[Game], repeat: int) -> float:
    """legal_moves() calls per second over the corpus."""
    start = time.perf_counter()
    for _ in range(repeat):
        for game in corpus:
            game.legal_moves()
    return repeat * len(corpus) / (time.perf_counter() - start)


def time_pairs(work: list[tuple[Game, list[Move]]], repeat: int, checked: bool) -> float:
    """push+pop (or unchecked apply+pop) pairs per second over every legal move."""
    pairs = 0
    start = time.perf_counter()
    for _ in range(repeat):
        for game, moves in work:
            push = game.push if checked else game._apply
            pop = game.pop
            for move in moves:
                push(move)
                pop()
            pairs += len(moves)
    return pairs / (time.perf_counter() - start)


def measure(label: str, runs: int, fn) -> dict[str, float]:
    figures = []
    for i in range(runs):
        figures.append(fn())
        print(f"  {label}: run {i + 1}/{runs}: {figures[-1]:,.0f}/s", file=sys.stderr, flush=True)
    return {"median": statistics.median(figures), "min": min(figures), "max": max(figures)}


def pin_one_core() -> str:
    """Pin to the first allowed core so the figure is a single core's."""
    if not hasattr(os, "sched_setaffinity"):
        return "not pinned"
    core = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {core})
    return f"pinned to core {core}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog="Figures go to stdout, progress to stderr.")
    parser.add_argument("--variant", default=FORTY_THIEVES.key, help="variant key (default forty-thieves)")
    parser.add_argument("--deals", type=int, default=300, help="deals to sample positions from (default 300)")
    parser.add_argument("--per-deal", type=int, default=4, help="positions per deal (default 4)")
    parser.add_argument("--runs", type=int, default=5, help="timed runs per figure; the median is reported (default 5)")
    parser.add_argument("--repeat", type=int, default=10, help="passes over the corpus per run (default 10)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the random play (default 1)")
    parser.add_argument("--unchecked", action="store_true", help="also time apply+undo without the legality check")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--no-pin", action="store_true", help="do not pin the process to one core")
    args = parser.parse_args(argv)

    pinned = "not pinned" if args.no_pin else pin_one_core()
    print(f"building corpus: {args.deals} deals x {args.per_deal} positions ({pinned})", file=sys.stderr)
    corpus = reachable_positions(args.variant, args.deals, args.per_deal, args.seed)
    work = [(game, game.legal_moves()) for game in corpus]
    n_moves = sum(len(m) for _, m in work)
    results = {
        "variant": args.variant,
        "positions": len(corpus),
        "legal_moves_per_position": round(n_moves / len(corpus), 2),
        "cards_home_mean": round(statistics.mean(g.cards_home for g in corpus), 1),
        "runs": args.runs,
        "legal_move_generations_per_s": measure("generations", args.runs, lambda: time_generation(corpus, args.repeat)),
        "apply_undo_pairs_per_s": measure("push+pop", args.runs, lambda: time_pairs(work, args.repeat, True)),
    }
    if args.unchecked:
        results["unchecked_apply_undo_pairs_per_s"] = measure(
            "apply+pop", args.runs, lambda: time_pairs(work, args.repeat, False)
        )
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print(
        f"{results['variant']}: {results['positions']} reachable positions, "
        f"{results['legal_moves_per_position']} legal moves each on average, "
        f"{results['cards_home_mean']} cards home on average; median of {args.runs} runs, one core"
    )
    for key, label in (
        ("legal_move_generations_per_s", "legal-move generations/s"),
        ("apply_undo_pairs_per_s", "apply+undo pairs/s (push+pop)"),
        ("unchecked_apply_undo_pairs_per_s", "apply+undo pairs/s (unchecked)"),
    ):
        if key in results:
            r = results[key]
            print(f"{label:>32}: {r['median']:>11,.0f}   (min {r['min']:,.0f}, max {r['max']:,.0f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
