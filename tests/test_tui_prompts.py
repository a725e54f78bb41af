"""The race table's questions and notices in a real 80x24 terminal (tmux, as tests/test_tui_tmux.py) against a real
server process: the give-up question takes ``g`` or ``y``, as the quit question takes ``q`` or ``y``,
and says so; a move played while offline says that it waits."""

from __future__ import annotations

import re
import shutil

import pytest

from process_util import ServerProcess
from test_tui_one_machine import create, play, race_server  # noqa: F401 (race_server: the fixture)

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


@pytest.mark.parametrize("answer", ["g", "y"])
def test_the_give_up_question_takes_g_or_y_and_says_so(race_server: ServerProcess, answer: str) -> None:
    code, token = create(race_server)
    ann = play(race_server, code, "--name", "ann", "--creator-token", token)
    try:
        ann.wait_for(lambda s: "press b to start it" in s)
        ann.keys("b")
        ann.wait_for(lambda s: "left" in s and "moves 0" in s, timeout=30)
        ann.keys("y")  # no question asked yet: y alone gives nothing up
        ann.keys("g")
        asked = ann.wait_for(lambda s: "give up?" in s)
        assert "g or y gives up (your cards home still count)" in asked
        assert "you gave up" not in asked
        ann.keys(answer)  # alone in the race: giving up ends it (the time limit is 5 minutes away)
        over = ann.wait_for(lambda s: "The race is over" in s, timeout=30)
        assert re.search(r"1. ann\s+0/104\s+0\s+gave up", over), over
    finally:
        ann.close()


def test_a_move_played_offline_says_it_is_not_sent_yet_and_goes_out_after_the_reconnection(
        race_server: ServerProcess) -> None:
    """A key pressed while offline showed nothing at all (the move waits for the reconnection, and the
    board moves only when the server plays it)."""
    code, token = create(race_server)
    ann = play(race_server, code, "--name", "ann", "--creator-token", token)
    try:
        ann.wait_for(lambda s: "press b to start it" in s)
        ann.keys("b")
        ann.wait_for(lambda s: "left" in s and "moves 0" in s and "Stock 64" in s, timeout=30)
        race_server.terminate()
        ann.wait_for(lambda s: "◌ offline" in s, timeout=30)
        ann.keys("Space")
        said = ann.wait_for(lambda s: "not sent yet" in s)
        assert "; 1 move not sent yet; retrying by itself" in said and "moves 0" in said
        ann.keys("Space")  # another draw, which waits too
        ann.wait_for(lambda s: "; 2 moves not sent yet; retrying by itself" in s)
        race_server.start()
        back = ann.wait_for(lambda s: "● online" in s and "moves 2" in s and "Stock 62" in s, timeout=60)
        assert "not sent" not in back and "offline" not in back.splitlines()[-2]  # both played once back
    finally:
        ann.close()
