"""Running the server: logs, metrics, limits and the process's edges.

Two kinds of module, in two layers (tests/test_layers.py): helpers every layer may use (``log.py``,
``metrics.py``, ``ratelimit.py``, ``limits.py``, ``collector.py``: the garbage collector's tuning),
and the process's own parts, used only by the composition root and ``server/main.py``
(``edge.py``: connection counting and read deadlines; ``websocket.py``: the race connection's frames
below Starlette; ``workers.py``: the solver's worker processes; ``embedded.py``: the embedded Redis;
``dependencies.py``: the libraries the transport builds on, held to their tested versions).
"""
