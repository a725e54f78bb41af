"""HTTP bodies of events (tournaments) and of the daily deal, and the event feed's frame."""

from __future__ import annotations

from typing import Annotated, Literal, Union

import msgspec

from .fields import DealNumber, FinalStatus, Millis, PlayerStatus, TimeLimit, Version


# -------------------------------------------------------- HTTP bodies: events
EventFormat = Annotated[str, msgspec.Meta(min_length=1, max_length=32)]
"""How an event is played (docs/events.md), a name the server knows (else ``bad_field``): ``duplicate``,
every entrant plays each round's deal, in heats; ``arena``, for ``duration`` seconds entrants are paired
again as soon as a race ends. What a client shows of an event comes from EventInfo's fields (``summary``,
``pairing``, ``score_field``), never from the name."""
EventStatus = Literal["registration", "running", "finished", "cancelled"]
"""``cancelled``: the organiser called the event off before it started (no race was ever made)."""
RoundState = Literal["waiting", "opening", "open", "running", "done"]
"""``open``: the heats exist and wait for their entrants until ``starts_at``; ``running``: the heats
race; ``done``: the round is scored (the next opens after the break)."""
EventName = Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
RoundStatus = Literal["finished", "racing", "gave_up", "no_show", "absent", "bye"]
"""An entrant's round in an event: a :data:`FinalStatus`, ``no_show`` (drawn into a heat, never
joined it), ``absent`` (not drawn: entered later, or withdrew) or ``bye`` (a Swiss round's odd one out:
in the round, in no race)."""
ArenaStatus = Literal["waiting", "playing", "paused"]
"""An arena entrant: ``waiting`` to be paired, ``playing`` its race, ``paused`` (missed a race: entering
again resumes it)."""
LiveStatus = Literal["waiting", "ready", "racing", "blocked", "finished", "gave_up", "disconnected", "not_joined"]
"""An entrant of a round under way as its heat's table shows it (a :data:`PlayerStatus`), or
``not_joined``."""


