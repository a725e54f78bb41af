"""``thieves challenge NAME`` and ``thieves challenges``: invite an account to a race of two, and see or
answer the challenges of yours (docs/protocol.md, "Challenges").

Both sides wait by asking the server about once a second (:data:`POLL_SECONDS`): the challenger's
``thieves challenge`` until the answer comes (counting down the time left), then it plays the race;
``thieves challenges --wait`` until a challenge arrives, then on a terminal it asks for a key to accept
or decline it. ``thieves challenges accept ID`` makes the race and plays it.

A waiting challenger who leaves (q, Ctrl-C, a closed terminal) cancels the challenge on the server, so
the other side never accepts a race nobody will come to; the server also withdraws a challenge whose
challenger stopped asking about it (a killed process), as its asking is what keeps it open.
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
from typing import TYPE_CHECKING, Any, Callable, TypeVar

from client_cli.commands.netargs import add_server_option, refused, server_of
from client_cli.terminal_keys import KeyReader
from shared import protocol as p
from shared.variants import DEFAULT_VARIANT, VARIANTS

if TYPE_CHECKING:
    from client_cli.local_store import Account, LocalStore

T = TypeVar("T")
POLL_SECONDS = 1.0
"""How often a waiting command asks the server (a small read; see docs/protocol.md for why not a push)."""


def register(sub: argparse._SubParsersAction) -> None:
    one = sub.add_parser(
        "challenge",
        help="challenge an account to a race of two, wait for the answer, then play it",
        description="Invite the account NAME to a race of two (a checked deal by default). The command waits "
        "for the answer, counting down the time left (the server's --challenge-time, 2 minutes by default; "
        "q, Ctrl-C or closing the terminal cancels the challenge) and plays the race once it is accepted: "
        "both press s in the lobby to start. Exit 0 raced (or, with --no-play, accepted), 1 declined, "
        "expired, cancelled or refused, 2 a bad argument, 130 Ctrl-C.",
    )
    one.add_argument("name", metavar="NAME", help="the account to challenge")
    one.add_argument("--variant", "-v", default=DEFAULT_VARIANT.key, choices=list(VARIANTS))
    one.add_argument("--time-limit", type=int, default=900, metavar="S", help="seconds of the race (default 900)")
    one.add_argument("--rated", action="store_true", help="a rated race (both ratings change)")
    one.add_argument("--no-undo", action="store_true", help="no undo in the race")
    one.add_argument("--hints", action="store_true", help="allow hints (a racer who takes one is marked †)")
    one.add_argument("--deal", choices=["pool", "random"], default=None,
                     help="pool: a checked deal, proved winnable (the default); random: a secret random deal")
    one.add_argument("--no-play", action="store_true", help="print the race's join code once accepted, do not play")
    add_server_option(one)
    one.set_defaults(func=run_challenge)

    many = sub.add_parser(
        "challenges",
        help="your open challenges; accept, decline or cancel one",
        description="list (the default): the challenges you received and sent that are still open, each with "
        "its ID (--wait: wait until one arrives, then on a terminal a accepts it and d declines it). accept ID: "
        "the race is made, and played here (--no-play: its join code printed). decline ID: say no. cancel ID: "
        "withdraw one you sent. Exit 0 done, 1 refused.",
    )
    many.add_argument("action", nargs="?", default="list", choices=["list", "accept", "decline", "cancel"])
    many.add_argument("id", nargs="?", default=None, metavar="ID", help="the challenge (accept, decline, cancel)")
    many.add_argument("--wait", action="store_true", help="list: wait until a challenge to you arrives")
    many.add_argument("--no-play", action="store_true", help="accept: print the race's join code, do not play")
    add_server_option(many)
    many.set_defaults(func=run_challenges)


def _account(command: str, server: str) -> "Account | None":
    """The account kept for the server, or None after saying why a challenge needs one."""
    from client_cli.local_store import LocalStore

    account = LocalStore().account(server)
    if account is None:
        print(f"thieves {command}: challenges are between accounts: `thieves register NAME` makes one for "
              f"{server}", file=sys.stderr)
    return account


def describe(c: p.Challenge) -> str:
    """A challenge's settings in a few words."""
    from shared.variants import get_variant

    minutes, seconds = divmod(c.time_limit, 60)
    clock = f"{minutes}:{seconds:02d}"
    extras = [w for w, on in (("rated", c.rated), ("no undo", not c.undo), ("hints", c.hints)) if on]
    deal = "a checked deal" if c.deal_source == "pool" else "a random deal"
    return f"{get_variant(c.variant).name}, {clock}, {deal}" + "".join(f", {w}" for w in extras)


def _left(c: p.Challenge) -> str:
    return f"{max(0, round((c.expires_at - time.time() * 1000) / 1000))} s left"


