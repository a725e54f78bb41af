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

``--move-path`` measures something else: the Python work the server does for
each accepted move (parse, legality, push, player status, the acknowledgement's
view, encoding), step by step, replaying recorded games (random playouts and
the winning line of tests/data/race_win_line.json) as server/connection.py
does: ``python bench/engine.py --move-path --deals 20 --repeat 5 --runs 3``.
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
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from shared import protocol as p  # noqa: E402
from shared.deals import Deal  # noqa: E402
from shared.engine import Game, Status  # noqa: E402
from shared.moves import FOUNDATION, STOCK, Move  # noqa: E402
from shared.variants import FORTY_THIEVES, get_variant  # noqa: E402


def policy_move(game: Game, rng: random.Random) -> Move | None:
    """A random legal move, foundation moves favoured and draws rationed (so columns empty and foundations fill)."""
    moves = game.legal_moves()
    if not moves:
        return None
    home = [m for m in moves if m.dst == FOUNDATION]
    others = [m for m in moves if m.src != STOCK]
    if home and rng.random() < 0.7:
        return rng.choice(home)
    if others and rng.random() < 0.8:
        return rng.choice(others)
    return rng.choice(moves)


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
                move = policy_move(game, rng)
                if move is None:
                    break
                game.push(move)
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


# ------------------------------------------------------------ the move path
WIN_LINE = Path(__file__).resolve().parent.parent / "tests" / "data" / "race_win_line.json"
STEPS = ("parse", "reason", "push", "status", "view", "encode")
"""The server's work per accepted move, in its order (server/connection.py ``_apply`` and ``on_move``)."""
PIPELINES = ("server", "engine")


def recorded_games(variant_key: str, deals: int, seed: int, max_moves: int) -> list[tuple[str, int, list[str]]]:
    """(variant, deal, move texts): random playouts of ``deals`` deals plus the winning line of the race tests.

    The playouts use the corpus's policy (foundation moves favoured, draws
    rationed) and stop when no move is left or after ``max_moves``; the
    winning line runs a whole game to the end, where the stock is empty and
    the blocked test is at its dearest.
    """
    rng = random.Random(seed)
    variant = get_variant(variant_key)
    games = []
    for number in range(1, deals + 1):
        game = Game.new(variant, number)
        texts: list[str] = []
        while len(texts) < max_moves:
            move = policy_move(game, rng)
            if move is None:
                break
            game.push(move)
            texts.append(move.text())
        games.append((variant.key, number, texts))
    line = json.loads(WIN_LINE.read_text())
    games.append((line["variant"], int(line["deal"]), list(line["moves"])))
    return games


def _server_hooks() -> tuple[Callable[[str, int], Deal], Callable[[Game], str]]:
    """The server's own deal cache and ``player_status``, used read-only.

    server/ is being restructured: if ``server.races`` moves, the same two
    calls are made through shared (``player_status`` is then the server's
    three-line rule, kept identical).
    """
    try:
        from server.races import player_status, race_deal
    except ImportError:
        from functools import lru_cache

        from shared.deals import deal as make_deal

        race_deal = lru_cache(maxsize=256)(lambda v, n: make_deal(get_variant(v), n))

        def player_status(game: Game) -> str:
            if game.is_won():
                return "finished"
            return "blocked" if game.status() is Status.BLOCKED else "racing"

    return race_deal, player_status


