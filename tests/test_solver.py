"""The solver: its board agrees with the engine, its cuts are sound, its lines replay.

Every winning line is replayed through the real engine (``Game.push`` or
``shared.record.replay``), never trusted from the solver's own board.
"""

from __future__ import annotations

import random
from itertools import count

import pytest

from enginekit import play_randomly, scrambled_game
from shared.cards import parse_cards
from shared.engine import Game
from shared.moves import FOUNDATION, MAX_COLUMNS, Move
from shared.record import GameRecord, replay
from shared.solver import PORTFOLIO, SolveResult, UnsupportedPosition, Verdict, solve, solve_deal
from shared.solver.board import Board, exposed_by
from shared.variants import FORTY_THIEVES, SIXTY_THIEVES, VARIANTS, get_variant


def board_state(b: Board) -> tuple:
    return (list(b.cols), b.waste, b.stock[b.si :], b.pass_no, list(b.home), b.nhome)


def assert_same(b: Board, game: Game) -> None:
    """The solver's board holds exactly the engine's position."""
    assert board_state(b) == board_state(Board(game))


def assert_wins(game: Game, result: SolveResult) -> None:
    """The line is legal move by move in the engine and ends with every card home."""
    assert result.verdict is Verdict.WON
    g = game.copy(history=False)
    for move in result.moves:
        g.push(move)
    assert g.is_won()


def random_positions(seed: int, n: int):
    rng = random.Random(seed)
    variants = list(VARIANTS.values())
    for i in range(n):
        v = variants[i % len(variants)]
        if i % 2:
            yield scrambled_game(v, rng)
        else:
            yield play_randomly(Game.new(v, rng.randrange(1, 10**6)), rng, rng.randrange(0, 120))


# ------------------------------------------------------- board vs engine
@pytest.mark.parametrize("seed", range(4))
def test_board_moves_are_the_engines_minus_symmetric_duplicates(seed: int) -> None:
    for game in random_positions(seed, 45):
        board = Board(game)
        mine = board.moves()
        assert len(set(mine)) == len(mine)
        legal = set(game.legal_moves())
        assert set(mine) <= legal, game.position()
        empties = [i for i, col in enumerate(game.tableau) if not col]
        for m in legal - set(mine):
            # Only moves whose result equals another move's up to column order are left out.
            assert m.dst in empties, (m, game.position())
            whole_column = m.src < MAX_COLUMNS and m.count == len(game.tableau[m.src])
            assert whole_column or (m.dst != empties[0] and Move(m.src, empties[0], m.count) in mine)


@pytest.mark.parametrize("seed", range(3))
def test_play_and_undo_match_the_engine(seed: int) -> None:
    for game in random_positions(100 + seed, 40):
        board = Board(game)
        before = board_state(board)
        for move in board.moves():
            rec = board.play(move)
            after = game.copy(history=False)
            after.push(move)
            assert_same(board, after)
            assert board.key() == Board(after).key()
            board.undo(rec)
            assert board_state(board) == before


def test_safe_moves_are_legal_engine_moves_and_undo_exactly() -> None:
    for game in random_positions(7, 60):
        board = Board(game)
        before = board_state(board)
        autos = board.play_safe()
        g = game.copy(history=False)
        for move, _ in autos:
            assert move.dst == FOUNDATION
            g.push(move)
        assert_same(board, g)
        for _, rec in reversed(autos):
            board.undo(rec)
        assert board_state(board) == before


def test_exposed_by_names_what_a_move_uncovers() -> None:
    assert exposed_by(Move.parse("cd")) == 2
    assert exposed_by(Move.parse("Wd")) == -1
    assert exposed_by(Move.parse("S")) == -1
    assert exposed_by(Move.parse("cF")) == -2


# ----------------------------------------------------------- the key
def test_key_ignores_column_order_and_foundation_order() -> None:
    rest = {"stock": parse_cards("Qh"), "waste": parse_cards("Jh")}
    tab1 = [parse_cards("KhQh"), parse_cards("Jh"), [], parse_cards("KhTh")]
    tab2 = [[], parse_cards("KhTh"), parse_cards("KhQh"), parse_cards("Jh")]
    g1 = _hearts_game(tab1, foundations=(13, 13, 10, 13, 13, 13, 9, 13), **rest)
    g2 = _hearts_game(tab2, foundations=(13, 13, 9, 13, 13, 13, 10, 13), **rest)
    assert Board(g1).key() == Board(g2).key()
    tab3 = [parse_cards("KhQh"), parse_cards("Jh"), [], parse_cards("ThKh")]
    g3 = _hearts_game(tab3, foundations=(13, 13, 10, 13, 13, 13, 9, 13), **rest)
    assert Board(g3).key() != Board(g1).key()


