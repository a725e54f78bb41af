"""The formats the server plays, each one module that registers itself (server/events/format.py)."""

from . import arena, duplicate, swiss

__all__ = ["arena", "duplicate", "swiss"]
