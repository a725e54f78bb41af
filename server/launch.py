"""``thieves-server``'s entry point: a Ctrl-C while the server's modules still load stops it quietly too.

Importing :mod:`server.main` and its libraries takes a second or more on a busy machine; a terminal's
Ctrl-C then raised ``KeyboardInterrupt`` in the import, before :func:`server.main.main` could catch it,
and printed a traceback.
"""

from __future__ import annotations

import sys


def main() -> int:
    """Load the server, then run it (:func:`server.main.main`); a Ctrl-C during the load is one line."""
    try:
        from .main import main as serve
    except KeyboardInterrupt:
        print("thieves-server: stopped (Ctrl-C while starting)", file=sys.stderr)
        return 0
    return serve()