def _hearts_game(tableau, foundations, stock=(), waste=(), variant=FORTY_THIEVES, pass_number=1) -> Game:
    """A Forty Thieves position where only hearts are left out; the caller keeps the counts right."""
    cols = [list(c) for c in tableau] + [[] for _ in range(variant.columns - len(tableau))]
    game = Game(variant, cols, stock, waste, foundations, None, pass_number)
    from shared.position import check_position

    check_position(game)
    return game


# -------------------------------------------------------- safe moves
def test_a_card_is_safe_only_when_every_copy_of_the_rank_below_is_home() -> None:
    # Both 4h home (one foundation at 5h, one at 4h): the 5h on column a is safe at once.
    g = _hearts_game(
        [parse_cards("Kh6h5h"), parse_cards("7h8h9hThJhQhKh6h7h8h9hThJhQh")],
        foundations=(13, 13, 5, 13, 13, 13, 4, 13),
    )
    assert [m.text() for m, _ in Board(g).play_safe()] == ["aF", "aF"]
    # With one 4h still out, the 5h waits: the other 5h might need that foundation.
    g = _hearts_game(
        [parse_cards("Kh6h5h"), parse_cards("7h8h9hThJhQhKh6h7h8h9hThJhQh4h")],
        foundations=(13, 13, 5, 13, 13, 13, 3, 13),
    )
    assert [m.text() for m, _ in Board(g).play_safe()] == ["bF", "aF", "aF"]


def test_alternate_colour_safety_waits_for_the_cards_that_pack_on_it() -> None:
    # 5h is playable (both 4h home), but a black 4 (4s) is still out and could
    # be packed on it in Streets: the 5h must wait for the 4s; in Forty Thieves
    # (same suit) nothing but a 4h packs on a 5h, so it goes at once.
    found = (13, 13, 4, 3, 13, 13, 4, 13)  # suits by index % 4: clubs, diamonds, hearts, spades
    for key, first in (("streets", "bF"), ("forty-thieves", "aF")):
        variant = get_variant(key)
        tab = [parse_cards("5h"), parse_cards("4s")]
        rest = _missing(tab, found, variant)
        g = Game(variant, tab + [rest] + [[] for _ in range(variant.columns - 3)], (), (), found)
        autos = [m.text() for m, _ in Board(g).play_safe()]
        assert autos[0] == first and "aF" in autos, key


def _missing(tableau, foundations, variant) -> list[int]:
    from collections import Counter

    from shared.cards import full_packs

    left = Counter(full_packs(variant.packs))
    for i, r in enumerate(foundations):
        left.subtract((i % 4) * 13 + k for k in range(r))
    for col in tableau:
        left.subtract(col)
    return sorted(left.elements(), reverse=True)


# ---------------------------------------------------------- solving
def test_a_near_won_hand_made_position_is_won_and_the_line_replays() -> None:
    # Hearts only, scrambled over four columns, one empty column to work with.
    tab = [parse_cards("2hKh5h"), parse_cards("3hQh4h9h"), parse_cards("2h6h8hTh3hJh"),
           parse_cards("7hKh4h5h6h7h8h9hThJhQh")]
    g = _hearts_game(tab, foundations=(13, 13, 1, 13, 13, 13, 1, 13))
    result = solve(g, time_limit=None, node_limit=200_000)
    assert_wins(g, result)
    assert result.nodes >= 1 and result.stopped_by is None


def lost_position() -> Game:
    """Hearts and spades from the fives up, no empty column, four cards in the
    stock: some shuffling is possible but no line wins (found by search, 228
    positions)."""
    tab = [parse_cards(t) for t in ("QhKs5sTs", "6h5sKhTs", "9s8sJh", "9h9hKh", "JsQh8h", "5h5hQs",
                                    "6s9s8h", "7sKsQs", "6s7hTh", "6hJsJh")]
    return Game(FORTY_THIEVES, tab, parse_cards("7s7hTh8s"), (), (13, 13, 4, 4, 13, 13, 4, 4))


def test_a_blocked_small_position_is_proven_unwinnable() -> None:
    g = lost_position()
    result = solve(g, time_limit=None, node_limit=100_000)
    assert result.verdict is Verdict.UNWINNABLE
    assert result.stopped_by is None
    assert result.nodes == 1  # the dead-end test sees it at once (test_solver_deadlock checks that test)
    assert result.moves == []


def test_deal_two_of_forty_thieves_is_won_and_replays_as_a_record() -> None:
    result = solve_deal(FORTY_THIEVES, 2, time_limit=None, node_limit=100_000)
    assert result.verdict is Verdict.WON
    replayed = replay(GameRecord("forty-thieves", 2, tuple(result.move_texts())))
    assert replayed.ok and replayed.game.is_won()


