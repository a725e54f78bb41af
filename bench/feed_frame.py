"""What one live event frame costs to build, alone: the feed's own work, no Redis, no server, no socket.

An event's feed (server/events/feed.py) builds a frame at most five times a second while its round is
played, for every entrant of the round: each heat's rows from its table, the matchpoints the round would
give now, the live lines, the JSON. This builds ``--frames`` frames of a round of ``--entrants`` in heats
of ``--heat``, with ``--moves`` moves between two frames (a third of them bringing a card home, as the
bots' lines do), through the feed's own functions, and prints the milliseconds a frame of each part:

- ``rows``: the heats' rows from their lines (only a line that changed in more than its move count is
  made into a row again);
- ``live``: the field scored (duplicate matchpoints) and its live lines;
- ``encode``: the lines' JSON (the event and its standings go in encoded once a change).

Why apart from bench/event_round.py: there a frame's cost is a few percent of the server's CPU among
everything else, and a change to it is lost in the run-to-run noise; here it is the whole figure.
The figures are a loaded server's divided by about two (measured on 2026-12-06: 1.08 ms of ``live``
here against 2.3 ms timed inside the server during an event_round run with a core kept busy).

    python bench/feed_frame.py                        # 1,000 entrants in heats of 8, 300 moves a frame
    python bench/feed_frame.py --entrants 4000 --moves 1200
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import msgspec  # noqa: E402

from server.events.feed import EventFeed, Feeds, heat_rows  # noqa: E402
from server.events.format import Formats  # noqa: E402
from server.events.formats import ALL, DUPLICATE  # noqa: E402
from server.store import Line  # noqa: E402
from server.store.records import RaceMeta  # noqa: E402

STARTS = 1_000_000
"""The heats' start (ms): every line's times are after it."""


def heat_meta(race: str) -> RaceMeta:
    """A started heat's settings, as the feed keeps them."""
    return RaceMeta(id=race, code="ABCDEF", variant="forty-thieves", deal_source="random", deal=1, salt="s",
                    commitment="c", seats=8, players=8, time_limit=600, undo=False, start_mode="creator",
                    status="started", created_at=0, starts_at=STARTS, ends_at=STARTS + 600_000, ended_at=0,
                    version=1, done=0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entrants", type=int, default=1000)
    parser.add_argument("--heat", type=int, default=8)
    parser.add_argument("--moves", type=int, default=300, help="moves between two frames (1,000 racers at "
                        "1.5 moves a second each, a frame every 0.2 s: 300)")
    parser.add_argument("--frames", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if args.entrants < 1 or args.heat < 1 or args.frames < 1 or args.moves < 0:
        parser.error("--entrants, --heat and --frames are at least 1, --moves at least 0")

    rng = random.Random(args.seed)
    heats: list[tuple[int, str, list[str]]] = []
    tables: dict[str, list[Line]] = {}
    for first in range(0, args.entrants, args.heat):
        race = f"race{len(heats):05d}"
        accounts = [f"e{i:05d}" for i in range(first, min(first + args.heat, args.entrants))]
        heats.append((len(heats) + 1, race, accounts))
        tables[race] = [Line(seat, name, "racing", 8, 0, 0, 0, 1) for seat, name in enumerate(accounts)]
    metas = {race: heat_meta(race) for _, race, _ in heats}
    feeds = Feeds(None, None, formats=Formats(ALL), sse_event=bytes)  # type: ignore[arg-type]  # the parts timed here read no store
    feed = EventFeed(feeds, "E")
    encoder = msgspec.json.Encoder()
    spent = {"rows": 0.0, "live": 0.0, "encode": 0.0}
    size = 0
    for frame in range(args.frames):
        for _ in range(args.moves):
            _, race, _ = heats[rng.randrange(len(heats))]
            lines = tables[race][:]  # a new list, as a table that changed gives
            seat = rng.randrange(len(lines))
            old = lines[seat]
            home = old.home + (1 if rng.random() < 1 / 3 else 0)
            lines[seat] = Line(seat, old.name, "racing", home, old.moves + 1,
                               STARTS + 1000 + frame * 200 if home != old.home else old.home_at, 0, 1)
            tables[race] = lines
        began = time.perf_counter()
        for heat, race, accounts in heats:
            feed._heat_rows[race] = heat_rows(heat, race, accounts, metas[race], frame, tables[race],
                                              feed._heat_rows.get(race))
        rows_done = time.perf_counter()
        live = feed._live(heats, DUPLICATE.live_points)
        live_done = time.perf_counter()
        size = len(encoder.encode(live))
        spent["rows"] += rows_done - began
        spent["live"] += live_done - rows_done
        spent["encode"] += time.perf_counter() - live_done
    per = {part: seconds / args.frames * 1000 for part, seconds in spent.items()}
    print(f"{args.entrants} entrants in {len(heats)} heats, {args.moves} moves between frames, {args.frames} frames")
    print(f"ms a frame: rows {per['rows']:.2f}, live {per['live']:.2f}, encode {per['encode']:.2f}, "
          f"total {sum(per.values()):.2f} ({size / 1024:.0f} KiB of live lines)")
    print(f"frame_ms {sum(per.values()):.3f}")


if __name__ == "__main__":
    main()
