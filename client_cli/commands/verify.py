"""``thieves verify EVENT``: recompute a finished event from its revealed races alone.

Duplicate events, arenas and Swiss events. Trusts nothing the server computed: each heat's deal is checked against the commitment published
when the race was made, every entrant's game is replayed move by move on that deal (its cards home,
its win and its final position must be what the results say), and the matchpoints and standings,
every round line of them included, are recomputed from those results with the very functions the
server uses (``shared/scoring.py``, ``shared/standings.py``: the rules of docs/events.md), so a
difference means stored data was changed, not that two copies of a rule drifted apart. Prints
``agree`` or the first difference, and exits 0 or 1.
"""

from __future__ import annotations

import argparse
import sys
from typing import Callable

import msgspec

from client_cli import api
from client_cli.api import ApiError, get_json
from client_cli.commands.netargs import add_server_option, server_of
from shared import protocol as p
from shared import scoring, swiss
from shared.deals import commitment
from shared.record import GameRecord, replay
from shared.variants import get_variant


def register(sub: argparse._SubParsersAction) -> None:
    cmd = sub.add_parser(
        "verify",
        help="recompute a finished event's races and standings from the revealed deals and moves",
        description="Fetch a finished event, check every race's deal against its commitment, replay every "
        "entrant's moves, recompute the matchpoints (duplicate), the points with their streaks (arena) or every "
        "pairing with the points and tie-breaks (Swiss), and "
        "the standings with every round line, and compare them with the server's. Exit 0 when all agree, 1 at the first difference, 2 when the event cannot be checked.",
    )
    cmd.add_argument("event", metavar="EVENT", help="the event's id (see `thieves event list`)")
    add_server_option(cmd)
    cmd.set_defaults(func=run)


class Difference(Exception):
    """The first thing that does not agree (the message says what, where)."""


def run(args: argparse.Namespace) -> int:
    server = server_of(args)
    try:
        info = api.event(server, args.event)
        if info.status != "finished":
            print(f"thieves verify: event {info.id} is {info.status}: its deals are revealed once it is over",
                  file=sys.stderr)
            return 2
        if info.format not in _FORMATS:
            print(f"thieves verify: event {info.id} is a {info.format} event, which this client cannot recompute "
                  f"(it knows {', '.join(sorted(_FORMATS))})", file=sys.stderr)
            return 2
        told = api.event_standings(server, args.event)
        rounds = {r.round: _round(server, info, r, told) for r in info.schedule}
        recompute, fields = _FORMATS[info.format]
        _compare(recompute(info, told, rounds), told, fields)
    except ApiError as exc:
        why = (f"no event {args.event} on this server ({server}: `thieves event list` shows its events)"
               if exc.code == p.ErrorCode.EVENT_NOT_FOUND.value else exc.words())
        print(f"thieves verify: {why}", file=sys.stderr)
        return 2
    except Difference as exc:
        print(f"differ: {exc}")
        return 1
    heats = sum(len(r.heats) for r in info.schedule)
    what = f"{heats} races" if info.pairing else f"{len(info.schedule)} rounds, {heats} heats"
    print(f"agree: {what}, {len(told.lines)} entrants of {info.name!r} recomputed from the revealed deals and moves")
    return 0


def _round(server: str, info: p.EventInfo, rnd: p.EventRound, told: p.EventStandings) -> list[scoring.RoundResult]:
    """Every entrant's result of one round, from its heat's results, each game replayed."""
    out = []
    for heat in rnd.heats:
        try:
            res = msgspec.convert(get_json(server, f"/races/{heat.race}/results"), p.Results)
        except ApiError as exc:
            if exc.code != p.ErrorCode.RACE_NOT_OVER.value:
                raise
            out += _never_started(info, rnd, heat, told)
            continue
        where = f"{'race' if info.pairing else 'round'} {rnd.round}, heat {heat.heat} (race {heat.race})"
        if not info.pairing and (rnd.deal is None or res.deal != rnd.deal):
            raise Difference(f"{where}: the race's deal {res.deal} is not the round's {rnd.deal}")
        if commitment(res.variant, res.deal, res.salt) != res.commitment:
            raise Difference(f"{where}: deal and salt do not match the commitment published at the start")
        records = {r.seat: r for r in res.records}
        for s in res.standings:
            _check_game(where, res, s, records.get(s.seat))
            if s.account not in heat.entrants:
                raise Difference(f"{where}: {s.name} raced but was not drawn into the heat")
        out += [scoring.heat_result(a, heat.race, heat.heat, res) for a in heat.entrants]
    return out


def _never_started(info: p.EventInfo, rnd: p.EventRound, heat: p.EventHeat,
                   told: p.EventStandings) -> list[scoring.RoundResult]:
    """The results of a heat that never started: nobody joined it, or (a rated race needs two) one entrant
    did. No race shows who came to it, so that is the server's word, its round lines' ``racing`` (came:
    played on with the starting cards) or ``no_show``; anything else (a win, a give-up, a card moved
    home) cannot come of a race nobody played, and is a difference."""
    home0 = get_variant(info.variant).home_at_start
    said = {line.account: score for line in told.lines for score in line.rounds if score.round == rnd.round}
    out = []
    for account in heat.entrants:
        score = said.get(account)
        came = score is not None and score.status == "racing"
        if score is not None and ((score.status, score.home) not in (("racing", home0), ("no_show", 0))
                                  or score.race != heat.race):
            raise Difference(f"{account}: round {rnd.round}: heat {heat.heat} (race {heat.race}) never started, "
                             f"but the server says {score.status} with {score.home} cards home there")
        out.append(scoring.heat_result(account, heat.race, heat.heat, None, came=came, home0=home0))
    return out


