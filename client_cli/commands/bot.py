"""``thieves bot RACE``: a player that races through the protocol by itself.

For demos, load tests and empty seats. It joins like any client (the same
:class:`~client_cli.connection.RaceLink`, so it reconnects the same way),
says it is ready, optionally starts the race once enough racers are ready,
and then plays at a chosen pace.

It sees only its player view (the stock order is the server's secret), so
it cannot run the full solver; it plays greedily with the solver's move
ordering (foundations, then moves that uncover cards, waste plays, draws,
and last moves that only shuffle), never returning to a position it has
been in. When nothing new is left it gives up, which ends its game.

In a race created with hints it may instead ask the server, whose solver
does see the stock (``--hints stuck``: once greedy play has nothing new;
``--hints always``: from the first move), and follow the hints as a player
would; the server then marks it as played with help (†), which is honest.
That is what makes ``make demo`` a real race on a checked deal.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from client_cli.commands.netargs import add_server_option, refused, server_of
from shared import protocol as p
from shared.engine import Game
from shared.moves import DRAW, Move
from shared.solver.board import Board
from shared.standings import status_words
from shared.variants import get_variant
from shared.view import PlayerView

if TYPE_CHECKING:
    from client_cli.connection import RaceLink
    from client_cli.race_state import RaceState


class GreedyPolicy:
    """Choose moves from a view: best-ordered first, never back to a seen position.

    Pure (no I/O): the bot feeds it each new view. The stock's cards are
    unknown, so the board is built with placeholder stock cards: only the
    stock's *size* matters to the key and to whether drawing is possible.
    """

    def __init__(self, wander: float = 0.0, rng: random.Random | None = None) -> None:
        """``wander``: the chance of passing over the best new move for the next one,
        so that bots in one race do not all play the same game."""
        self.seen: set[bytes] = set()
        self.wander = wander
        self.rng = rng or random.Random()

    def choose(self, view: PlayerView) -> Move | None:
        """The next move, or ``None`` when only positions already visited remain."""
        board = Board(_game_of(view))
        self.seen.add(board.key())
        passed: Move | None = None
        for move in board.moves():
            if move == DRAW:
                fresh = True  # drawing always reaches a new position
            else:
                rec = board.play(move)
                autos = board.play_safe()
                fresh = board.key() not in self.seen
                for _, r in reversed(autos):
                    board.undo(r)
                board.undo(rec)
            if fresh:
                if passed is None and self.wander and self.rng.random() < self.wander:
                    passed = move
                    continue
                return move
        return passed


def _game_of(view: PlayerView) -> Game:
    """The view as a Game with ``stock_count`` placeholder cards (never drawn here)."""
    if any(c is None for col in view.tableau for c in col):
        raise ValueError("the bot cannot play face-down cards")
    tableau = [list(col) for col in view.tableau]
    return Game(
        get_variant(view.variant), tableau, [0] * view.stock_count, view.waste, view.foundations, None,
        view.pass_number,
    )


HINT_MODES = ("never", "stuck", "always")
DEFAULT_NAME = "bot"
"""A bot's name without an account or --name."""

HINT_WAIT = 15.0
"""Seconds to wait for a hint before asking again (the server's solver budget is well under it)."""


