"""The current screen of a running textual app as plain text.

Tests assert on what a player would read, and the README's captures come
from the same place; colours are dropped, characters kept.
"""

from __future__ import annotations

import io

from rich.console import Console
from textual.app import App


def screen_text(app: App) -> str:
    """Every row of the app's current screen (modal screens over their background)."""
    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), record=True, color_system=None)
    console.print(app.screen._compositor.render_update(full=True, screen_stack=app._background_screens))
    return "\n".join(line.rstrip() for line in console.export_text(styles=False).splitlines())
