"""Players who last from race to race: accounts and their keys (``accounts.py``, ``registration.py``),
and their results: ``ratings.py`` computes a rated race's rating update (openskill, pure);
``recorder.py`` applies a finished race to every account in it exactly once (history, totals, ratings,
leaderboards); ``http.py`` answers the profile, history and leaderboard endpoints. Finding an opponent:
``seeks.py`` (the rated pools: find me a race now), ``challenges.py`` (by name) and ``rematches.py``. The
Redis side is in ``server/store`` (accounts.py, history.py, seeks.py, challenges.py)."""
