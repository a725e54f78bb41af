"""Fair play on shared deals (docs/events.md, "Fair play"): entry conditions, and flags computed after the
race for the organiser (never automatic penalties, never on the move path).

Modules: ``conditions`` (who may enter an event, who counts on the daily board), ``scouting`` (an entrant
who draws through the stock and stops), ``linked`` (accounts registered together or from one address on
the same deal), ``foresight`` (choices good only given the unseen stock: runs in the solver workers),
``report`` (an event's or a daily deal's flags, analysed once per race and kept), ``http`` (the endpoints).
"""
