"""The ``--server`` option every network command shares."""

from __future__ import annotations

import argparse

from client_cli.api import DEFAULT_SERVER, SERVER_ENV, default_server


def add_server_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--server",
        default=None,
        metavar="URL",
        help=f"race server (default ${SERVER_ENV}, else {DEFAULT_SERVER})",
    )


def server_of(args: argparse.Namespace) -> str:
    return args.server or default_server()