class EntryConditions(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Who may enter an event (lichess's tournament conditions): a second account made for the day cannot.

    Checked when an account enters (``entry_conditions_unmet`` says what is missing, in the player's words);
    an account that met them once stays entered. Ratings are the shown rating in the event's variant."""

    min_rated_races: Annotated[int, msgspec.Meta(ge=0, le=100_000)] = 0
    """Finished rated races in the event's variant, at least."""
    min_account_age: Annotated[int, msgspec.Meta(ge=0, le=10 * 365 * 86_400)] = 0
    """Seconds since the account was registered, at least."""
    min_rating: Union[Annotated[int, msgspec.Meta(ge=-10_000, le=10_000)], None] = None
    """The shown rating in the event's variant, at least (an account not rated there has none: refused)."""
    max_rating: Union[Annotated[int, msgspec.Meta(ge=-10_000, le=10_000)], None] = None
    """The shown rating in the event's variant, at most (an account not rated there counts as new: 1000)."""


class EventCreate(msgspec.Struct, kw_only=True):
    """``POST /events`` (organiser token): a new event, open for entries."""

    name: EventName
    format: EventFormat = "duplicate"
    variant: str = "forty-thieves"
    rounds: Annotated[int, msgspec.Meta(ge=1, le=50)] = 3
    heat_size: Annotated[int, msgspec.Meta(ge=2, le=500)] = 8
    """Most racers in one race of a round; a larger field races in several heats on the same deal."""
    time_limit: TimeLimit = 600
    """Seconds each round's races last."""
    join_seconds: Annotated[int, msgspec.Meta(ge=1, le=3600)] = 60
    """Seconds between a round's heats being drawn and their start: entrants join their heat then."""
    break_seconds: Annotated[int, msgspec.Meta(ge=0, le=86_400)] = 30
    """Seconds between a round's scoring and the next round's heats."""
    deal_source: Literal["pool", "random"] = "pool"
    """Each round's deal: a checked deal from the private pool, or a secret random deal."""
    deals: Union[list[DealNumber], None] = None
    """The organiser's own deals (instead of ``deal_source``), secret until the end: a duplicate event's
    one per round; an arena's used in turn, race after race."""
    rated: bool = False
    late_entry: bool = True
    """Accounts may still enter once the event runs (they play from the next round)."""
    check_in: bool = False
    """Entrants must also check in (``POST /events/{id}/check-in``) before the start; those who have
    not are withdrawn when the organiser starts the event."""
    duration: Annotated[int, msgspec.Meta(ge=10, le=7 * 86_400)] = 1800
    """Arenas: seconds from the start during which entrants are paired (races under way then count)."""
    group_size: Annotated[int, msgspec.Meta(ge=2, le=8)] = 2
    """Arenas: racers per pairing (2: head-to-head). Swiss events race head to head only (2)."""
    starts_at: Union[Millis, None] = None
    """When the event starts by itself (registration is open until then; check-in closes then), in the
    future; null: the organiser starts it (``POST /events/{id}/start``, which may also start a scheduled
    one early)."""
    repeat: Union[Annotated[str, msgspec.Meta(min_length=1, max_length=100)], None] = None
    """A five-field cron expression (UTC): as each occurrence starts, the next is created with the same
    settings, starting at the next time it names. Needs ``starts_at``."""
    conditions: Union[EntryConditions, None] = None
    """Who may enter (null: any account); docs/events.md, "Fair play"."""


class EventCancel(msgspec.Struct, kw_only=True):
    """``POST /events/{id}/cancel`` (organiser token)."""

    series: bool = False
    """Also end the event's series: no further occurrences (an occurrence already running plays on)."""


class EventHeat(msgspec.Struct, kw_only=True):
    heat: int
    race: str
    code: str
    entrants: list[str]
    """The accounts drawn into this heat (lower-case names)."""


class EventRound(msgspec.Struct, kw_only=True):
    round: int
    starts_at: Millis
    heats: list[EventHeat]
    deal: Union[int, None] = None
    """Revealed once the event has finished (each race's results reveal it too)."""
    byes: list[str] = []
    """Entrants of the round in no heat (a Swiss round's odd one out), scored as its format says."""
    deal_text: Union[str, None] = None
    """``deal`` as a string (null with it): JavaScript's ``JSON.parse`` rounds numbers above 2^53, and
    deals go up to 2^63, so the event page reads this one. Always made from ``deal``, whatever was sent."""

    def __post_init__(self) -> None:
        self.deal_text = None if self.deal is None else str(self.deal)


class EventInfo(msgspec.Struct, kw_only=True):
    """``GET /events/{id}`` (and the answer of ``POST /events``)."""

    id: str
    name: str
    format: EventFormat
    variant: str
    rounds: int
    heat_size: int
    time_limit: int
    join_seconds: int
    break_seconds: int
    rated: bool
    late_entry: bool
    status: EventStatus
    round: int
    """The round under way or last played (0 before the first)."""
    round_state: RoundState
    created_at: Millis
    entrants: int
    version: Version = 0
    schedule: list[EventRound] = []
    """The rounds drawn so far, oldest first."""
    next_at: Union[Millis, None] = None
    """When the next round's heats are drawn (while the event runs and a round is done)."""
    duration: int = 0
    group_size: int = 0
    ends_at: Union[Millis, None] = None
    """Arenas: when pairing stops (set at the start)."""
    check_in: bool = False
    pairings: int = 0
    """Arenas: how many times waiting entrants were paired so far (each time one race or more)."""
    summary: str = ""
    """The event's shape in a few words, as its format says it ("3 rounds in heats of 8")."""
    pairing: bool = False
    """Entrants are paired again as their races end (an arena): no rounds; each ``schedule`` entry is one
    race, and each standings line names its entrant's ``race`` and ``status``."""
    score_field: Literal["matchpoints", "points", "score"] = "matchpoints"
    """The standings line field that ranks the entrants (and is shown as their score)."""
    tiebreaks: list[Literal["buchholz", "sonneborn_berger"]] = []
    """Further standings line fields that break ties of the score, in order (shown as columns): Swiss."""
    score_rule: str = ""
    """The scoring in a few words (a caption for the standings)."""
    deal_source: Literal["pool", "random", "deals"] = "pool"
    """Where the deals come from: the private pool, secret random deals, or the organiser's ``deals``."""
    conditions: Union[EntryConditions, None] = None
    """Who may enter (null: any account)."""
    deals: Union[list[int], None] = None
    """The organiser's ``deals``: null until the event is over (secret while anyone may still play one)."""
    starts_at: Union[Millis, None] = None
    """When the event starts by itself (null: when the organiser starts it)."""
    series: Union[str, None] = None
    """A recurring event's series id (the same for every occurrence); null for a one-off event."""
    occurrence: int = 0
    """Which occurrence of its series this is (1, 2, ...; 0: not one of a series)."""
    repeat: Union[str, None] = None
    """The series' cron schedule; null once the series is cancelled (no further occurrences)."""
    next_event: Union[str, None] = None
    """The series' next occurrence, once made (as this one starts or is cancelled)."""


EntryOutcome = Literal["entered", "already_entered", "resumed", "checked_in", "withdrawn"]
"""What an entry request did: ``entered`` (a new entry, or again after a withdrawal), ``already_entered``
(nothing changed), ``resumed`` (an arena entrant paused for missing a race is paired again),
``checked_in``, ``withdrawn``."""


class EventEntry(msgspec.Struct, kw_only=True):
    """The answer of entering, checking in or withdrawing."""

    event: str
    account: str
    name: str
    from_round: int
    """The first round the entrant plays."""
    withdrawn: bool = False
    checked_in: bool = False
    """Checked in (or entered once the event ran: a late entrant is there by entering)."""
    outcome: EntryOutcome = "entered"
    """What this request did (servers before this field left it out)."""


class EventRoundScore(msgspec.Struct, kw_only=True):
    """One entrant's round: its race result and the matchpoints it earned there."""

    round: int
    race: Union[str, None]
    heat: Union[int, None]
    status: RoundStatus
    """``finished``, ``racing`` (stopped by the clock), ``gave_up``, ``no_show`` or ``absent`` (not in the round)."""
    home: int
    time_ms: Union[int, None]
    """From the race's start to the win (None: no win)."""
    matchpoints: float


class EventStandingLine(msgspec.Struct, kw_only=True):
    rank: int
    account: str
    name: str
    matchpoints: float
    home: int
    """Cards home over every round (the first tie-break)."""
    time_ms: int
    """Time over every round (the second tie-break): a win's time, else the round's whole time limit."""
    withdrawn: bool = False
    rounds: list[EventRoundScore] = []
    points: Union[int, None] = None
    """Arenas: points by place (a win 2, a tie for first or a place in the top half 1, doubled on fire)."""
    wins: int = 0
    races: int = 0
    streak: int = 0
    """Arenas: wins in a row; from 2 the entrant is on fire (its points count double)."""
    status: Union[ArenaStatus, Literal[""]] = ""
    """Arenas: ``waiting`` (to be paired), ``playing``, ``paused`` (missed a race: enter again to come back)."""
    race: Union[str, None] = None
    """Arenas: the race the entrant is paired into now (join it with the account key)."""
    score: Union[float, None] = None
    """Swiss: points (a win 1, a tie ½, a bye 1)."""
    buchholz: Union[float, None] = None
    """Swiss: the sum of the entrant's opponents' points (the first tie-break)."""
    sonneborn_berger: Union[float, None] = None
    """Swiss: the points of the opponents it beat, plus half those of the opponents it tied (the second)."""


class EventStandings(msgspec.Struct, kw_only=True):
    """``GET /events/{id}/standings``: best first; ties share a rank."""

    event: str
    status: EventStatus
    round: int
    round_state: RoundState
    version: Version
    lines: list[EventStandingLine]


class EventLiveLine(msgspec.Struct, kw_only=True):
    """One entrant in a heat of the round under way, as its race's table shows it now."""

    account: str
    heat: int
    race: str
    status: LiveStatus
    """The race's status of the entrant (racing, finished, gave_up, disconnected ...), or ``not_joined``."""
    home: int
    matchpoints: float
    """What the round would give it if the heats ended now (against every heat's live table)."""


class EventLive(msgspec.Struct, kw_only=True):
    """One frame of ``GET /events/{id}/stream``: the event, its standings, the round under way live."""

    event: EventInfo
    standings: EventStandings
    live: list[EventLiveLine]
    server_time: Millis


class DailyPlay(msgspec.Struct, kw_only=True):
    """``POST /daily/{variant}``: the account's race on today's deal (the same race if asked again)."""

    variant: str
    date: str
    """The UTC day, ``YYYY-MM-DD``."""
    race: str
    code: str
    time_limit: int
    reveal_at: Millis
    """When the deal and everyone's games are revealed (the day's end, UTC)."""


class DailyLine(msgspec.Struct, kw_only=True):
    rank: int
    account: str
    name: str
    status: str
    """``finished``, ``racing`` (stopped by the clock), ``gave_up`` or ``playing`` (under way now)."""
    home: int
    time_ms: Union[int, None] = None
    """From the account's own start to its win."""
    race: str
    moves: Union[list[str], None] = None
    """The account's game, once the day is over."""
    counted: bool = True
    """False: the account does not meet the server's daily condition (docs/events.md, "Fair play"); its
    line is ranked after every counted one."""


class FairPlayDecision(msgspec.Struct, kw_only=True):
    """One deviation from the natural move that the stock's true order settles (docs/events.md, "Fair play")."""

    ply: int
    """The move's index in the game's record (0-based, undos counted)."""
    move: str
    natural: str
    """The move the solver's ordering (and a greedy player) would have taken."""
    position: str
    """The position before the move (shared.position's notation)."""
    unseen: list[str]
    """The stock cards the player had not seen yet, in their true order (next first)."""
    chosen_wins: bool
    natural_wins: bool
    chosen_share: float
    """The share of sampled orders of the unseen cards on which the chosen move wins: what the visible
    cards said of it."""
    natural_share: float
    foresight: bool


class FairPlayGame(msgspec.Struct, kw_only=True):
    """One finished game on a shared deal, analysed after its race (never on the move path)."""

    race: str
    seat: int
    account: Union[str, None]
    name: str
    status: str
    home: int
    moves: list[str]
    stock_seen: int = 0
    """Stock cards the player had drawn into sight by the end (of ``stock_size``)."""
    stock_size: int = 0
    plays_while_drawing: int = 0
    """Moves other than draws made before it had seen three quarters of the stock (-1: it never did)."""
    elapsed_ms: Union[int, None] = None
    """From the race's start to the player's end (a give-up or a finish)."""
    decisions: int = 0
    deviations: int = 0
    foresight: int = 0
    costly: int = 0
    stored_line_share: float = 0.0
    undos: int = 0
    settled: list[FairPlayDecision] = []
    cpu_seconds: float = 0.0
    complete: bool = True
    public_deal: bool = False
    """The deal is one of the shipped public pool's, whose winning line anyone may read: following it is
    no sign of foresight, so neither foresight nor the stored line is flagged on it."""


class FairPlayFlag(msgspec.Struct, kw_only=True):
    """A flag for the organiser (or, for the daily deal, the server's operator) to look at: never a
    penalty by itself."""

    kind: Literal["scouting", "linked", "foresight", "stored_line"]
    account: Union[str, None]
    name: str
    race: Union[str, None] = None
    why: str
    """The statistic against its threshold, in words."""
    statistic: float
    threshold: float
    moves: list[str] = []
    """The game's moves in the game's notation (``U`` = undo)."""
    position: Union[str, None] = None
    """The position of the first flagged decision (foresight)."""
    unseen: list[str] = []
    """What was unseen there, in the true order."""
    decisions: list[FairPlayDecision] = []
    linked: list[str] = []
    """The other accounts on the same deal this one is linked to (same registration address, or
    registered together)."""


class FairPlayReport(msgspec.Struct, kw_only=True):
    """``GET /events/{id}/fairplay`` (organiser) and ``GET /daily/{variant}/fairplay?date=`` (organiser)."""

    scope: str
    """``event:<id>`` or ``daily:<variant>:<date>``."""
    analysed: int
    """Finished games analysed."""
    waiting: int
    """Games not analysed yet: their race is still under way (or the analysis' time ran out: ask again)."""
    cpu_seconds: float
    """Solver CPU the analyses took (each game's once: they are kept)."""
    flags: list[FairPlayFlag]


class DailyBoard(msgspec.Struct, kw_only=True):
    """``GET /daily/{variant}?date=``: by finish time, then cards home; the deal once the day is over."""

    variant: str
    date: str
    revealed: bool
    lines: list[DailyLine]
    deal: Union[int, None] = None