def register(sub: argparse._SubParsersAction) -> None:
    cmd = sub.add_parser(
        "bot",
        help="play a race automatically (demos, load tests, empty seats)",
        description="Join RACE as a player and play it greedily at --pace seconds per move. With "
        "--creator-token it also starts the race once --start-when racers are ready (a creator token that "
        "`thieves create` kept on this machine is not used: a bot starts a race only when told to). Prints one line "
        "per event; exit 0 when the race finished, 1 when it could not be joined. It plays as the account "
        "kept for the server (`thieves register NAME`) unless --name is given (then anonymously); its seat "
        "is saved like `thieves play`'s, so a restarted bot takes the same seat back.",
    )
    cmd.add_argument("race", metavar="RACE_OR_CODE", help="race id or join code")
    cmd.add_argument("--name", "-n", default=None,
                     help="play anonymously under this name (default: the account kept for the server, else 'bot')")
    cmd.add_argument("--pace", type=float, default=1.0, metavar="S", help="seconds between moves (default 1)")
    cmd.add_argument("--creator-token", default=None, help="start the race (needs the creator's token)")
    cmd.add_argument("--start-when", type=int, default=None, metavar="N",
                     help="with --creator-token: start once N racers are ready (default: every seat, filled and ready)")
    cmd.add_argument(
        "--wander", type=float, default=0.0, metavar="P",
        help="chance (0-1) of playing the second-best new move instead of the best (default 0)",
    )
    cmd.add_argument(
        "--hints", choices=HINT_MODES, default="never",
        help="in races with hints: ask the server's solver once greedy play is stuck (stuck) or for every move "
        "(always); the bot is then marked as played with help. Default never",
    )
    cmd.add_argument(
        "--line", choices=("auto", "never"), default="auto",
        help="auto (default): on a deal of the public checked pool (an organiser's named deal), recognised by "
        "its face-up cards, follow its winning line like a person: about --pace s a move, now and then a slip "
        "taken back (--slips); never: always play greedily",
    )
    cmd.add_argument("--slips", type=float, default=0.03, metavar="P",
                     help="with a line: chance (0-1) of a wrong move per move, noticed and undone (default 0.03)")
    cmd.add_argument("--quiet", "-q", action="store_true", help="print only the final standings")
    add_server_option(cmd)
    cmd.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.pace < 0 or (args.start_when is not None and args.start_when < 1) or not 0 <= args.wander <= 1 or not 0 <= args.slips <= 1:
        print("thieves bot: --pace must be >= 0, --start-when >= 1, --wander and --slips in 0..1", file=sys.stderr)
        return 2
    if refused("bot", *([(p.Hello, "name", args.name, "--name")] if args.name is not None else []),
               (p.Hello, "race", args.race, "RACE_OR_CODE")):
        return 2
    from client_cli.identity import IdentityProblem, SeatKeeper, resolve
    from client_cli.local_store import LocalStore, StoreError

    server = server_of(args)
    store = LocalStore()
    try:
        name = args.name if args.name is not None or store.account(server) is not None else DEFAULT_NAME
        joining = resolve(store, server, args.race, name, args.name is not None, args.creator_token,
                          take_kept=False)
    except (IdentityProblem, StoreError) as exc:
        print(f"thieves bot: {exc}", file=sys.stderr)
        return 2 if isinstance(exc, IdentityProblem) else 1
    keeper = SeatKeeper(store, server, joining)
    label = joining.name or DEFAULT_NAME
    say = (lambda text: None) if args.quiet else (lambda text: print(f"[{label}] {text}", flush=True))
    outcome = asyncio.run(
        play_race(
            server, args.race, joining.name or DEFAULT_NAME, args.pace, args.creator_token, args.start_when, say,
            args.wander, args.hints, key=joining.key, token=joining.token, on_welcome=keeper,
            line=args.line == "auto", slips=args.slips,
        )
    )
    if keeper.problem:
        print(f"thieves bot: {keeper.problem}", file=sys.stderr)
    return outcome.status


async def ask_hint(link: "RaceLink", state: "RaceState", changed: asyncio.Event) -> p.HintAnswer | None:
    """Ask the server for a hint and wait for the answer for the current position.

    ``None`` when the request was refused (an ``error``, e.g. too soon after
    the last one), could not be sent (offline) or took longer than :data:`HINT_WAIT`.
    """
    from client_cli.race_state import Phase

    state.hint = None
    state.last_error = None
    if not link.post(p.HintRequest()):
        return None
    loop = asyncio.get_running_loop()
    deadline = loop.time() + HINT_WAIT
    while loop.time() < deadline and state.phase() is Phase.RUNNING:
        if state.hint is not None:
            return state.hint
        if state.last_error is not None:
            return None
        changed.clear()
        try:
            await asyncio.wait_for(changed.wait(), timeout=0.25)
        except asyncio.TimeoutError:
            pass
    return None


@dataclass(frozen=True)
class BotOutcome:
    """How a bot's race went: exit status, the race's results (when it finished), moves sent."""

    status: int
    results: p.Results | None
    moves: int


