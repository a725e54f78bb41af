"""Deals the server hands out: the checked-deal pool (``checked.py``: deals the solver proved winnable,
made ahead in worker processes and kept in Redis) and hints (``hinting.py``: the solver on a racer's
authoritative position, in worker processes off the event loop).

Layer (tests/test_layers.py): above the store, below races. Nothing here reveals a deal: the pool
hands a deal's number only to the race that plays it.
"""