def run_challenge(args: argparse.Namespace) -> int:
    from client_cli import api

    if refused("challenge", (p.ChallengeCreate, "time_limit", args.time_limit, "--time-limit")):
        return 2
    server = server_of(args)
    account = _account("challenge", server)
    if account is None:
        return 1
    create = p.ChallengeCreate(to=args.name, variant=args.variant, time_limit=args.time_limit, rated=args.rated,
                               undo=not args.no_undo, hints=args.hints, deal_source=args.deal)
    try:
        sent = api.challenge(server, account.key, create)
    except api.ApiError as exc:
        print(f"thieves challenge: cannot challenge {args.name}: {exc.words()}", file=sys.stderr)
        return 1
    print(f"challenged {sent.challenged} to {describe(sent)} (challenge {sent.id}); waiting for the answer, "
          f"{_left(sent)} (q or Ctrl-C cancels it)", flush=True)
    hang_up = HangUp()
    hung_up = {sig: signal.signal(sig, hang_up) for sig in (signal.SIGHUP, signal.SIGTERM)}
    line = StatusLine()
    try:
        with KeyReader() as keys:
            try:
                answer = _wait(lambda: api.challenge_status(server, account.key, sent.id),
                               lambda c: c.status != "open", keys,
                               lambda c: f"waiting for {c.challenged}'s answer: {_left(c)} · q cancels", line)
            except BaseException:
                hang_up.leaving = True  # a signal before this line is raised here, still inside the outer try
                raise
    except (KeyboardInterrupt, Left, EOFError) as exc:
        line.say()
        try:
            api.answer_challenge(server, account.key, sent.id, "cancel")
            line.say("challenge cancelled", error=True)
        except api.ApiError as exc2:
            line.say(f"thieves challenge: could not cancel it: {exc2.words()}", error=True)
        return 130 if isinstance(exc, KeyboardInterrupt) else 1
    except api.ApiError as exc:
        line.say(f"thieves challenge: {exc.words()}", error=True)
        return 1
    finally:
        for sig, handler in hung_up.items():
            signal.signal(sig, handler)
    line.say()
    if answer.status != "accepted" or answer.code is None:
        why = {"declined": f"{answer.challenged} declined your challenge",
               "expired": f"{answer.challenged} did not answer in time: the challenge expired",
               "cancelled": "the challenge was cancelled"}[answer.status]
        print(f"thieves challenge: {why}", file=sys.stderr)
        return 1
    print(f"{answer.challenged} accepted: race {answer.code}", flush=True)
    return _play(args, answer.code)


class Left(BaseException):
    """The waiting player left: ``q``, or the terminal closed (SIGHUP) or the process was told to end.
    A BaseException, as KeyboardInterrupt is: raised by a signal in the middle of a request, it must not
    be taken for a server out of reach (which is asked again)."""


class HangUp:
    """The SIGHUP and SIGTERM handler while a challenge waits: the first signal raises :class:`Left`, and
    none after the wait has ended another way. A closed window both ends the key reader's input (EOF) and
    sends SIGHUP, in either order and microseconds apart: a Left raised once the wait had ended would
    escape the cancel, and the challenge would stay open on the server until its lease ran out."""

    def __init__(self) -> None:
        self.leaving = False

    def __call__(self, signum: int, frame: Any) -> None:
        if not self.leaving:
            self.leaving = True
            raise Left(signal.Signals(signum).name)


class StatusLine:
    """One line rewritten in place while a command waits (on a terminal only: a pipe gets no line a
    second), and the lines printed after it; a terminal already gone is no reason to fail."""

    def __init__(self) -> None:
        self.shown = False

    def show(self, text: str) -> None:
        """Rewrite the line; raises :class:`Left` when the terminal was closed under us (EIO)."""
        if sys.stdout.isatty():
            try:
                sys.stdout.write("\r\x1b[K" + text)
                sys.stdout.flush()
            except OSError as exc:
                raise Left("the terminal closed") from exc
            self.shown = True

    def say(self, text: str = "", error: bool = False) -> None:
        """End the line, if one is shown, then print ``text`` (if any) on a line of its own."""
        try:
            if self.shown:
                sys.stdout.write("\n")
                sys.stdout.flush()
                self.shown = False
            if text:
                print(text, file=sys.stderr if error else sys.stdout, flush=True)
        except OSError:  # the terminal is gone: the cancel still went to the server
            pass


