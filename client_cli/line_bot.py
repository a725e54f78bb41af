"""A bot that plays like a person who knows the way: it follows a winning line, at a human pace,
and now and then slips (plays another move, notices, takes it back), so that bots on one deal
finish at different times and a demo looks like a race.

Which line? A race's deal is secret, but a deal from the public pool shipped with the package
(``shared/data``) is recognised by its 40 face-up starting cards (docs: "Checked deals": why races
never draw from that pool), and the pool keeps each deal's winning line. The demo event's organiser
names such deals, so its bots find their lines; on a secret deal :func:`line_for` finds none and the
caller plays some other way (``thieves bot``'s greedy player).

:class:`HumanLine` is pure (no I/O): it says what to do next and how long to think first.
"""

from __future__ import annotations

import asyncio
import functools
import random
import time
from dataclasses import dataclass
from typing import Callable

import websockets

from shared import protocol as p
from shared.engine import Game
from shared.moves import DRAW, Move
from shared.pool import load_pool
from shared.variants import get_variant


class BotError(Exception):
    """The bot cannot play this race (refused, or no line to follow)."""


@functools.cache
def _index(variant: str) -> dict[tuple[tuple[str, ...], ...], tuple[int, tuple[str, ...]]]:
    """The public pool of ``variant`` by starting tableau: deal number and winning line."""
    pool = load_pool(variant)
    out = {}
    for deal in pool.deals:
        view = p.View.of_game(Game.new(get_variant(variant), deal))
        out[tuple(tuple(col) for col in view.tableau)] = (deal, tuple(pool.lines[deal]))
    return out


def line_for(view: p.View) -> tuple[int, tuple[str, ...]] | None:
    """The deal and winning line of a starting board that is a public pool deal (None otherwise)."""
    try:
        return _index(get_variant(view.variant).key).get(tuple(tuple(col) for col in view.tableau))
    except (KeyError, ValueError, FileNotFoundError):
        return None


@dataclass(frozen=True)
class Skill:
    """How a bot plays: seconds per move on average, and how often it slips."""

    pace: float = 0.5
    slips: float = 0.03


class HumanLine:
    """The next move of a player following ``line`` on ``deal``, with its thinking time."""

    def __init__(self, variant: str, deal: int, line: tuple[str, ...], skill: Skill, undo: bool,
                 rng: random.Random | None = None) -> None:
        self.game = Game.new(get_variant(variant), deal)
        self.line = list(line)
        self.at = 0
        self.skill = skill
        self.undo = undo
        self.rng = rng or random.Random()
        self._slipped = False

    @property
    def done(self) -> bool:
        return self.at >= len(self.line) and not self._slipped

    def next(self) -> tuple[float, str]:
        """``(seconds to think, move text)``; call :meth:`played` once the server acknowledged it."""
        think = self.skill.pace * self.rng.lognormvariate(0.0, 0.5)
        if self._slipped:
            return think * 2, p.UNDO  # noticed: take it back
        if self.undo and self.rng.random() < self.skill.slips:
            wrong = self._slip()
            if wrong is not None:
                return think, wrong
        return think, self.line[self.at]

    def _slip(self) -> str | None:
        """A legal move off the line that can be taken back (never a draw)."""
        right = Move.parse(self.line[self.at])
        others = [m for m in self.game.legal_moves() if m != DRAW and m != right]
        return self.rng.choice(others).text() if others else None

    def played(self, text: str) -> None:
        """The server took ``text``: follow it on the mirror game."""
        if text == p.UNDO:
            self.game.pop()
            self._slipped = False
            return
        self.game.push(Move.parse(text))
        if self.at < len(self.line) and text == self.line[self.at]:
            self.at += 1
        else:
            self._slipped = True


async def play_heat(ws_url: str, code: str, key: str, skill: Skill, quits_at: float = 1.0,
                    rng: random.Random | None = None, on_ack: Callable[[p.Ack], None] | None = None,
                    on_answer: Callable[[float], None] | None = None) -> None:
    """One entrant's race: join the heat with the account's key, follow the deal's line like a
    person (``quits_at``: the share of the line after which it gives up), then leave. ``on_answer``
    hears the seconds from sending each move to reading its answer (``ack`` or ``reject``)."""
    async with websockets.connect(ws_url) as ws:
        await ws.send(p.encode(p.Hello(protocol=p.PROTOCOL_VERSION, race=code, key=key)))
        view = None
        undo = True
        while view is None:
            msg = p.decode_server(await ws.recv())
            if isinstance(msg, p.Welcome):
                undo = msg.race.undo
            if isinstance(msg, p.Countdown) and msg.view is not None:
                view = msg.view
                await asyncio.sleep(max(0.0, (msg.starts_at - msg.server_time) / 1000))
            elif isinstance(msg, p.Error):
                raise BotError(f"{msg.code}: {msg.message}")
        found = line_for(view)
        if found is None:
            raise BotError("the deal is not a public pool deal: no line to follow")
        deal, line = found
        player = HumanLine(view.variant, deal, line, skill, undo, rng)
        seq = 0
        while not player.done:
            if player.at >= quits_at * len(line):
                await ws.send(p.encode(p.GiveUp()))
                return
            think, move = player.next()
            await asyncio.sleep(think)
            seq += 1
            sent = time.monotonic()
            await ws.send(p.encode(p.Move(seq=seq, move=move)))
            while True:
                msg = p.decode_server(await ws.recv())
                if isinstance(msg, (p.Ack, p.Reject)) and msg.seq == seq:
                    break
                if isinstance(msg, p.Finished):
                    return  # the clock ran out
            if on_answer is not None:
                on_answer(time.monotonic() - sent)
            if isinstance(msg, p.Ack) and on_ack is not None:
                on_ack(msg)
            if isinstance(msg, p.Reject):
                raise BotError(f"a line move was refused: {msg.reason} ({msg.message})")
            player.played(move)
