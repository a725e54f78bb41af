"""Races: a race's rules, its seats and the connections that play and watch it, in this process.

``rules.py`` says what a race is (its settings, phases and results) and ``tokens.py`` what a seat's
token proves; ``session.py`` decides about a seat's frames without I/O (the model for the rest);
``connection.py`` is the socket as a pump around it (``writer.py`` its sending half, ``outbox.py`` the one
slow-reader rule), ``frames.py`` and ``seat.py`` what each frame does, ``seating.py`` and ``welcome.py``
a hello's seat and welcome, ``lobby.py`` the seek handler's protocol; ``hub.py`` fans one race's progress out to its
listeners in this process, sending what ``frame_plan.py`` plans without I/O, on the clocks of ``ticker.py``; ``service.py`` holds this process's hubs, the pub/sub subscription, presence
and the periodic work; ``table.py`` the progress lines this process knows and their version; ``clock.py`` the one clock.

Layer (tests/test_layers.py): above the store and the deal pool, below players, events and the web.
All state is in Redis (``server/store``); what this package keeps is a cache of it for the
connections this process serves.
"""
