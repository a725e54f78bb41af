"""Race rules that are not Redis: new races, secret deals, games, results.

Pure functions over the store's types, so the shapes of a race (its id,
join code, commitment, standings, revealed records) are decided in one
place and tested without sockets.
"""

from __future__ import annotations

import secrets

import msgspec
from typing import Literal
from functools import lru_cache

from shared import protocol as p
from shared.deals import Deal, commitment, deal as make_deal
from shared.engine import Game, Status
from shared.moves import Move
from shared.record import GameRecord, replay
from shared.standings import final_status, ranked, shown_status
from shared.variants import UnknownVariant, Variant, get_variant

from ..deals.checked import CheckedDeal
from ..store import Event, Line, PlayerState, RaceMeta

_ID_ALPHABET = "abcdefghijkmnpqrstuvwxyz23456789"
_CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 6


class CreateError(p.CodedError, ValueError):
    """A race that cannot be created as asked; ``code`` says why."""


class CreateLimited(CreateError):
    """A creation refused by a limit (rate, lobbies); ``retry_after`` seconds until it may succeed."""

    retry_after: int

    def __init__(self, code: p.ErrorCode, message: str, retry_after: int) -> None:
        super().__init__(code, message, retry_after=retry_after)


def new_id() -> str:
    return "".join(secrets.choice(_ID_ALPHABET) for _ in range(12))


def new_code() -> str:
    """A short code to read out or type: no 0/O or 1/I/l to confuse."""
    return "".join(secrets.choice(_CODE_ALPHABET) for _ in range(CODE_LENGTH))


def check_request(req: p.Create) -> Variant:
    """The request's variant, once its deal fields fit together; raises :class:`CreateError`.

    Checked before a pool deal is taken, so a bad request never uses one up.
    """
    try:
        variant = get_variant(req.variant)
    except UnknownVariant as exc:
        raise CreateError(p.ErrorCode.BAD_VARIANT, str(exc)) from None
    if req.deal_source in ("random", "pool") and req.deal is not None:
        raise CreateError(p.ErrorCode.BAD_DEAL, f"deal_source {req.deal_source!r} takes no deal number")
    if req.deal_source == "number" and req.deal is None:
        raise CreateError(p.ErrorCode.BAD_DEAL, "deal_source 'number' needs a deal number")
    if req.rated and req.seats < 2:
        raise CreateError(p.ErrorCode.BAD_FIELD, "a rated race needs at least 2 seats")
    return variant


def new_race(req: p.Create, now_ms: int, checked: CheckedDeal | None = None, race_id: str | None = None) -> RaceMeta:
    """A lobby race for a create request; raises :class:`CreateError`.

    A ``"pool"`` race takes its secret deal and winning line from ``checked``
    (the caller drew it from the private pool); the others get a secret
    random number (``checked``'s when the server drew it) or the number asked for. ``race_id``: the id the
    creation limits reserved (default: a new one).
    """
    variant = check_request(req)
    line = ""
    if req.deal_source == "pool":
        if checked is None or checked.variant != variant.key:
            raise CreateError(p.ErrorCode.NO_POOL, f"no checked deal of {variant.key} was given")
        number, line = checked.deal, " ".join(checked.line)
    elif req.deal_source == "random":  # drawn here, or already by the server making the race (``checked``)
        number = checked.deal if checked is not None else secrets.randbelow(p.MAX_WIRE_DEAL) + 1
    else:
        assert req.deal is not None
        number = req.deal
    salt = secrets.token_hex(16)
    return RaceMeta(
        id=race_id or new_id(), code=new_code(), variant=variant.key, deal_source=req.deal_source, deal=number,
        salt=salt, commitment=commitment(variant.key, number, salt), seats=req.seats, players=0,
        time_limit=req.time_limit, undo=req.undo, start_mode=req.start_mode, status="lobby",
        created_at=now_ms, starts_at=0, ends_at=0, ended_at=0, version=0, done=0,
        checked=req.deal_source == "pool", hints=req.hints, line=line, rated=req.rated,
    )


def revealed(meta: RaceMeta, now_ms: int) -> bool:
    """May anything derived from this race's deal (its number, salt, moves, boards, replays, winning
    line) be shown now, the race being over? Once its reveal time has come: at once for an ordinary
    race; a daily deal's play at the end of its day; a sealed race (an event's) once its maker unsealed
    it. The one rule every reader goes through (results, replays, ``finished`` frames, pages), asked
    with the race's results in hand: a race has none before its end, so nothing of its deal goes out
    while it runs whatever this says."""
    return now_ms >= meta.reveal_at


def shown_results(meta: RaceMeta, blob: bytes, now_ms: int) -> p.Results:
    """A finished race's results as they may be shown now (:func:`revealed`): whole, or the standings
    alone, without the deal, the salt, the games and the winning line, saying when they will be shown."""
    results = msgspec.msgpack.decode(blob, type=p.Results)
    if revealed(meta, now_ms):
        return results
    return msgspec.structs.replace(results, deal=0, salt="", records=[], winning_line=None, revealed=False,
                                   reveal_at=None if meta.sealed else meta.reveal_at)


