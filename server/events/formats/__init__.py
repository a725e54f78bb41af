"""The formats the server plays, each one module that registers itself (server/events/format.py)."""

from . import arena, duplicate

__all__ = ["arena", "duplicate"]
