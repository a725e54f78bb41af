"""One finished race's fair-play analysis: each game's use of the stock and its foresight.

:func:`analyse_race` takes the race's stored results (the whole of them: deal, games, the stored winning
line) and answers the encoded list of ``FairPlayGame``; it is pure and runs in a solver worker (bytes in,
bytes out: nothing to pickle but them), after the race, never on the move path.
"""

from __future__ import annotations

import zlib

import msgspec

from shared import protocol as p
from shared.pool import load_pool

from .foresight import Budget, analyse
from .scouting import stock_use

_games = msgspec.msgpack.Encoder()
_decode_games = msgspec.msgpack.Decoder(list[p.FairPlayGame])


def decode_games(blob: bytes) -> list[p.FairPlayGame]:
    return _decode_games.decode(blob)


def analyse_race(results: bytes, budget: Budget = Budget()) -> bytes:
    """The analysis of every game of a finished race (``results``: its stored ``Results``)."""
    res = msgspec.msgpack.decode(results, type=p.Results)
    standing = {s.seat: s for s in res.standings}
    line = list(res.winning_line or [])
    public = res.deal in load_pool(res.variant).lines
    out = []
    for record in res.records:
        s = standing.get(record.seat)
        if s is None:
            continue
        use = stock_use(res.variant, res.deal, record.moves)
        sight = analyse(res.variant, res.deal, record.moves, line, zlib.crc32(f"{res.race}:{record.seat}".encode()),
                        budget)
        end = s.finished_at if s.status in ("finished", "gave_up") else None
        out.append(p.FairPlayGame(
            race=res.race, seat=record.seat, account=s.account, name=s.name, status=s.status, home=s.home,
            moves=record.moves, stock_seen=use.seen, stock_size=use.size, plays_while_drawing=use.plays_while_drawing,
            elapsed_ms=end - res.starts_at if end is not None and res.starts_at else None,
            decisions=sight.decisions, deviations=sight.deviations, foresight=sight.foresight, costly=sight.costly,
            stored_line_share=sight.stored_line_share, undos=sight.undos,
            settled=sight.settled, cpu_seconds=sight.cpu_seconds,
            complete=sight.complete, public_deal=public))
    return _games.encode(out)