def race_info(meta: RaceMeta, now_ms: int) -> p.RaceInfo:
    return p.RaceInfo(
        id=meta.id, code=meta.code, variant=meta.variant, deal_source=meta.deal_source, seats=meta.seats,
        players=meta.taken, time_limit=meta.time_limit, undo=meta.undo, start_mode=meta.start_mode,
        status=meta.phase(now_ms), commitment=meta.commitment, created_at=meta.created_at,
        starts_at=meta.starts_at or None, ends_at=meta.ends_at or None, version=meta.version,
        checked=meta.checked, hints=meta.hints, rules=_rules(meta.variant), rated=meta.rated,
        title=meta.title or None, scheduled_at=meta.scheduled_at or None,
    )


@lru_cache(maxsize=64)
def _rules(variant: str) -> p.Rules:
    return p.Rules.of(get_variant(variant))


@lru_cache(maxsize=256)
def race_deal(variant: str, number: int) -> Deal:
    """Deals are cached: every player of a race starts from the same one."""
    return make_deal(get_variant(variant), number)


def new_game(meta: RaceMeta) -> Game:
    return Game.from_deal(race_deal(meta.variant, meta.deal))


def load_game(meta: RaceMeta, moves: list[str]) -> Game:
    """Rebuild a player's game from the stored log (``U`` takes one back)."""
    game = new_game(meta)
    for text in moves:
        if text == p.UNDO:
            game.pop()
        else:
            game.push(Move.parse(text))
    return game


MadeLines = dict[int, tuple[Line, int, bool, p.PlayerProgress]]
"""Progress lines made before, by seat, each with the stored line, rank and phase (started) it was made of."""


def progress_lines(lines: list[Line], started: bool, total: int,
                   made: MadeLines | None = None) -> list[p.PlayerProgress]:
    """The progress table in seat order, each line with its current rank.

    ``made`` (a race's, kept by its caller; ``total`` is the race's): a stored line that is the very object a
    progress line was made of, at the same rank and phase, gives that progress line again (the dict is
    updated). Why: a race's hub makes its table up to ``progress_hz`` times a second, and between two tables
    a move has replaced one line or two, the others being the same objects (server/race/table.py)."""
    out = []
    for rank, line in ranked(lines):
        if made is not None:
            before = made.get(line.seat)
            if before is not None and before[0] is line and before[1] == rank and before[2] == started:
                out.append(before[3])
                continue
        entry = p.PlayerProgress(
            seat=line.seat, name=line.name, home=line.home, total=total, moves=line.moves,
            status=shown_status(line.status, started, line.online),
            rank=rank, finished_at=line.finished_at or None, home_at=line.home_at or None,
            helped=bool(line.helped),
        )
        if made is not None:
            made[line.seat] = (line, rank, started, entry)
        out.append(entry)
    out.sort(key=lambda e: e.seat)
    return out


def table_before(lines: list[Line], missed: list[Event], started: bool, total: int) -> list[p.PlayerProgress]:
    """The progress table as a client saw it before the ``missed`` events.

    Each event carries the line of its seat that it overwrote, so the first
    missed event of a seat gives that seat's old line (or shows the seat did
    not exist yet); a missed start means the table was still a lobby's.
    Comparing this with the table now tells exactly which lines to resend.
    """
    old = {line.seat: line for line in lines}
    touched: set[int] = set()
    for event in missed:
        if event.kind == "start":
            started = False
        if event.seat < 0 or event.seat in touched or event.kind in ("start", "end"):
            continue
        touched.add(event.seat)
        if event.old is None:
            old.pop(event.seat, None)
        else:
            old[event.seat] = event.old
    return progress_lines(list(old.values()), started, total)


MoveStatus = Literal["racing", "blocked", "finished"]
"""A player's status after an accepted move."""


def player_status(game: Game) -> MoveStatus:
    """A player's status after a move: finished (won), blocked (no legal move at all) or racing."""
    if game.is_won():
        return "finished"
    return "blocked" if game.status() is Status.BLOCKED else "racing"


def results(meta: RaceMeta, players: list[PlayerState], ended_at: int) -> p.Results:
    """Final standings, the revealed deal and every player's game, replayed to its end
    (seats given back in the lobby and never taken again are nobody's: left out)."""
    total = get_variant(meta.variant).total_cards
    players = [pl for pl in players if not pl.left]
    accounts = {pl.seat: pl.account for pl in players}
    standings = []
    for rank, line in ranked([pl.line for pl in players]):
        standings.append(p.Standing(
            rank=rank, seat=line.seat, name=line.name, status=final_status(line.status),
            home=line.home, total=total, moves=line.moves, finished_at=line.finished_at or None,
            home_at=line.home_at or None, helped=bool(line.helped), account=accounts.get(line.seat),
        ))
    records = []
    for pl in players:
        game = replay(GameRecord(meta.variant, meta.deal, tuple(pl.moves))).game
        records.append(p.PlayerRecord(seat=pl.seat, name=pl.name, moves=pl.moves, position=game.position()))
    return p.Results(
        race=meta.id, variant=meta.variant, deal=meta.deal, salt=meta.salt, commitment=meta.commitment,
        starts_at=meta.starts_at or None, ended_at=ended_at, standings=standings, records=records,
        checked=meta.checked, winning_line=meta.line.split() if meta.checked else None,
    )
