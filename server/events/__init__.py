"""Tournament events: the formats' rules (pure: heats, matchpoints, standings), the runner that
moves every event along from any server process, and the HTTP endpoints. The Redis side is
``server/store/events.py``; the formats are explained with worked examples in docs/events.md."""
