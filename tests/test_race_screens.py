"""The race line every race screen's status bar shows, for players and spectators alike."""

from __future__ import annotations

from test_client_state import T0, info

from client_cli.connection import LinkState, LinkStatus
from client_cli.race_screens import race_line
from client_cli.race_state import RaceState

ONLINE = LinkStatus(LinkState.ONLINE)


def test_the_race_line_says_whether_the_deal_is_checked() -> None:
    spectator = RaceState(race_ref="abcdef", role="spectator")
    assert race_line(spectator, ONLINE) == "abcdef · ● online", "nothing to say before the race is known"
    spectator.info = info(status="lobby", checked=True)
    assert race_line(spectator, ONLINE).endswith(" · ● online · checked")
    spectator.info = info(status="running", starts_at=T0, ends_at=T0 + 60_000)
    assert race_line(spectator, ONLINE).endswith(" · not checked")
    assert race_line(spectator, ONLINE).startswith("ABCDEF · ")
