"""The ``--server`` option every network command shares, read by one parser."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Any

from client_cli.api import DEFAULT_SERVER, SERVER_ENV, ServerAddressError, server_url
from client_cli.wording import argument_problem

if TYPE_CHECKING:
    import msgspec

    from client_cli.play_app import PlayApp
    from client_cli.watch_app import WatchApp


def add_server_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--server",
        default=None,
        metavar="URL",
        help=f"race server as host:port or http://host:port (default ${SERVER_ENV}, else {DEFAULT_SERVER})",
    )


def server_of(args: argparse.Namespace) -> str:
    """The server's base URL from ``--server``, ``$THIEVES_SERVER`` or the default.

    Raises :class:`ServerAddressError` naming where the bad text came from;
    :func:`client_cli.main.main` prints it and exits 2, for every command alike.
    """
    if args.server is not None:
        source, text = f"--server {args.server}", args.server
    elif os.environ.get(SERVER_ENV):
        text = os.environ[SERVER_ENV]
        source = f"${SERVER_ENV} ({text})"
    else:
        source, text = "the default server", DEFAULT_SERVER
    try:
        return server_url(text)
    except ServerAddressError as exc:
        raise ServerAddressError(f"{source}: {exc}") from None


def refused(command: str, *checks: "tuple[type[msgspec.Struct], str, Any, str]") -> bool:
    """Check what the player typed against the protocol's limits; print the first problem.

    ``checks`` are ``(struct, field, value, label)`` as in
    :func:`client_cli.wording.argument_problem`. The caller exits 2 when this
    returns ``True``, before anything is sent.
    """
    problem = argument_problem(*checks)
    if problem is not None:
        print(f"thieves {command}: {problem}", file=sys.stderr)
    return problem is not None


def run_race_app(app: "PlayApp | WatchApp", command: str) -> int:
    """Run a race screen to its end; the exit status, and on failure why, on stderr.

    After the screen closes, the reason stays in the terminal for the record.
    """
    app.run()
    if app.state.fatal:
        print(f"thieves {command}: {app.state.fatal}", file=sys.stderr)
        return 1
    if not app.link.ever_online:
        print(f"thieves {command}: quit before the server at {app.link.server} answered", file=sys.stderr)
        return 1
    return 0