def time_move_path(games: list[tuple[str, int, list[str]]], repeat: int, pipeline: str) -> dict[str, float]:
    """µs per accepted move for each step of ``pipeline``, and in total.

    ``server`` is today's sequence in server/connection.py: ``Move.parse``,
    ``game.reason``, ``game.push`` (which checks again), ``player_status``
    plus ``cards_home``/``move_count`` for the commit,
    ``View.from_player_view(game.view())``, ``encode(Ack(...))``.
    ``engine`` is the entry point offered to replace it: ``Move.parse``,
    ``game.play_checked`` (one legality check, then apply; its figure is
    under ``push``), the same status, ``View.of_game(game)``, ``encode``.
    Per-step figures have the clock's own cost taken off; ``total`` is a
    second pass with no clock inside the loop, in the process's CPU time
    (the issue's measure, and steadier than the wall clock on a shared machine).
    """
    race_deal, player_status = _server_hooks()
    checked = pipeline == "server"
    clock = time.perf_counter_ns
    sums = dict.fromkeys(STEPS, 0)
    t0 = clock()
    for _ in range(1000):
        clock()
    tick = (clock() - t0) / 1000
    starts = [(Game.from_deal(race_deal(v, d)), texts) for v, d, texts in games]
    n_moves = repeat * sum(len(texts) for _, texts in starts)
    for _ in range(repeat):
        for start, texts in starts:
            game = start.copy()
            for seq, text in enumerate(texts, 1):
                a = clock()
                move = Move.parse(text)
                b = clock()
                if checked:
                    why = game.reason(move)
                    c = clock()
                    game.push(move)
                else:
                    c = b
                    why = game.play_checked(move)
                d = clock()
                status = player_status(game)
                _commit = (game.cards_home, game.move_count)
                e = clock()
                view = p.View.from_player_view(game.view()) if checked else p.View.of_game(game)
                f = clock()
                p.encode(p.Ack(seq=seq, move=move.text(), version=seq, view=view, status=status))  # type: ignore[arg-type]
                g = clock()
                assert why is None, (text, why)
                sums["parse"] += b - a
                sums["reason"] += c - b
                sums["push"] += d - c
                sums["status"] += e - d
                sums["view"] += f - e
                sums["encode"] += g - f
    figures = {k: max(0.0, (v / n_moves - tick) / 1000) if v else 0.0 for k, v in sums.items()}
    games_again = [(start.copy(), texts) for _ in range(repeat) for start, texts in starts]
    t0 = time.process_time_ns()
    for game, texts in games_again:
        _replay(game, texts, player_status, checked)
    figures["total"] = (time.process_time_ns() - t0) / n_moves / 1000
    return figures


def _replay(game: Game, texts: list[str], player_status: Callable[[Game], str], checked: bool) -> None:
    """The same per-move sequence as :func:`time_move_path`, without clocks (its ``total``)."""
    encode, Ack, parse = p.encode, p.Ack, Move.parse
    from_player_view, of_game = p.View.from_player_view, getattr(p.View, "of_game", None)
    for seq, text in enumerate(texts, 1):
        move = parse(text)
        if checked:
            why = game.reason(move)
            game.push(move)
        else:
            why = game.play_checked(move)
        status = player_status(game)
        _commit = (game.cards_home, game.move_count)
        view = from_player_view(game.view()) if checked else of_game(game)
        encode(Ack(seq=seq, move=move.text(), version=seq, view=view, status=status))  # type: ignore[arg-type]
        assert why is None


def move_path_main(args: argparse.Namespace) -> int:
    """``--move-path``: µs per accepted move along the server's path, per step and in total."""
    print(f"recording games: {args.deals} random playouts + the winning line", file=sys.stderr)
    games = recorded_games(args.variant, args.deals, args.seed, args.max_moves)
    pipelines = [x for x in PIPELINES if x == "server" or hasattr(Game, "play_checked")]
    if args.pipeline != "all":
        pipelines = [args.pipeline]
    results: dict[str, object] = {
        "moves_per_replay": sum(len(t) for *_, t in games),
        "games": len(games),
        "runs": args.runs,
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }
    for name in pipelines:
        runs = []
        for i in range(args.runs):
            runs.append(time_move_path(games, args.repeat, name))
            print(f"  {name}: run {i + 1}/{args.runs}: total {runs[-1]['total']:.2f} µs/move", file=sys.stderr, flush=True)
        results[name] = {k: round(statistics.median(r[k] for r in runs), 3) for k in runs[0]}
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print(
        f"move path: {results['games']} games, {results['moves_per_replay']} moves each replay, "
        f"x{args.repeat}; median of {args.runs} runs; µs per accepted move; load {results['load_average']}"
    )
    print(f"{'pipeline':>10} " + " ".join(f"{s:>8}" for s in STEPS + ("total",)))
    for name in pipelines:
        row = results[name]
        print(f"{name:>10} " + " ".join(f"{row[s]:>8.2f}" for s in STEPS + ("total",)))  # type: ignore[index]
    return 0


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
    parser.add_argument("--move-path", action="store_true",
                        help="instead: µs per accepted move along the server's path (parse, legality, push, "
                        "status, view, encode), replaying --deals random playouts and the race tests' winning line")
    parser.add_argument("--max-moves", type=int, default=300, help="--move-path: longest playout (default 300)")
    parser.add_argument("--pipeline", choices=("all",) + PIPELINES, default="all",
                        help="--move-path: today's server sequence, the engine's entry point, or both (default)")
    args = parser.parse_args(argv)

    pinned = "not pinned" if args.no_pin else pin_one_core()
    if args.move_path:
        print(pinned, file=sys.stderr)
        return move_path_main(args)
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