async def play_race(
    server: str,
    race: str,
    name: str,
    pace: float,
    creator_token: str | None = None,
    start_when: int | None = None,
    say: Callable[[str], None] = print,
    wander: float = 0.0,
    hints: str = "never",
    *,
    key: str | None = None,
    token: str | None = None,
    on_welcome: "Callable[[p.Welcome], None] | None" = None,
    line: bool = False,
    slips: float = 0.03,
) -> BotOutcome:
    """Join, ready, (start,) play until the race is over; ``hints`` is one of :data:`HINT_MODES`.

    With ``creator_token`` it starts the race once ``start_when`` racers are ready (None: every seat).

    ``key`` joins as an account, ``token`` takes a saved seat back, ``on_welcome`` keeps each token.
    ``line``: on a public pool deal, follow its winning line like a person (client_cli/line_bot.py).
    """
    from client_cli.line_bot import HumanLine, Skill, line_for
    from client_cli.connection import LinkState, LinkStatus, RaceLink
    from client_cli.race_state import Phase, RaceState

    state = RaceState(race, role="player", name=name, creator_token=creator_token, key=key, token=token,
                      saved_token=token is not None)
    changed = asyncio.Event()

    def status_changed(status: LinkStatus) -> None:
        """Say why a drop happened and when the next try is (a first failure ends in ``state.fatal``)."""
        if status.state is LinkState.RECONNECTING and status.retry_in is not None:
            say(f"offline ({status.detail}): retry {status.attempt} in {status.retry_in:.1f}s")
        changed.set()

    link = RaceLink(server, state, on_update=lambda _kind: changed.set(), on_status=status_changed,
                    on_welcome=on_welcome)
    loop_task = asyncio.create_task(link.run())
    policy = GreedyPolicy(wander)
    human: HumanLine | None = None
    looked_for_line = not line
    sent: str | None = None
    started = gave_up = False
    following = hints == "always"
    moves = 0
    try:
        while not loop_task.done():
            try:
                await asyncio.wait_for(changed.wait(), timeout=0.25)
            except asyncio.TimeoutError:
                pass
            changed.clear()
            phase = state.phase()
            if phase is Phase.FINISHED:
                break
            if phase is Phase.LOBBY and link.online:
                if not state.ready:
                    link.set_ready(True)
                    say(f"seat {state.seat}: ready")
                ready = sum(1 for pp in state.players.values() if pp.status == "ready")
                need = start_when if start_when is not None else state.info.seats if state.info else 0
                if creator_token and not started and need and ready >= need:
                    started = link.start_race()
                    if started:
                        say(f"starting the race with {ready} ready")
                continue
            if gave_up or state.pending or state.can_move() is not None or state.view is None:
                continue
            if human is not None and sent is not None:
                human.played(sent)  # the server took it (the ack cleared the pending move)
                sent = None
            if not looked_for_line:
                looked_for_line = True
                found = line_for(p.View.from_player_view(state.view)) if state.view.move_count == 0 else None
                if found is not None and state.info is not None:
                    human = HumanLine(state.info.variant, found[0], found[1], Skill(pace=pace, slips=slips),
                                      state.info.undo)
                    say(f"a deal of the public pool: following its winning line of {len(found[1])} moves")
            if human is not None and not human.done:
                think, text = human.next()
                await asyncio.sleep(think)
                link.send_move(text)
                sent = text
                moves += 1
                changed.set()
                continue
            move = None if following else policy.choose(state.view)
            if move is None and hints != "never" and state.info is not None and state.info.hints:
                if not following:
                    say(f"stuck after {moves} moves, {state.view.cards_home} home: following the server's hints (†)")
                following = True
                answer = await ask_hint(link, state, changed)
                if answer is None:
                    await asyncio.sleep(0.5)  # refused (too soon) or slow: ask again
                    continue
                if answer.move is not None and answer.verdict != "unwinnable":
                    move = Move.parse(answer.move)
            if move is None:
                gave_up = link.give_up()
                say(f"nothing new to try after {moves} moves, {state.view.cards_home} home: giving up")
                continue
            link.send_move(move.text())
            moves += 1
            if pace:
                await asyncio.sleep(pace)
            changed.set()
    finally:
        link.close()
        try:
            await asyncio.wait_for(loop_task, timeout=5)
        except (asyncio.TimeoutError, Exception):  # noqa: BLE001 - closing anyway
            loop_task.cancel()
    if state.fatal:
        print(f"thieves bot: {state.fatal}", file=sys.stderr)
        return BotOutcome(1, None, moves)
    if state.results is not None:
        for s in state.results.standings:
            say(f"{s.rank}. {s.name} {s.home}/{s.total} in {s.moves} moves ({status_words(s.status, final=True)})")
        return BotOutcome(0, state.results, moves)
    return BotOutcome(1, None, moves)