def test_a_sixty_thieves_deal_is_won_and_replays_as_a_record() -> None:
    # Deal 47 falls in about a thousand positions with the current move ordering.
    result = solve_deal(SIXTY_THIEVES, 47, time_limit=None, node_limit=100_000)
    assert result.verdict is Verdict.WON
    replayed = replay(GameRecord("sixty-thieves", 47, tuple(result.move_texts())))
    assert replayed.ok and replayed.game.is_won()


@pytest.mark.parametrize("key", sorted(VARIANTS))
def test_every_variant_solves_a_late_position_of_a_real_deal(key: str) -> None:
    """A position with most cards home: group moves, alternate colours, redeals
    and aces-first all go through the same search and must replay through the engine."""
    variant = VARIANTS[key]
    rng = random.Random(key)
    game = _late_position(variant, rng)
    result = solve(game, time_limit=None, node_limit=50_000)
    assert_wins(game, result)


def _late_position(variant, rng: random.Random) -> Game:
    """Everything home but a few cards of each suit, dealt out at random."""
    foundations = [rng.choice((9, 10, 11)) for _ in range(variant.foundations)]
    game = Game(variant, [[] for _ in range(variant.columns)], (), (), foundations)
    rest = _missing([], foundations, variant)
    rng.shuffle(rest)
    stock_n = len(rest) // 3
    stock, cols = rest[:stock_n], rest[stock_n:]
    tab = [[] for _ in range(variant.columns)]
    for i, c in enumerate(cols):
        tab[i % (variant.columns - 1)].append(c)
    return Game(variant, tab, stock, (), foundations)


def test_budgets_make_the_answer_unknown_never_unwinnable() -> None:
    result = solve_deal(FORTY_THIEVES, 1, time_limit=None, node_limit=3000)
    assert result.verdict is Verdict.UNKNOWN and result.stopped_by == "nodes"
    assert result.moves == []
    ticks = count()
    result = solve_deal(FORTY_THIEVES, 1, time_limit=5.0, clock=lambda: float(next(ticks)))
    assert result.verdict is Verdict.UNKNOWN and result.stopped_by == "time"


def test_progress_is_reported_while_searching() -> None:
    seen = []
    solve_deal(FORTY_THIEVES, 1, time_limit=None, node_limit=12_000, progress=seen.append, progress_every=2048)
    assert seen and all(p.total == 104 for p in seen)
    assert [p.nodes for p in seen] == sorted(p.nodes for p in seen)


def test_solve_leaves_the_game_untouched() -> None:
    game = Game.new(FORTY_THIEVES, 2)
    before = game.position()
    solve(game, time_limit=None, node_limit=1000)
    assert game.position() == before and game.move_count == 0


def test_a_won_game_is_won_at_once() -> None:
    g = Game(FORTY_THIEVES, [[] for _ in range(10)], (), (), [13] * 8)
    result = solve(g)
    assert result.verdict is Verdict.WON and result.moves == []


def test_face_down_cards_are_refused_with_a_clear_error() -> None:
    game = Game.new(FORTY_THIEVES, 3)
    game.hidden[0] = 1
    with pytest.raises(UnsupportedPosition):
        solve(game)


# ------------------------------------------- against a plain search
def plain_search(game: Game, limit: int) -> bool | None:
    """Won or not by exhaustive search over the engine's own legal moves, with no
    cut but column order (written apart from the solver); None past ``limit``."""

    def key(g: Game) -> tuple:
        founds = tuple(tuple(sorted(g.foundations[s::4])) for s in range(4))
        return (tuple(sorted(map(tuple, g.tableau))), tuple(g.waste), tuple(g.stock), g.pass_number, founds)

    seen = {key(game)}
    stack = [game.copy(history=False)]
    while stack:
        g = stack.pop()
        if g.is_won():
            return True
        for move in g.legal_moves():
            h = g.copy(history=False)
            h.push(move)
            k = key(h)
            if k not in seen:
                if len(seen) >= limit:
                    return None
                seen.add(k)
                stack.append(h)
    return False


def two_suit_position(seed: int) -> Game:
    """Two suits from a random rank up, every column in use, a few stock cards."""
    rng = random.Random(seed)
    variant = get_variant(("forty-thieves", "streets", "josephine")[seed % 3])
    low = rng.choice((5, 6, 7))
    suits = rng.sample(range(4), 2)
    cards = [s * 13 + r for s in suits for r in range(low, 13)] * variant.packs
    rng.shuffle(cards)
    n_stock = rng.randrange(0, 4)
    cols: list[list[int]] = [[] for _ in range(variant.columns)]
    for i, c in enumerate(cards[n_stock:]):
        cols[i % variant.columns].append(c)
    found = [13 if f % 4 not in suits else low for f in range(variant.foundations)]
    return Game(variant, cols, cards[:n_stock], (), found)


