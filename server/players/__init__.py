"""The accounts' HTTP endpoints: ``registration.py`` (``POST /players``, a new key, is this key current),
``http.py`` (profile, history, leaderboard) and ``organiser.py`` (the organiser token of events). The
accounts themselves (keys, ratings, results) are in ``server/accounts``, below the races; finding an
opponent in ``server/matchmaking``."""
