"""``thieves seek`` in real terminals against a real server process (tmux, as tests/test_tui_tmux.py):
two players who each type ``thieves seek`` are racing within seconds, no code passed; one who
presses q has its seek cancelled on the server; ``thieves list`` shows the pools."""

from __future__ import annotations

import re
import shutil
import subprocess
from typing import Iterator

import pytest

from process_util import ServerProcess, http_json
from redis_util import PROCESS_ARGS, until
from test_tui_tmux import THIEVES, Tmux

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


@pytest.fixture
def seek_server(redis_url: str) -> Iterator[ServerProcess]:
    with ServerProcess(redis_url, args=[*PROCESS_ARGS, "--seek-wave", "0.2", "--seek-deals", "random"]) as server:
        yield server


def seek_term(server: ServerProcess, name: str) -> Tmux:
    shell = f"{THIEVES} seek --name {name} --time-limit 60 --server {server.url}; echo \"exit status $?\"; sleep 60"
    return Tmux(["sh", "-c", shell])


def test_two_terminals_seeking_are_racing_within_seconds(seek_server: ServerProcess) -> None:
    ann = seek_term(seek_server, "ann")
    try:
        waiting = ann.wait_for(lambda s: "1 waiting" in s)
        assert "seeking forty-thieves, 2 players, 60 s, casual" in waiting and "gap now ±" in waiting
        assert "q Cancel the seek" in waiting and "palette" not in waiting  # no ^p palette in the footer
        listed = subprocess.run([str(THIEVES), "list", "--server", seek_server.url], capture_output=True, text=True,
                                timeout=30)
        assert "seeking:   1 waiting  forty-thieves, 2 players, 60 s, casual" in listed.stdout
        bob = seek_term(seek_server, "bob")
        try:
            for term in (ann, bob):  # both on the race's table, the race running: moves are open
                screen = term.wait_for(lambda s: "Racers" in s and "left" in s and "moves 0" in s, timeout=30)
                assert "ann" in screen and "bob" in screen
            bob.keys("Space")
            bob.wait_for(lambda s: "moves 1" in s)
        finally:
            bob.close()
    finally:
        ann.close()


def test_q_cancels_the_seek_on_the_server(seek_server: ServerProcess) -> None:
    cy = seek_term(seek_server, "cy")
    try:
        cy.wait_for(lambda s: "1 waiting" in s)
        cy.keys("q")
        after = cy.wait_for(lambda s: "exit status" in s)
        assert "seek cancelled" in after and "exit status 0" in after
        until(lambda: http_json(seek_server.url + "/seeks")[1]["pools"] == [], "the pool to empty and go")
        assert seek_server.events("seek_cancelled")
    finally:
        cy.close()


def test_a_bad_seek_says_why_and_exits_2(seek_server: ServerProcess) -> None:
    done = subprocess.run([str(THIEVES), "seek", "--name", "dee", "--seats", "12", "--server", seek_server.url],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "thieves seek: a race from a seek has 2 to 8 players, not 12" in done.stderr
    assert "seek: seek:" not in done.stderr  # one prefix: the command's


def test_a_rated_seek_without_an_account_is_refused_in_one_sentence(seek_server: ServerProcess) -> None:
    """The server's reason was followed by the client's advice for `thieves play` ("; this race is rated,
    for accounts only: ... then `thieves play CODE` without --anonymous"): two messages on one line."""
    done = subprocess.run([str(THIEVES), "seek", "--name", "dee", "--rated", "--server", seek_server.url],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    said = re.findall(r"thieves seek: [^\n\x1b]*", done.stderr)  # after the screen's own output, if any
    assert said == ["thieves seek: a rated race is for accounts only: seek an unrated race, or register "
                    "(thieves register NAME) and seek with its key"], done.stderr


def test_a_partner_who_does_not_come_puts_the_seeker_back_on_the_waiting_screen(redis_url: str) -> None:
    import websockets.sync.client as ws_sync

    from shared import protocol as p

    with ServerProcess(redis_url, args=[*PROCESS_ARGS, "--seek-wave", "0.2", "--seek-deals", "random",
                                        "--seek-join", "2"]) as server:
        ann = seek_term(server, "ann")
        try:
            ann.wait_for(lambda s: "1 waiting" in s)
            with ws_sync.connect(server.ws_url) as bob:  # seeks, is matched, never joins
                bob.send(p.encode(p.Seek(name="bob", time_limit=60)))
                until(lambda: isinstance(p.decode_server(bob.recv(timeout=20)), p.Matched), "bob's match")
                ann.wait_for(lambda s: "Racers" in s, timeout=30)  # ann's table, in the lobby
                back = ann.wait_for(lambda s: "back in the pool (a player did not come)" in s, timeout=30)
                assert "seeking forty-thieves, 2 players, 60 s, casual" in back.replace("\n", " ")
            assert server.events("seek_no_show")
        finally:
            ann.close()


def test_a_seek_nobody_is_paired_with_expires_and_says_so(redis_url: str) -> None:
    with ServerProcess(redis_url, args=[*PROCESS_ARGS, "--seek-wave", "0.2", "--seek-expire", "2"]) as server:
        eve = seek_term(server, "eve")
        try:
            eve.wait_for(lambda s: "1 waiting" in s)
            done = eve.wait_for(lambda s: "exit status" in s, timeout=30)
            assert "thieves seek: nobody was paired with you" in done and "exit status 2" in done
            until(lambda: http_json(server.url + "/seeks")[1]["pools"] == [], "the pool to empty and go")
            assert server.events("seek_expired")
        finally:
            eve.close()
