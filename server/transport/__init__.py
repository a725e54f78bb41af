"""The transport: how sockets reach the app. ``edge.py`` counts and times uvicorn's HTTP connections (the
connection edge: limits, deadlines, typed refusals), ``websocket.py`` is uvicorn's websockets protocol
with the race connection's backlog and frame reading.

Why a package of its own, at the top beside the composition root: it subclasses uvicorn's protocols and
answers refusals the way the app does (server/answers.py), so it sits above every layer it serves; the
plain operations helpers it uses (server/ops/) stay at the bottom, importing nothing of ours above.
"""
