"""Players who last from race to race, below the races: their names and keys (``keys.py``), the rating
update of a rated race (``ratings.py``, openskill, pure), and a finished race applied to every account in
it exactly once (``recorder.py``; ``results.py`` runs it as each race ends and sweeps what a crash left).

Why below the race layer: a race checks a player's key when it seats them, and the race layer must not
import anything built on races. A race's end reaches ``results.py`` through the callback the composition
root (server/compose.py) hands the race service, never through an import. The Redis side is in
``server/store`` (accounts.py, history.py)."""