def _wait(ask: Callable[[], T], done: Callable[[T], bool], keys: KeyReader | None = None,
          shown: Callable[[T], str] | None = None, line: StatusLine | None = None) -> T:
    """Ask every :data:`POLL_SECONDS` until ``done``; a server out of reach a moment is asked again.
    ``shown``: the ``line`` to show of what was seen (a countdown); with ``keys``, ``q`` raises
    :class:`Left`."""
    from client_cli import api

    while True:
        try:
            seen = ask()
            if done(seen):
                return seen
            if shown is not None and line is not None:
                line.show(shown(seen))
        except api.ApiError as exc:
            if exc.code is not None:  # the server refused: asking again changes nothing
                raise
        if keys is None:
            time.sleep(POLL_SECONDS)
        elif keys.wait(POLL_SECONDS) in ("q", "Q"):
            raise Left("q")


def _play(args: argparse.Namespace, code: str) -> int:
    if args.no_play:
        print(f"join it with: thieves play {code}")
        return 0
    from client_cli.commands import play as play_cmd

    return play_cmd.run(argparse.Namespace(race=code, name=None, anonymous=False, creator_token=None,
                                           server=args.server))


def run_challenges(args: argparse.Namespace) -> int:
    from client_cli import api

    if (args.id is None) != (args.action == "list"):
        print("thieves challenges: an ID goes with accept, decline and cancel (and only with them)", file=sys.stderr)
        return 2
    server = server_of(args)
    account = _account("challenges", server)
    if account is None:
        return 1
    if args.action != "list":
        return _answer(args, server, account.key, args.id, args.action)
    try:
        if not args.wait:
            print("\n".join(list_lines(api.challenges(server, account.key))))
            return 0
        with KeyReader() as keys:
            listed = _wait_for_incoming(server, account.key)
            print("\n".join(list_lines(listed)), flush=True)
            if not keys.tty:  # a program reads the list: the IDs are there to answer with
                return 0
            newest = listed.incoming[0]
            print(f"a accepts the challenge of {newest.challenger}, d declines it, any other key leaves it open",
                  flush=True)
            choice = keys.wait(None)
    except api.ApiError as exc:
        print(f"thieves challenges: cannot list them: {exc.words()}", file=sys.stderr)
        return 1
    action = {"a": "accept", "d": "decline"}.get((choice or "").lower())
    if action is None:
        print(f"left open: thieves challenges accept {newest.id} (or decline {newest.id})")
        return 0
    return _answer(args, server, account.key, newest.id, action)


def _answer(args: argparse.Namespace, server: str, key: str, ident: str, action: str) -> int:
    """Accept (and play, unless --no-play), decline or cancel the challenge ``ident``."""
    from client_cli import api

    try:
        answer = api.answer_challenge(server, key, ident, action)
    except api.ApiError as exc:
        print(f"thieves challenges: cannot {action} {ident}: {exc.words()}", file=sys.stderr)
        return 1
    if action == "decline":
        print(f"declined the challenge of {answer.challenger}")
        return 0
    if action == "cancel":
        print(f"cancelled your challenge to {answer.challenged}")
        return 0
    assert answer.code is not None
    print(f"accepted the challenge of {answer.challenger}: race {answer.code}", flush=True)
    return _play(args, answer.code)


def _wait_for_incoming(server: str, key: str) -> p.ChallengeList:
    from client_cli import api

    print("waiting for a challenge (Ctrl-C stops)", flush=True)
    return _wait(lambda: api.challenges(server, key), lambda listed: bool(listed.incoming))


def list_lines(listed: p.ChallengeList) -> list[str]:
    """The account's open challenges, one line each with its ID."""
    out = [] if listed.accepting else ["you refuse challenges (`thieves account challenges on` takes them)"]
    out.append("challenges to you:" if listed.incoming else "no open challenge to you")
    out += [f"  {c.id}  from {c.challenger}: {describe(c)} ({_left(c)})" for c in listed.incoming]
    out.append("challenges you sent:" if listed.outgoing else "no open challenge from you")
    out += [f"  {c.id}  to {c.challenged}: {describe(c)} ({_left(c)})" for c in listed.outgoing]
    if listed.incoming:
        out.append("answer with: thieves challenges accept ID (or decline ID)")
    return out


def account_setting(args: argparse.Namespace, server: str, store: "LocalStore") -> int:
    """``thieves account challenges [on|off]``: take challenges, refuse them all, or say which."""
    from client_cli import api

    account = store.account(server)
    if account is None:
        print(f"thieves account: no account is kept for {server} (`thieves register NAME` makes one)",
              file=sys.stderr)
        return 1
    if args.key not in (None, "on", "off"):
        print("thieves account: challenges takes on or off", file=sys.stderr)
        return 2
    try:
        if args.key is None:
            accepting = api.challenges(server, account.key).accepting
        else:
            accepting = api.set_challenges(server, account.name, account.key, args.key == "on").accept
    except api.ApiError as exc:
        print(f"thieves account: {exc.words()}", file=sys.stderr)
        return 1
    print(f"{account.name} takes challenges" if accepting else f"{account.name} refuses every challenge")
    return 0
