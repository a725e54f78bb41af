"""Players who last from race to race: accounts and their keys (``accounts.py``, ``registration.py``),
and their results: ``ratings.py`` computes a rated race's rating update (openskill, pure);
``recorder.py`` applies a finished race to every account in it exactly once (history, totals, ratings,
leaderboards); ``http.py`` answers the profile, history and leaderboard endpoints. The Redis side is in
``server/store`` (accounts.py, history.py)."""
