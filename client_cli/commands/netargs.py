"""The ``--server`` option every network command shares, read by one parser."""

from __future__ import annotations

import argparse
import os

from client_cli.api import DEFAULT_SERVER, SERVER_ENV, ServerAddressError, server_url


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
