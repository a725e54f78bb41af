"""``thieves event``: tournament events (docs/events.md): create, list, show, join, withdraw, start,
cancel, standings, watch, fairplay.

The organiser's commands (create, start, cancel, fairplay) take the server's organiser token (``--organiser-token`` or
``$THIEVES_ORGANISER_TOKEN``); an entrant's (join, withdraw) use the account kept for the server
(``thieves register NAME``). Anyone may list, show, read the standings and watch.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from typing import Callable

from client_cli.commands.netargs import add_server_option, server_of
from client_cli.wording import clock_time
from shared import protocol as p
from shared import schedules
from shared.event_words import race_word, tiebreak_words
from shared.standings import status_words
from shared.variants import DEFAULT_VARIANT, VARIANTS

ORGANISER_ENV = "THIEVES_ORGANISER_TOKEN"


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "event",
        help="tournament events: duplicate rounds in heats, Swiss rounds in pairings, and arenas",
        description="Tournament events (docs/events.md). Organisers create and start them with the server's "
        f"organiser token (--organiser-token or ${ORGANISER_ENV}); players join with their account "
        "(thieves register NAME) and then play their race (a heat, a Swiss pairing) with `thieves play CODE`.",
    )
    cmds = parser.add_subparsers(dest="event_command", metavar="ACTION")
    cmds.required = True

    create = cmds.add_parser("create", help="create an event (organiser)",
                             description="Create an event; it takes entries until `thieves event start`.")
    create.add_argument("name", help="the event's name (1-64 characters)")
    create.add_argument("--format", default="duplicate",
                        help="a format the server plays: duplicate, rounds on one deal in heats, by matchpoints; "
                        "arena, races again and again for --duration, points by place; swiss, head-to-head rounds by score "
                        "with byes, Buchholz and Sonneborn-Berger (default duplicate)")
    create.add_argument("--variant", "-v", default=DEFAULT_VARIANT.key, choices=list(VARIANTS))
    create.add_argument("--rounds", type=int, default=3, help="duplicate, swiss: rounds (default 3)")
    create.add_argument("--heat-size", type=int, default=8, help="duplicate: most racers in one heat (default 8)")
    create.add_argument("--time-limit", type=int, default=600, help="seconds each race lasts (default 600)")
    create.add_argument("--join-seconds", type=int, default=60,
                        help="seconds between drawing a race and its start (default 60)")
    create.add_argument("--break-seconds", type=int, default=30, help="duplicate: seconds between rounds (default 30)")
    create.add_argument("--duration", type=int, default=1800, help="arena: seconds of pairing (default 1800)")
    create.add_argument("--group-size", type=int, default=2, help="arena: racers per race (default 2)")
    create.add_argument("--deal-source", choices=["pool", "random"], default="pool",
                        help="pool: checked deals proved winnable (default); random: secret random deals")
    create.add_argument("--deals", default=None, metavar="N,N,...",
                        help="the organiser's own deal numbers (duplicate: one per round), secret until the end")
    create.add_argument("--rated", action="store_true", help="the races update the players' ratings")
    create.add_argument("--no-late-entry", action="store_true", help="no entries once the event has started")
    create.add_argument("--check-in", action="store_true",
                        help="entrants must also check in (`thieves event check-in`) before the start, or are withdrawn")
    create.add_argument("--starts-at", default=None, metavar="ISO|+MINUTES",
                        help="the event starts by itself then: an ISO time (UTC unless it says its offset, "
                        "2026-12-24T18:00) or +MINUTES from now (default: when the organiser starts it)")
    create.add_argument("--repeat", default=None, metavar="CRON",
                        help="repeat on a cron schedule (UTC, five fields: '0 * * * *' every hour): as each "
                        "occurrence starts, the next is made; needs --starts-at")
    create.add_argument("--min-rated-races", type=int, default=0, metavar="N",
                        help="entry condition: at least N finished rated races in the variant")
    create.add_argument("--min-account-days", type=float, default=0, metavar="DAYS",
                        help="entry condition: accounts at least DAYS old")
    create.add_argument("--min-rating", type=int, default=None, help="entry condition: a rating of at least this")
    create.add_argument("--max-rating", type=int, default=None, help="entry condition: a rating of at most this")
    _organiser_option(create)

    cmds.add_parser("list", help="the latest events")
    show = cmds.add_parser("show", help="an event's settings, rounds and heats")
    join = cmds.add_parser("join", help="enter an event with your account")
    withdraw = cmds.add_parser("withdraw", help="withdraw from an event (your rounds so far stay)")
    checkin = cmds.add_parser("check-in", help="say you are there (events created with --check-in)")
    play = cmds.add_parser("play", help="play your races of an event, one after another, as they are drawn",
                           description="Wait for your race (a round's heat or Swiss pairing, an arena's next "
                           "pairing), play it, and go on to the next by itself, until the event is over. Quitting "
                           "a race (q) stops.")
    start = cmds.add_parser("start", help="close registration and draw the first round (organiser)")
    _organiser_option(start)
    cancel = cmds.add_parser("cancel", help="call off an event that has not started (organiser)",
                             description="Call off an event that takes entries. With --series, a recurring "
                             "event's series ends too: no further occurrences (one already running plays on).")
    cancel.add_argument("--series", action="store_true", help="end the whole series: no further occurrences")
    _organiser_option(cancel)
    fairplay = cmds.add_parser("fairplay", help="the fair-play flags of an event's games, with their evidence "
                               "(organiser)", description="List the flags the server raised after the event's races "
                               "(scouting, linked accounts, foresight, the stored winning line), each with its "
                               "evidence. Flags are for the organiser to weigh: nothing is penalised by itself. "
                               "Exit 0 when read (flagged or not), 1 when the server refuses, 2 without a token.")
    _organiser_option(fairplay)
    standings = cmds.add_parser("standings", help="an event's standings")
    watch = cmds.add_parser("watch", help="an event's standings, live, until it ends (q quits)")
    for cmd in (show, join, withdraw, checkin, play, start, cancel, standings, watch, fairplay):
        cmd.add_argument("event", metavar="EVENT", help="the event's id (see `thieves event list`)")
    for cmd in (create, cmds.choices["list"], show, join, withdraw, checkin, play, start, cancel, standings, watch,
                fairplay):
        add_server_option(cmd)
    parser.set_defaults(func=run)


def _organiser_option(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument("--organiser-token", default=None, metavar="TOKEN",
                     help=f"the server's organiser token (default ${ORGANISER_ENV})")


def run(args: argparse.Namespace) -> int:
    from client_cli import api

    server = server_of(args)
    action = args.event_command
    try:
        if action == "create":
            return _create(api, server, args)
        if action == "list":
            events = api.list_events(server)
            for info in events:
                print(summary(info))
            if not events:
                print(f"no events on {server} yet (an organiser makes one: thieves event create NAME)")
            return 0
        if action == "show":
            info = api.event(server, args.event)
            names = {line.account: line.name for line in api.event_standings(server, args.event).lines}
            print("\n".join(describe(info, time.time() * 1000, names)))
            return 0
        if action in ("join", "withdraw", "check-in"):
            return _entry(api, server, args)
        if action == "start":
            info = api.start_event(server, _token(args), args.event)
            print(f"started {info.name!r}: {'pairing until the end' if info.pairing else 'round 1 is being drawn'}")
            return 0
        if action == "cancel":
            info = api.cancel_event(server, _token(args), args.event, series=args.series)
            ended = f"; series {info.series} ended: no further occurrences" if args.series else ""
            print(f"{info.name!r} ({info.id}) is {info.status}{ended}")
            return 0
        if action == "play":
            return play_event(server, args)
        if action == "fairplay":
            print("\n".join(fairplay_lines(api.event_fairplay(server, _token(args), args.event))))
            return 0
        if action == "standings":
            print("\n".join(standings_lines(api.event_standings(server, args.event))))
            return 0
        return watch_event(server, args.event)
    except api.ApiError as exc:
        print(f"thieves event {action}: {exc.words()}", file=sys.stderr)
        return 1
    except ValueError as exc:  # (schedules.BadSchedule too: a --starts-at that is no time)
        print(f"thieves event {action}: {exc}", file=sys.stderr)
        return 2


def _token(args: argparse.Namespace) -> str:
    token = args.organiser_token or os.environ.get(ORGANISER_ENV)
    if not token:
        raise ValueError(f"the organiser token is needed: --organiser-token TOKEN or ${ORGANISER_ENV}")
    return str(token)


def _conditions(args: argparse.Namespace) -> p.EntryConditions | None:
    """The entry conditions the options ask for (None: any account may enter)."""
    cond = p.EntryConditions(min_rated_races=args.min_rated_races, min_account_age=round(args.min_account_days * 86_400),
                             min_rating=args.min_rating, max_rating=args.max_rating)
    return None if cond == p.EntryConditions() else cond


def fairplay_lines(report: p.FairPlayReport) -> list[str]:
    """A fair-play report as text: a summary, then each flag with its evidence."""
    out = [f"{report.scope}: {report.analysed} games analysed ({report.cpu_seconds:.1f} s of solver CPU), "
           f"{report.waiting} races not analysed yet, {len(report.flags)} flags"]
    for flag in report.flags:
        where = f" in race {flag.race}" if flag.race else ""
        out.append(f"{flag.kind}: {flag.name}{where}: {flag.why}")
        if flag.linked:
            out.append(f"  linked accounts: {', '.join(flag.linked)}")
        if flag.position:
            out.append(f"  position: {flag.position}")
            out.append(f"  unseen then (true order): {' '.join(flag.unseen)}")
        for d in flag.decisions:
            right = "right" if d.foresight else "wrong"
            out.append(f"  move {d.ply + 1}: {d.move} instead of {d.natural} ({right} with the true order; the "
                       f"visible cards gave it {d.chosen_share:.0%} against {d.natural_share:.0%})")
        if flag.moves:
            out.append(f"  moves: {' '.join(flag.moves)}")
    return out


def _create(api: object, server: str, args: argparse.Namespace) -> int:
    from client_cli import api as a
    from client_cli.commands.netargs import refused

    if refused("event create", (p.EventCreate, "name", args.name, "the event's name")):
        return 2
    deals = [int(d) for d in args.deals.split(",") if d.strip()] if args.deals else None
    starts_at = schedules.parse_start(args.starts_at, int(time.time() * 1000)) if args.starts_at else None
    body = p.EventCreate(
        name=args.name, format=args.format, variant=args.variant, rounds=args.rounds, heat_size=args.heat_size,
        time_limit=args.time_limit, join_seconds=args.join_seconds, break_seconds=args.break_seconds,
        deal_source=args.deal_source, deals=deals, rated=args.rated, late_entry=not args.no_late_entry,
        check_in=args.check_in,
        duration=args.duration, group_size=args.group_size, starts_at=starts_at, repeat=args.repeat,
        conditions=_conditions(args))
    info = a.create_event(server, _token(args), body)
    print(f"event: {info.id}\n{summary(info)}")
    if info.starts_at is not None:
        print(when(info))
    print(f"players join with: thieves event join {info.id}")
    return 0


def _entry(api: object, server: str, args: argparse.Namespace) -> int:
    from client_cli import api as a
    from client_cli.local_store import LocalStore

    account = LocalStore().account(server)
    if account is None:
        raise ValueError(f"no account is kept for {server}: `thieves register NAME` makes one")
    try:
        if args.event_command == "join":
            entry = a.enter_event(server, args.event, account.key)
            info = a.event(server, args.event)
            print(entry_words(entry, info))
            if info.check_in and not entry.checked_in:
                print(f"this event asks for check-in: `thieves event check-in {entry.event}` before it starts")
        elif args.event_command == "check-in":
            entry = a.check_in(server, args.event, account.key)
            print(f"{entry.name} checked in to {entry.event}")
        else:
            entry = a.withdraw_from_event(server, args.event, account.name, account.key)
            print(f"{entry.name} withdrew from {entry.event}: no further rounds; the rounds played stay")
    except a.ApiError as exc:
        if exc.code != p.ErrorCode.NOT_ENTERED.value:
            raise
        print(f"thieves event {args.event_command}: {not_entered_words(account.name, args.event)}", file=sys.stderr)
        return 1
    return 0


def not_entered_words(name: str, event: str) -> str:
    """The ``not_entered`` refusal in the player's words, with how to enter (the server's own words
    cannot name the command)."""
    return (f"{name} has not entered event {event} (or has withdrawn): `thieves event join {event}` "
            "enters it (then check in, where the event asks for it)")


def entry_words(entry: p.EventEntry, info: p.EventInfo) -> str:
    """What entering did, in the entrant's words, from the server's typed ``outcome``: a second
    ``thieves event join`` used to say "entered ... plays from round 1" whatever had happened."""
    if entry.outcome == "already_entered":
        return f"{entry.name} is already entered in {info.name!r} ({info.id}): nothing changed; {_first_race(entry, info)}"
    if entry.outcome == "resumed":
        return (f"{entry.name} is back in {info.name!r} ({info.id}): paused for missing a race, now paired again "
                "as soon as a race is free")
    return f"{entry.name} entered {info.name!r} ({info.id}): {_first_race(entry, info)}"


def _first_race(entry: p.EventEntry, info: p.EventInfo) -> str:
    """When the entrant first plays: a round-based event's round, or an event that pairs (``pairing``)
    at once."""
    if info.pairing:
        return "paired from the start" if info.status == "registration" else "paired as soon as another entrant waits"
    return f"plays from round {entry.from_round} of {info.rounds}"


def summary(info: p.EventInfo) -> str:
    """One line about an event (a scheduled one's: when it starts)."""
    shape = f"{info.format}, {info.summary}"
    over = info.status in ("finished", "cancelled")
    where = (f"round {info.round}/{info.rounds} {info.round_state}" if not info.pairing and info.round and not over
             else info.status)
    if info.status == "registration" and info.starts_at is not None:
        where = f"starts {schedules.shown(info.starts_at)}"
    if info.repeat and info.status == "registration":
        # Only the occurrence to come speaks for its series: one that has started keeps the repeat it
        # was made with, even once the series is cancelled.
        where += f"; repeats '{info.repeat}'"
    return f"{info.id}  {info.name[:30]:<30} {shape}; {info.variant}; {info.entrants} entrants; {where}"


def when(info: p.EventInfo) -> str:
    """A scheduled event's start and its series: what is coming."""
    out = f"starts by itself at {schedules.shown(info.starts_at)}" if info.starts_at is not None else ""
    if info.series is not None:
        repeat = f"repeats '{info.repeat}' (UTC)" if info.repeat else "the series is cancelled: no further occurrences"
        nxt = f"; next: {info.next_event}" if info.next_event else ""
        out += f"{'; ' if out else ''}occurrence {info.occurrence} of series {info.series}, {repeat}{nxt}"
    return out


def describe(info: p.EventInfo, now_ms: float, names: dict[str, str] | None = None) -> list[str]:
    """An event's settings, its clock and the races drawn so far, for 80 columns; entrants by ``names``
    (account -> the name as registered, from the standings) where known."""
    names = names or {}
    out = [summary(info), f"each race {info.time_limit} s, drawn {info.join_seconds} s before it starts"
           + (", rated" if info.rated else "") + ("" if info.late_entry else ", no late entry")]
    out.append(clock(info, now_ms))
    if info.starts_at is not None or info.series is not None:
        out.append(when(info))
    if info.conditions is not None:
        out.append("entry: " + condition_words(info.conditions, info.variant))
    for rnd in info.schedule[-8:]:
        deal = f" (deal {rnd.deal})" if rnd.deal else ""
        out.append(f"{'race' if info.pairing else 'round'} {rnd.round}{deal}:")
        for heat in rnd.heats:
            out.append(f"  {heat.code}  " + ", ".join(names.get(a, a) for a in heat.entrants)[:70])
        if rnd.byes:
            out.append("  bye     " + ", ".join(names.get(a, a) for a in rnd.byes)[:70])
    return out


def condition_words(cond: p.EntryConditions, variant: str) -> str:
    """An event's entry conditions in a few words (``thieves event show``)."""
    parts = []
    if cond.min_rated_races:
        parts.append(f"{cond.min_rated_races} finished rated races of {variant}")
    if cond.min_account_age:
        days = cond.min_account_age / 86_400
        parts.append(f"an account {days:g} day{'s' if days != 1 else ''} old")
    if cond.min_rating is not None or cond.max_rating is not None:
        low = "" if cond.min_rating is None else f"{cond.min_rating}"
        high = "" if cond.max_rating is None else f"{cond.max_rating}"
        parts.append(f"a {variant} rating of {low or 'any'} to {high or 'any'}")
    return "; ".join(parts) or "any account"


def _left(at: float, now_ms: float) -> str:
    """How long from ``now_ms`` to ``at``, as ``m:ss`` (0:00 once past)."""
    seconds = max(0, int((at - now_ms) / 1000))
    return f"{seconds // 60}:{seconds % 60:02d}"


def clock(info: p.EventInfo, now_ms: float) -> str:
    """What the event is waiting for, and when: this machine's time of day, and how long from now."""
    def left(at: float) -> str:
        return _left(at, now_ms)
    if info.status == "registration":
        if info.starts_at is not None:
            return f"taking entries; starts in {left(info.starts_at)}"
        return "taking entries until the organiser starts it"
    if info.status in ("finished", "cancelled"):
        return info.status
    if info.ends_at:
        return f"pairing until {clock_time(info.ends_at)} ({left(info.ends_at)} more)"
    if info.round_state == "done" and info.next_at:
        return f"round {info.round + 1} of {info.rounds} is drawn at {clock_time(info.next_at)} (in {left(info.next_at)})"
    current = info.schedule[-1] if info.schedule else None
    if current is not None and info.round_state == "open":
        return (f"round {current.round} of {info.rounds} starts at {clock_time(current.starts_at)} "
                f"(in {left(current.starts_at)}): join your {race_word(info.format)} (thieves play CODE)")
    if current is not None and info.round_state == "running":
        end = current.starts_at + info.time_limit * 1000
        return f"round {current.round} of {info.rounds} races until {clock_time(end)} at the latest ({left(end)} left)"
    return info.round_state


def standings_lines(st: p.EventStandings) -> list[str]:
    """The standings at 80 columns: one ranked line per entrant."""
    arena = any(line.points is not None for line in st.lines)
    if arena:
        out = [f"{'rank':>4}  {'name':<24} {'points':>6} {'wins':>4} {'races':>5} {'cards':>5}  status"]
        for line in st.lines:
            fire = " on fire" if line.streak >= 2 else ""
            out.append(f"{line.rank:>4}  {line.name[:24]:<24} {line.points or 0:>6} {line.wins:>4} {line.races:>5} "
                       f"{line.home:>5}  {status_words(line.status)}{fire}{' (withdrew)' if line.withdrawn else ''}")
        return out
    if any(line.score is not None for line in st.lines):
        return _swiss_lines(st)
    out = [f"{'rank':>4}  {'name':<24} {'matchpoints':>11} {'cards':>5} {'time':>8}  rounds"]
    for line in st.lines:
        rounds = " ".join(_round_mark(r) for r in line.rounds)
        out.append(f"{line.rank:>4}  {line.name[:24]:<24} {line.matchpoints:>11g} {line.home:>5} "
                   f"{line.time_ms / 1000:>7.0f}s  {rounds[:18]}{' (withdrew)' if line.withdrawn else ''}")
    if any(line.rounds for line in st.lines):
        out.append(ROUNDS_LEGEND)
    return out


def _swiss_lines(st: p.EventStandings) -> list[str]:
    """A Swiss event's standings: points, then the tie-breaks the page shows too (Buchholz,
    Sonneborn-Berger), cards home, time and the rounds, in 80 columns."""
    (_, bu), (_, sb) = tiebreak_words("buchholz"), tiebreak_words("sonneborn_berger")
    out = [f"{'rank':>4}  {'name':<18} {'points':>6} {bu:>5} {sb:>5} {'cards':>5} {'time':>7}  rounds"]
    for line in st.lines:
        rounds = " ".join(_round_mark(r) for r in line.rounds)
        out.append(f"{line.rank:>4}  {line.name[:18]:<18} {line.score or 0:>6g} {line.buchholz or 0:>5g} "
                   f"{line.sonneborn_berger or 0:>5g} {line.home:>5} {line.time_ms / 1000:>6.0f}s  "
                   f"{rounds[:14]}{' (withdrew)' if line.withdrawn else ''}")
    out.append(SWISS_LEGEND)
    if any(line.rounds for line in st.lines):
        out.append(ROUNDS_LEGEND)
    return out


SWISS_LEGEND = "; ".join(f"{short}: {name}" for name, short in map(tiebreak_words, ("buchholz", "sonneborn_berger"))) \
    + " (they break ties of points, in this order)"
"""What a Swiss standings' tie-break columns are."""


ROUND_MARKS = {"finished": "W", "racing": "P", "gave_up": "G", "no_show": "-", "absent": ".", "bye": "B"}
"""One character per round in the standings' rounds column (a RoundStatus)."""
ROUNDS_LEGEND = "rounds: " + "  ".join(
    f"{mark} {status_words(status, final=True)}" for status, mark in ROUND_MARKS.items())
"""What the rounds column's marks mean, in the words of ``shared.standings.status_words``."""


def _round_mark(r: p.EventRoundScore) -> str:
    return ROUND_MARKS.get(r.status, "?")


WAIT_SECONDS = 1.0
"""How often ``thieves event play`` looks at the event while it waits for the entrant's next race."""


def next_race(info: p.EventInfo, standings: p.EventStandings, account: str, played: set[str]) -> str | None:
    """The join code of the account's race to play now, if any: its heat of the round drawn (duplicate),
    or the race it is paired into (arena); never one it has played."""
    if info.pairing:
        mine = next((line for line in standings.lines if line.account == account), None)
        if mine is None or mine.status != "playing" or not mine.race or mine.race in played:
            return None
        return next((h.code for r in info.schedule for h in r.heats if h.race == mine.race), None)
    if not info.schedule or info.round_state not in ("open", "running"):
        return None
    heat = next((h for h in info.schedule[-1].heats if account in h.entrants), None)
    return heat.code if heat is not None and heat.race not in played else None


def waiting_for(info: p.EventInfo, mine: p.EventStandingLine, now_ms: float) -> tuple[str, str]:
    """What the entrant waits for, in words with when; and the part of it that changes only when the
    event moves on (``thieves event play`` prints a new line then, not every second)."""
    said = clock(info, now_ms)
    if info.status == "registration" and info.starts_at is not None:  # it starts by itself
        return (f"waiting for {info.name!r} to start by itself at {clock_time(info.starts_at)} "
                f"(in {_left(info.starts_at, now_ms)}; {info.entrants} entrants)"), "registration"
    if info.status == "registration":
        return f"waiting for the organiser to start {info.name!r} ({info.entrants} entrants)", "registration"
    if info.status == "running" and info.round_state == "done" and info.next_at and not info.pairing:
        # The entrant's next race starts once its round is drawn and joined: say that moment, not the draw.
        start = info.next_at + info.join_seconds * 1000
        said = f"round {info.round + 1} of {info.rounds} starts at {clock_time(start)} (in {_left(start, now_ms)})"
    if mine.status == "waiting":
        return f"waiting to be paired · {info.name}: {said}", f"waiting {mine.races}"
    current = info.schedule[-1] if info.schedule else None
    drawn = info.round_state in ("open", "running") and current is not None and current.round == info.round
    if drawn and current is not None and mine.account in current.byes:
        return f"a bye in round {info.round} of {info.rounds} (no race for you) · {info.name}: {said}", \
            f"{info.round} bye"
    if drawn and current is not None and not any(mine.account in h.entrants for h in current.heats):
        # A round drawn without the entrant: it entered late and plays from the next one.
        return f"you play from the next round (you entered late) · {info.name}: {said}", \
            f"{info.round} {info.round_state}"
    return f"waiting · {info.name}: {said}", f"{info.round} {info.round_state}"


def play_event(server: str, args: argparse.Namespace) -> int:
    """Play the account's races of the event as they are drawn, until it is over (or the player leaves a
    race): exit 0 with the final standings, 1 when it stops before (a race left, not entered, withdrawn)."""
    from client_cli import api
    from client_cli.commands import play as play_cmd
    from client_cli.local_store import LocalStore

    account = LocalStore().account(server)
    if account is None:
        raise ValueError(f"no account is kept for {server}: `thieves register NAME` makes one")
    me = account.name.casefold()  # the account id: its name, case-folded (what the event's heats list)
    played: set[str] = set()
    waiting = WaitLine()
    while True:
        info = api.event(server, args.event)
        if info.status == "cancelled":
            waiting.end()
            print(f"{info.name!r} was cancelled by the organiser")
            return 1
        table = api.event_standings(server, args.event)
        mine = next((line for line in table.lines if line.account == me), None)
        if info.status == "finished":
            waiting.end()
            print(f"{info.name!r} is over:")
            print("\n".join(standings_lines(table)))
            if mine is not None:
                print(f"{mine.name}: rank {mine.rank} of {len(table.lines)}, " + _score_words(mine))
            return 0
        if mine is None:
            waiting.end()
            print(f"{account.name} is not entered in {info.name!r}: `thieves event join {info.id}` enters",
                  file=sys.stderr)
            return 1
        if mine.withdrawn:
            waiting.end()
            print(f"{account.name} withdrew from {info.name!r}: `thieves event join {info.id}` enters again",
                  file=sys.stderr)
            return 1
        if mine.status == "paused":  # (an arena entrant who missed a race) here to play: back to the pairing
            waiting.reset()
            print(entry_words(api.enter_event(server, args.event, account.key), info), flush=True)
            continue
        code = next_race(info, table, me, played)
        if code is None:
            waiting.show(*waiting_for(info, mine, time.time() * 1000))
            time.sleep(WAIT_SECONDS)
            continue
        race = next(h.race for r in info.schedule for h in r.heats if h.code == code)
        waiting.reset()
        print(f"joining your race {code} in {info.name!r}", flush=True)
        status, state = play_cmd.play(argparse.Namespace(race=code, name=None, anonymous=False, creator_token=None,
                                                         server=args.server,
                                                         then=next_look(server, info.id, me, played | {race})))
        played.add(race)
        if state is not None and state.results is None and state.seat is None and state.fatal:
            print(f"could not join race {code}: {state.fatal}; on to the next", flush=True)  # (e.g. came too late)
            continue
        if state is None or state.results is None:
            print(f"you left your race {code}: `thieves event play {info.id}` comes back to the event",
                  file=sys.stderr)
            return status or 1


class WaitLine:
    """The line ``thieves event play`` waits on: printed once for each step of the event, and on a
    terminal redrawn in place at every look, so that its "(in 0:42)" counts down to the start."""

    def __init__(self) -> None:
        self.live = sys.stdout.isatty()
        self.key: str | None = None
        self.open = False
        """A line is on the terminal without its line break (being redrawn)."""

    def show(self, words: str, key: str) -> None:
        """``words`` for the event's step ``key``: a new line when the step is new, else redrawn."""
        fits = len(words) < shutil.get_terminal_size().columns  # (a wrapped line cannot be redrawn)
        if key != self.key:
            self.end()
            self.key = key
            self.open = self.live and fits
            print(words, end="" if self.open else "\n", flush=True)
        elif self.open:
            print("\r\x1b[K" + words, end="", flush=True)

    def end(self) -> None:
        """Finish the line being redrawn (before anything else is printed)."""
        if self.open:
            print(flush=True)
            self.open = False

    def reset(self) -> None:
        """Finish the line, and say the next step anew whatever it is (after a race)."""
        self.end()
        self.key = None


def next_look(server: str, event: str, me: str, played: set[str]) -> Callable[[], tuple[str, bool]]:
    """For the end screen of the entrant's race (client_cli/event_end.py): what the event does next, with
    when, and whether to go on now: the entrant's next race is drawn, or there is nothing left to wait
    for here (the event is over, the entrant is out or paused: the command says what)."""
    from client_cli import api

    def look() -> tuple[str, bool]:
        info = api.event(server, event)
        if info.status in ("finished", "cancelled"):
            return f"{info.name!r} is {info.status}", True
        table = api.event_standings(server, event)
        mine = next((line for line in table.lines if line.account == me), None)
        if mine is None or mine.withdrawn or mine.status == "paused":
            return f"back to {info.name!r}", True
        now = time.time() * 1000
        code = next_race(info, table, me, played)
        if code is not None:
            starts = next(r.starts_at for r in info.schedule for h in r.heats if h.code == code)
            return f"your next race starts at {clock_time(starts)} (in {_left(starts, now)}): joining it", True
        return waiting_for(info, mine, now)[0], False
    return look


def _score_words(line: p.EventStandingLine) -> str:
    if line.points is not None:
        return f"{line.points} points from {line.races} races ({line.wins} won)"
    if line.score is not None:  # Swiss: points, as its standings say
        return f"{line.score:g} points, {line.home} cards home"
    return f"{line.matchpoints:g} matchpoints, {line.home} cards home"


def watch_event(server: str, event: str) -> int:
    """Follow the event live at 80×24 until it ends; an event that is not there (or a server that does
    not answer) is one line on stderr and exit 1, before any screen opens."""
    from client_cli import api
    from client_cli.event_watch import EventWatchApp

    api.event(server, event)  # raises ApiError: no such event, no server
    app = EventWatchApp(server, event)
    app.run()
    if app.problem:
        print(f"thieves event watch: {app.problem}", file=sys.stderr)
        return 1
    if app.last_text:
        print(app.last_text)  # the standings stay on the terminal
    return 0
