"""The formats the server plays: :data:`ALL`, the one list (server/events/format.py's ``Formats`` is
built from it by the composition root). A new format is one module here behind the ``Format``
interface, plus its line in this list."""

from ..format import Format
from .arena import ARENA
from .duplicate import DUPLICATE
from .swiss import SWISS

ALL: tuple[Format, ...] = (DUPLICATE, ARENA, SWISS)
"""Every format this server plays, in the order they are documented (docs/events.md)."""

__all__ = ["ALL", "ARENA", "DUPLICATE", "SWISS"]
