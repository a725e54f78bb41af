"""What spans races: the accounts' results. ``ratings.py`` computes a rated race's rating update
(openskill, pure); ``recorder.py`` applies a finished race to every account in it exactly once (history,
totals, ratings, leaderboards) through ``server/store/history.py``; ``http.py`` answers the profile,
history and leaderboard endpoints. Registering accounts and their keys is ``server/store/accounts.py``.
"""
