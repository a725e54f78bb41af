"""``thieves seek``: find a race now, with whoever else is looking (docs/protocol.md "Seeks").

The seek waits on its own WebSocket (the ``websockets`` sync client, whose thread answers the
server's pings) while a small screen shows the pool, how many wait, the rating gap accepted now and
the time waited; ``q`` or Ctrl-C cancels the seek on the server. When the server forms a race, the
normal play table joins it with the seat's token and says ready at once. The seek's connection stays
open while the race's lobby fills: should a partner not come, the server puts the seek back in its
pool and the waiting screen comes back.
"""

from __future__ import annotations

import argparse
import queue
import sys
import threading
import time
from typing import TYPE_CHECKING, Any

from client_cli.commands.netargs import add_server_option, run_race_app, server_of
from shared import protocol as proto
from shared.seeks import SEEK_SEATS, SEEK_TIME_LIMIT

if TYPE_CHECKING:
    from client_cli.seek_app import SeekPlayApp


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "seek",
        help="find a race now: wait for players close to your rating, then play",
        description="Wait in the server's pool for a race of that variant, size, clock and ratedness; the "
        "server forms races of players close in rating (the gap accepted widens the longer you wait) and "
        "you play yours at once. q or Ctrl-C cancels the seek. With an account kept for the server you "
        "seek as that account (rated pools need one); without, give --name.",
    )
    p.add_argument("--variant", default="forty-thieves", help="the game (see `thieves variants`)")
    p.add_argument("--seats", type=int, default=2,
                   help=f"players in the race, {SEEK_SEATS[0]} to {SEEK_SEATS[1]} (default 2)")
    p.add_argument("--time-limit", type=int, default=300,
                   help=f"seconds the race lasts, {SEEK_TIME_LIMIT[0]} to {SEEK_TIME_LIMIT[1]} (default 300)")
    p.add_argument("--rated", action="store_true", help="a rated race (accounts only)")
    p.add_argument("--name", "-n", default=None, help="your name, without an account")
    p.add_argument("--anonymous", action="store_true", help="seek without the account kept for this server")
    add_server_option(p)
    p.set_defaults(func=run)


class SeekLink:
    """The seek's connection: frames read by a thread into a queue the screen drains."""

    def __init__(self, server: str, seek: proto.Seek) -> None:
        from websockets.sync.client import connect

        from client_cli.connection import websocket_url

        self.ws = connect(websocket_url(server), compression=None, max_size=2**20, open_timeout=10)
        self.frames: queue.Queue[Any] = queue.Queue()
        self.ws.send(proto.encode(seek))
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        try:
            while True:
                data = self.ws.recv()
                if isinstance(data, bytes):
                    self.frames.put(proto.decode_server(data))
        except Exception as exc:  # closed (the race started, or the server went): the screen says so
            self.frames.put(exc)

    def cancel(self) -> None:
        try:
            self.ws.send(proto.encode(proto.SeekCancel()))
        except Exception:
            pass

    def close(self) -> None:
        self.ws.close()


def waiting_words(s: proto.Seeking, local_start: float) -> str:
    """What the player waits for, in one line."""
    variant, seats, limit, kind = s.pool.split("/")
    waited = max(s.waited_ms / 1000, time.monotonic() - local_start)
    again = "back in the pool (a player did not come) · " if s.requeued else ""
    return (f"{again}seeking {variant}, {seats} players, {limit} s, {kind} · {s.waiting} waiting · "
            f"your rating {s.rating}, gap now ±{s.gap} · waited {waited:.0f} s")


def run(args: argparse.Namespace) -> int:
    from client_cli.local_store import LocalStore, StoreError
    from shared.seeks import out_of_range

    if (why := out_of_range(args.seats, args.time_limit)) is not None:  # the server's rule, checked before sending
        print(f"thieves seek: {why}", file=sys.stderr)
        return 2
    server = server_of(args)
    try:
        account = None if args.anonymous else LocalStore().account(server)
    except StoreError as exc:
        print(f"thieves seek: {exc}", file=sys.stderr)
        return 1
    if account is None and not args.name:
        print("thieves seek: --name NAME is needed without an account (or register one once: thieves register NAME)",
              file=sys.stderr)
        return 2
    seek = proto.Seek(variant=args.variant, seats=args.seats, time_limit=args.time_limit, rated=args.rated,
                      name=None if account is not None else args.name,
                      key=account.key if account is not None else None)
    while True:  # once more for each "seek again" (a) on a race's end screen, with the same settings
        try:
            link = SeekLink(server, seek)
        except Exception as exc:
            from client_cli.connection import failure_words

            print(f"thieves seek: no race server at {server}: {failure_words(exc)}", file=sys.stderr)
            return 1
        try:
            status, table = _seek_and_play(server, link, account.name if account is not None else args.name,
                                           account.key if account is not None else None)
        finally:
            link.close()
        if table is None or status != 0:
            return status
        if table.next_race is not None:  # every racer said yes to a rematch: as after `thieves play`
            from client_cli.commands.play import play_rematch

            return play_rematch(args, table.next_race)[0]
        if not table.seek_again:
            return status
        print("seeking again", flush=True)


def _seek_and_play(server: str, link: SeekLink, name: str, key: str | None) -> "tuple[int, SeekPlayApp | None]":
    """Wait for a race and play it: the exit status, and the race's table once one was played (None when
    the seek ended without one)."""
    from client_cli.seek_app import SeekApp, SeekPlayApp

    while True:
        app = SeekApp(link)
        app.run()
        if app.error is not None:
            print(f"thieves seek: {app.error}", file=sys.stderr)
            return (2 if app.error_code not in ("unavailable", "internal") else 1), None
        if app.matched is None:
            print("seek cancelled" if app.cancelled else "the seek ended")
            return (0 if app.cancelled else 1), None
        m = app.matched
        play = SeekPlayApp(link, server, m.race, name, key=key, token=m.token, auto_ready=True)
        status = run_race_app(play, "seek")
        if play.state.info is not None and play.state.info.status != "lobby" or play.state.results is not None:
            return status, play
        # The race never started (a player did not come): back to the waiting screen, which shows the
        # seek back in the pool, or says the seek ended.
        del status
