"""Finding an opponent, built on races beside the events: ``seeks.py`` (the rated pools: find me a race
now), ``challenges.py`` (by name) and ``rematches.py`` (the same racers again). Each makes its races
through the race service it is given; the Redis side is in ``server/store`` (seeks.py, challenges.py)."""