def test_verdicts_agree_with_a_plain_search_of_the_engine() -> None:
    """Safe moves, the key and every cut must leave the verdict unchanged: wins
    and proven losses alike (seeds 25, 28 and 31 are lost)."""
    verdicts = []
    for seed in range(20, 32):
        game = two_suit_position(seed)
        truth = plain_search(game, 20_000)
        assert truth is not None, seed
        result = solve(game, time_limit=None, node_limit=1_000_000)
        assert result.verdict is (Verdict.WON if truth else Verdict.UNWINNABLE), (seed, game.variant.key)
        if truth:
            assert_wins(game, result)
        verdicts.append(truth)
    assert verdicts.count(False) == 3 and verdicts.count(True) == 9


@pytest.mark.parametrize("strategy", ["depth-first", "best-first", "portfolio"])
def test_every_strategy_wins_and_proves(strategy: str) -> None:
    game = Game.new(FORTY_THIEVES, 2)
    won = solve(game, time_limit=None, node_limit=200_000, strategy=strategy)
    assert_wins(game, won)
    lost = solve(lost_position(), time_limit=None, node_limit=200_000, strategy=strategy)
    assert lost.verdict is Verdict.UNWINNABLE and lost.stopped_by is None


def test_the_portfolio_spends_the_whole_budget_across_its_searches() -> None:
    result = solve_deal(FORTY_THIEVES, 1, time_limit=None, node_limit=40_000)
    assert result.verdict is Verdict.UNKNOWN and result.stopped_by == "nodes"
    # Each part stops within one check interval (1,024 nodes, plus a node's children) of its share.
    assert 40_000 <= result.nodes < 40_000 + len(PORTFOLIO) * 1_200


def test_best_first_reaches_a_win_depth_first_misses_in_the_same_budget() -> None:
    # Sixty Thieves deal 21 (measured): best first wins it in about 7,000 positions.
    game = Game.new(SIXTY_THIEVES, 21)
    assert solve(game, time_limit=None, node_limit=30_000, strategy="depth-first").verdict is Verdict.UNKNOWN
    assert_wins(game, solve(game, time_limit=None, node_limit=30_000, strategy="best-first"))


def test_an_unknown_strategy_is_refused() -> None:
    with pytest.raises(ValueError):
        solve(Game.new(FORTY_THIEVES, 1), node_limit=10, strategy="sideways")  # type: ignore[arg-type]


def test_a_waste_cap_makes_the_search_unknown_never_unwinnable() -> None:
    from shared.solver.search import _depth_first

    game = Game.new(FORTY_THIEVES, 2)
    capped = _depth_first(game, None, -1, None, 1, lambda: 0.0, max_waste=0)
    assert capped.verdict is Verdict.UNKNOWN and capped.stopped_by == "cap"
    assert_wins(game, _depth_first(game, None, 200_000, None, 1, lambda: 0.0, max_waste=32))


def test_searches_whose_share_is_used_up_are_skipped_so_the_last_gets_the_rest() -> None:
    # Each search runs at least one check interval (1,024 nodes): with a small budget the
    # early ones overrun their shares, and the complete depth first at the end must still
    # get what is left instead of a token node.
    from shared.solver import search

    runs: list[tuple[str, int]] = []
    depth_first, best_first = search._depth_first, search._best_first

    def df(*args, **kw):
        result = depth_first(*args, **kw)
        runs.append(("capped" if kw.get("max_waste") is not None else "complete", result.nodes))
        return result

    def bf(*args, **kw):
        result = best_first(*args, **kw)
        runs.append(("best-first", result.nodes))
        return result

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(search, "_depth_first", df)
        mp.setattr(search, "_best_first", bf)
        result = solve_deal(FORTY_THIEVES, 1, time_limit=None, node_limit=12_000)
    assert result.stopped_by == "nodes" and 12_000 <= result.nodes < 12_000 + 1_200
    assert len(runs) < len(PORTFOLIO)  # some were skipped
    assert runs[-1][0] == "complete" and runs[-1][1] >= 4_000


def test_each_portfolio_spends_its_whole_budget_and_ends_complete() -> None:
    from shared.solver.search import LARGE_STOCK_PORTFOLIO, portfolio_for

    for phases in (PORTFOLIO, LARGE_STOCK_PORTFOLIO):
        assert abs(sum(p.share for p in phases) - 1.0) < 1e-9
        # The last search is complete (no cap), so the portfolio can still prove a loss.
        assert phases[-1].strategy == "depth-first" and phases[-1].waste_cap is None
    assert portfolio_for(FORTY_THIEVES) is PORTFOLIO
    assert portfolio_for(SIXTY_THIEVES) is LARGE_STOCK_PORTFOLIO  # a 96-card stock: lower caps too
    low = min(p.waste_cap for p in LARGE_STOCK_PORTFOLIO if p.waste_cap is not None)
    assert low < min(p.waste_cap for p in PORTFOLIO if p.waste_cap is not None)
