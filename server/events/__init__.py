"""Tournament events: the formats, each one module behind one interface (``format.py``, ``formats/``,
listed once in ``formats/__init__.py``), what a format works with (``context.py``), what it is due to
do next (``due.py``, pure), the round machine of round-based formats (``rounds.py``), the runner that
hands every event to its format from any server process, the spectators' feeds, the HTTP endpoints,
and the daily deal. The states an event moves through are one table (shared/event_states.py) that
Redis enforces; the Redis side is ``server/store/events.py``; the formats are explained with worked
examples in docs/events.md. Built on the race service by the composition root, server/compose.py."""
