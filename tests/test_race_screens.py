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


def test_the_lobby_names_what_the_race_is_part_of_its_start_and_rated() -> None:
    from client_cli.race_screens import lobby_text
    from client_cli.wording import clock_time

    state = RaceState(race_ref="ABCDEF", role="player")
    state.info = info(status="lobby")
    plain = lobby_text(state, local_ms=T0)
    assert "Waiting for the race's creator to start it." in plain and "Rated" not in plain
    assert plain.startswith("Race ABCDEF"), "a player's race has no title line"
    state.info = info(status="lobby", rated=True, title="Friday Cup · round 2 of 3 · heat 1 of 4",
                      scheduled_at=T0 + 95_000)
    heat = lobby_text(state, local_ms=T0).splitlines()
    assert heat[0] == "Friday Cup · round 2 of 3 · heat 1 of 4"
    assert heat[2].startswith("Rated: the result changes your rating. Time limit 60s")
    assert f"The server starts the race at {clock_time(T0 + 95_000)}, in 1:35, whoever has joined." in heat
    assert not any("creator" in line for line in heat)
    state.clock_offset_ms = 5_000  # the server's clock 5 s ahead of this machine's: both figures follow it
    assert f"The server starts the race at {clock_time(T0 + 90_000)}, in 1:30, whoever has joined." in \
        lobby_text(state, local_ms=T0).splitlines()
