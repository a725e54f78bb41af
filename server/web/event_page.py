"""``/event/{id}``: a tournament event's page: its standings, the round under way live, its heats.

The first frame is computed as ``GET /events/{id}/stream`` computes each of
its frames (server/events/feed.py), so the page and the stream never show
two different things; static/event.js then redraws from the stream's whole
frames (no resume is needed: each frame is the whole event).
"""

from __future__ import annotations

import msgspec
from starlette.requests import Request
from starlette.responses import Response

from shared import protocol as p
from shared.event_words import race_word, score_word
from shared.scoring import ON_FIRE

from ..answers import tournaments_of
from .render import not_found, render, variant_name


async def event(request: Request) -> Response:
    t = tournaments_of(request)
    ref = request.path_params["event"]
    meta = await t.events.meta(ref)
    if meta is None:
        return not_found(p.ErrorCode.EVENT_NOT_FOUND, f"No event has the id {ref!r}.")
    if (why := t.formats.unplayable(meta)) is not None:
        return render("error.html", 503, title="Not available", error_code=p.ErrorCode.UNAVAILABLE.value,
                      message=why[0].upper() + why[1:] + ".")
    frame = await t.feeds.frame(meta.id)  # a fresh feed: a frame at once, however quiet
    assert frame is not None
    live = msgspec.json.decode(frame, type=p.EventLive)
    current = [r for r in live.event.schedule if r.round == live.event.round]
    drawn = current[-1] if current and not live.event.pairing else None
    words = event_words(live.event)
    state = {**msgspec.json.decode(frame), "stream": f"/events/{meta.id}/stream",
             "variant_name": variant_name(live.event.variant), "words": words, "on_fire": ON_FIRE}
    codes = {heat.race: heat.code for r in live.event.schedule for heat in r.heats}
    return render("event.html", title=live.event.name, live=live, heats=drawn.heats if drawn else [],
                  codes=codes, on_fire=ON_FIRE,
                  byes=drawn.byes if drawn else [], played=played_rounds(live.event), words=words, state=state)


def event_words(event: p.EventInfo) -> dict[str, str]:
    """The words the page (and static/event.js, from its state) uses for the event's format: ``race``,
    one of its races (heat, pairing, race); ``score``, what its score is called; ``unit``, what one entry
    of its schedule is (a round, or an arena's race: an arena has no rounds)."""
    return {"race": race_word(event.format), "score": score_word(event.score_field),
            "unit": "race" if event.pairing else "round"}


def played_rounds(event: p.EventInfo) -> list[p.EventRound]:
    """The rounds whose races are over, each heat a race page with its result and (once the event
    allows) its replays: every round of a finished event, else those before the round under way
    (and that one once scored). static/event.js lists the same."""
    if event.status == "finished":
        return list(event.schedule)
    return [r for r in event.schedule if r.round < event.round or (r.round == event.round and event.round_state == "done")]
