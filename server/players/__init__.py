"""Players who last from race to race: accounts and their keys, history, ratings and the HTTP
endpoints that show them. The Redis side is in ``server/store`` (accounts.py, history.py)."""