def _check_game(where: str, res: p.Results, s: p.Standing, record: p.PlayerRecord | None) -> None:
    if record is None:
        raise Difference(f"{where}: {s.name}'s moves are missing")
    played = replay(GameRecord(res.variant, res.deal, tuple(record.moves)))
    if played.error is not None:
        raise Difference(f"{where}: {s.name}'s move {played.failed_at} is illegal: {played.error}")
    game = played.game
    if game.cards_home != s.home:
        raise Difference(f"{where}: {s.name} has {game.cards_home} cards home after its moves, "
                         f"the results say {s.home}")
    if game.is_won() != (s.status == "finished"):
        raise Difference(f"{where}: {s.name}'s game is {'won' if game.is_won() else 'not won'}, "
                         f"the results say {s.status}")
    if game.position() != record.position:
        raise Difference(f"{where}: {s.name}'s final position is not the one its moves reach")


def _standings(info: p.EventInfo, told: p.EventStandings,
               rounds: dict[int, list[scoring.RoundResult]]) -> list[p.EventStandingLine]:
    """The standings recomputed from the rounds' results, with the server's own function: only who
    entered, their names and who withdrew are taken from the server (no race shows them)."""
    scored = {(number, r.account): r for number, results in rounds.items() for r in scoring.scored(results)}
    return scoring.standing_lines(told.lines, scored, info.time_limit * 1000)


def _swiss(info: p.EventInfo, told: p.EventStandings,
           rounds: dict[int, list[scoring.RoundResult]]) -> list[p.EventStandingLine]:
    """Every round's pairing checked against the rule (a valid pairing of the round's field of the least
    cost, given the rounds before it), then the points, byes, tie-breaks and standings recomputed, all
    with the server's own ``shared.swiss`` functions."""
    scored: dict[tuple[int, str], scoring.ScoredRound] = {}
    for rnd in sorted(info.schedule, key=lambda r: r.round):
        order = [t.account for _, t in scoring.ranked(scoring.totals(told.lines, scored, info.time_limit * 1000))]
        fault = swiss.fault([h.entrants for h in rnd.heats], rnd.byes, order, swiss.records(scored))
        if fault is not None:
            raise Difference(f"round {rnd.round}: {fault}")
        results = rounds[rnd.round] + [scoring.bye_result(a) for a in rnd.byes]
        scored.update(((rnd.round, r.account), r) for r in scoring.with_points(results, swiss.points(results)))
    return swiss.standing_lines(told.lines, scored, info.time_limit * 1000)


def _arena(info: p.EventInfo, told: p.EventStandings,
           races: dict[int, list[scoring.RoundResult]]) -> list[p.EventStandingLine]:
    """Each entrant's points, wins, races, cards home, streak and rank, the races taken in the order
    they were paired (the server's own ``shared.scoring`` functions fold them)."""
    tallies = {line.account: scoring.ArenaTally() for line in told.lines}
    for number in sorted(races):
        field = races[number]
        for r in field:
            tallies.setdefault(r.account, scoring.ArenaTally())
        for o in scoring.race_points(field, tallies):
            tallies[o.account] = scoring.after_race(tallies[o.account], o)
    return [p.EventStandingLine(rank=rank, account=a, name=a, matchpoints=0.0, home=tallies[a].home, time_ms=0,
                                points=tallies[a].points, wins=tallies[a].wins, races=tallies[a].races,
                                streak=tallies[a].streak)
            for rank, a in scoring.arena_ranked(tallies)]


Recompute = Callable[[p.EventInfo, p.EventStandings, dict[int, list[scoring.RoundResult]]], list[p.EventStandingLine]]
_FORMATS: dict[str, tuple[Recompute, tuple[str, ...]]] = {
    "duplicate": (_standings, ("matchpoints", "home", "time_ms", "rank", "rounds")),
    "arena": (_arena, ("points", "wins", "races", "home", "streak", "rank")),
    "swiss": (_swiss, ("score", "buchholz", "sonneborn_berger", "home", "time_ms", "rank", "rounds")),
}
"""Each format verify recomputes: how, and which standings line fields it then compares."""

_WORDS = {"home": "cards home", "time_ms": "time", "sonneborn_berger": "Sonneborn-Berger"}


def _compare(mine: list[p.EventStandingLine], told: p.EventStandings, what: tuple[str, ...]) -> None:
    """The first of ``what`` (line fields; ``rounds``: every round line, field by field) where the
    server's standings and the recomputed ones differ."""
    ours = {line.account: line for line in mine}
    if len(told.lines) != len(ours):
        raise Difference(f"the server lists {len(told.lines)} entrants, the rounds have {len(ours)}")
    for line in told.lines:
        me = ours.get(line.account)
        if me is None:
            raise Difference(f"{line.name} is in the server's standings but in no round")
        for field in what:
            if field == "rounds":
                _compare_rounds(line, me)
            elif getattr(line, field) != getattr(me, field):
                raise Difference(f"{line.name}: {_WORDS.get(field, field)} {getattr(line, field)} on the server, "
                                 f"{getattr(me, field)} recomputed")


def _compare_rounds(line: p.EventStandingLine, me: p.EventStandingLine) -> None:
    """Every round line of an entrant: the server's against the recomputed, field by field."""
    if [r.round for r in line.rounds] != [r.round for r in me.rounds]:
        raise Difference(f"{line.name}: rounds {[r.round for r in line.rounds]} on the server, "
                         f"{[r.round for r in me.rounds]} recomputed")
    for theirs, ours in zip(line.rounds, me.rounds):
        for field in theirs.__struct_fields__:
            if getattr(theirs, field) != getattr(ours, field):
                raise Difference(f"{line.name}: round {theirs.round} {_WORDS.get(field, field)} "
                                 f"{getattr(theirs, field)!r} on the server, {getattr(ours, field)!r} recomputed")
