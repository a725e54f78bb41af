"""Every event command the README ("Tournament events and the daily deal") and docs/events.md show, run
as the docs run it: the installed ``thieves`` as its own process (the table ones in an 80×24 tmux
terminal), against one ``thieves-server`` process started with the organiser token, in the docs'
order, with short clocks. Each ends as documented.

:func:`documented` reads the commands out of those docs (code blocks and inline code), and the walk
fails when one of them was not run: a command added to the docs needs a step here.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest
from process_util import ServerProcess, http_json
from redis_util import PROCESS_ARGS, until
from test_event_play import TOKEN, play_through, thieves_env
from test_tui_tmux import THIEVES, Tmux

ROOT = Path(__file__).resolve().parent.parent
GROUPS = ("event", "daily", "account", "pool")
"""Commands whose second word is an action (``thieves event join``); the others are one word."""


def verb(argv: list[str]) -> str:
    """A command line's command: ``thieves event join``, ``thieves play``, ``make demo-event``."""
    if argv[0] == "thieves" and len(argv) > 1 and argv[1] in GROUPS:
        action = argv[2] if len(argv) > 2 and not argv[2].startswith("-") and argv[2].islower() else ""
        if argv[1] == "daily" and not action:
            action = "board"  # (its default)
        return " ".join(argv[:2] + [action]).strip()
    return " ".join(argv[:2])


def documented() -> set[str]:
    """The commands the event docs show: README's events section and all of docs/events.md, in code
    blocks and in inline code."""
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## Tournament events and the daily deal"):]
    section = section[:section.index("\n## ", 1)]
    found = set()
    for text in (section, (ROOT / "docs" / "events.md").read_text()):
        fence = r"```\w*\n(.*?)```"
        inline = re.findall(r"`([^`]+)`", re.sub(fence, "", text, flags=re.S))  # (one may wrap a line)
        spans = re.findall(fence, text, re.S) + [" ".join(span.split()) for span in inline]
        for span in spans:
            for line in span.splitlines():
                words = line.split("#")[0].split()
                if words:
                    words[0] = words[0].rsplit("/", 1)[-1]  # .venv/bin/thieves is thieves
                if words and (words[0] in ("thieves", "thieves-server") or words[:2] in (["make", "demo-event"],
                                                                                         ["make", "run"])):
                    found.add(verb(words))
    return found


def test_the_docs_commands_are_read_out_of_the_docs() -> None:
    """The reader finds what the docs show (a reader that found nothing would let the walk pass)."""
    found = documented()
    assert {"thieves event create", "thieves event join", "thieves event play", "thieves event watch",
            "thieves verify", "thieves play", "thieves daily play", "make run",
            "make demo-event", "thieves register", "thieves bot", "thieves event check-in"} <= found
    assert verb(["thieves", "daily", "board"]) == "thieves daily board" and verb(["thieves", "daily"]) == "thieves daily board"


pytestmark_tmux = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


@pytestmark_tmux
def test_the_event_docs_walked_in_order_against_one_server(redis_url: str, tmp_path: Path) -> None:
    ran: set[str] = set()
    # `make run` (thieves-server) in a shell where THIEVES_ORGANISER_TOKEN is exported, as the README has it.
    server = ServerProcess(redis_url, args=PROCESS_ARGS, env={"THIEVES_ORGANISER_TOKEN": TOKEN},
                           log_path=tmp_path / "server.log")
    server.start()
    ran.add("make run")
    terms: list[Tmux] = []
    bot: subprocess.Popen[str] | None = None

    def run(who: str, *argv: str, code: int = 0, organiser: bool = False) -> str:
        """``thieves ARGV`` on ``who``'s machine; its stdout, after checking its exit status."""
        ran.add(verb(["thieves", *argv]))
        done = subprocess.run([str(THIEVES), *argv, "--server", server.url], capture_output=True, text=True,
                              env=thieves_env(tmp_path / who, organiser), timeout=60)
        assert done.returncode == code, f"thieves {' '.join(argv)}: {done.returncode}\n{done.stdout}{done.stderr}"
        return done.stdout + done.stderr

    def terminal(who: str, *argv: str) -> Tmux:
        """``thieves ARGV`` in an 80×24 terminal of ``who``'s; ``exit status N`` follows its end."""
        ran.add(verb(["thieves", *argv]))
        env = " ".join(f"{k}={v}" for k, v in thieves_env(tmp_path / who, False).items() if k == "XDG_CONFIG_HOME")
        term = Tmux(["sh", "-c", f"{env} {THIEVES} {' '.join(argv)} --server {server.url}; "
                                 "echo \"exit status $?\"; sleep 120"])
        terms.append(term)
        return term

    def ended(term: Tmux) -> Callable[[], bool]:
        return lambda: "exit status" in term.screen()

    try:
        for name in ("ann", "bob", "cy"):
            run(name, "register", name)
        # The organiser: a duplicate event that asks for check-in, and an arena.
        out = run("org", "event", "create", "Friday Cup", "--rounds", "1", "--heat-size", "2", "--time-limit", "30",
                  "--join-seconds", "8", "--break-seconds", "1", "--deal-source", "random", "--check-in",
                  organiser=True)
        cup = out.split()[1]
        out = run("org", "event", "create", "Blitz", "--format", "arena", "--duration", "1800", "--time-limit", "300",
                  organiser=True)
        blitz = out.split()[1]
        swiss = run("org", "event", "create", "Open", "--format", "swiss", "--rounds", "5", organiser=True).split()[1]
        listed = run("ann", "event", "list")
        assert all(e in listed for e in (cup, blitz, swiss)) and "Friday Cup" in listed and "arena" in listed
        assert "swiss" in listed
        # README's scheduled, repeating event, then called off with its series (nothing of it is ever played).
        hourly = run("org", "event", "create", "Hourly", "--format", "arena", "--starts-at", "+60", "--repeat",
                     "0 * * * *", organiser=True).split()[1]
        assert "starts by itself at" in run("ann", "event", "show", hourly)
        out = run("org", "event", "cancel", hourly, "--series", organiser=True)
        assert f"'Hourly' ({hourly}) is cancelled; series" in out and "no further occurrences" in out, out
        assert "cancelled" in run("ann", "event", "show", hourly)
        for name in ("ann", "bob", "cy"):
            out = run(name, "event", "join", cup)
            assert f"{name} entered 'Friday Cup' ({cup}): plays from round 1 of 1" in out
            assert f"thieves event check-in {cup}" in out
            assert f"{name} checked in to {cup}" in run(name, "event", "check-in", cup)
        assert "already entered" in run("ann", "event", "join", cup)
        assert "ann entered 'Blitz'" in run("ann", "event", "join", blitz)
        assert "ann withdrew from" in run("ann", "event", "withdraw", blitz)
        assert "(withdrew)" in run("ann", "event", "standings", blitz)

        bob = terminal("bob", "event", "play", cup)
        bob.wait_for(lambda s: "waiting for the organiser to start 'Friday Cup'" in s)
        assert "round 1 is being drawn" in run("org", "event", "start", cup, organiser=True)
        watch = terminal("org", "event", "watch", cup)

        def heats() -> dict[str, str]:
            """Each entrant's heat code, from `thieves event show` (heats of 2 in entry order: ann and cy, bob)."""
            shown = run("ann", "event", "show", cup)
            return {name.strip(): line.split()[0] for line in shown.splitlines() if line.startswith("  ")
                    for name in line.split(None, 1)[1].split(",")}
        def drawn() -> dict[str, str] | None:
            codes = heats()
            return codes if len(codes) == 3 else None
        codes = until(drawn, "round 1 drawn", timeout=30)
        assert codes["ann"] == codes["cy"] != codes["bob"]
        ann = terminal("ann", "play", codes["ann"])
        ran.add("thieves bot")  # cy, slowly: ann's heat (so the event) runs on after bob's heat is over
        bot = subprocess.Popen([str(THIEVES), "bot", codes["cy"], "--pace", "0.5", "--quiet", "--server", server.url],
                               env=thieves_env(tmp_path / "cy", False), stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
        watched: list[str] = []
        secret: list[str] = []

        def replay_while_the_event_runs(i: int, screen: str) -> None:
            if i == 1 and "The race is over" in screen and not secret:  # bob's heat is over, ann's is not
                secret.append(run("bob", "replay", codes["bob"], code=2))
                assert run("bob", "event", "show", cup).splitlines()[0].endswith("running"), "the event ran on"
        play_through([ann, bob], lambda: ended(ann)() and ended(bob)(), watched, replay_while_the_event_runs)
        assert secret and "cannot be replayed yet" in secret[0] and "event is over" in secret[0], secret
        assert "exit status 0" in ann.screen() and "exit status 0" in bob.screen()
        assert "'Friday Cup' is over:" in bob.screen() and "bob: rank " in bob.screen()
        assert any("Friday Cup · round 1 of 1 · heat 1 of 2" in s for s in watched), "the heat's lobby names it"
        out, _ = bot.communicate(timeout=60)
        assert bot.returncode == 0, out
        watch.wait_for(lambda s: "exit status 0" in s, timeout=30)
        assert "matchpoints" in watch.screen(), "the watch leaves the final standings on the terminal"
        table = run("ann", "event", "standings", cup)
        ranked = [line.split() for line in table.splitlines()[1:]]
        assert {words[1] for words in ranked if words and words[0].isdigit()} == {"ann", "bob", "cy"}
        assert any("W won" in line for line in table.splitlines()), "the rounds column's legend"
        assert run("ann", "verify", cup).startswith("agree: ")
        # The organiser's fair-play flags: answered at once (the analyses it starts are counted as waiting).
        out = run("org", "event", "fairplay", cup, organiser=True)
        assert out.startswith(f"event:{cup}: ") and "games analysed" in out, out
        assert "moves replayed" in run("bob", "replay", codes["bob"]), "once the event is over, the game replays"

        # The daily deal, on ann's own clock; then its board.
        daily = terminal("ann", "daily", "play")
        play_through([daily], ended(daily), [])
        assert "exit status 0" in daily.screen()
        assert "ann" in run("ann", "daily", "board")
    finally:
        for term in terms:
            term.close()
        if bot is not None and bot.poll() is None:
            bot.kill()
        server.close()

    # make demo-event: its script, with fewer bots at five times the pace (it starts its own server).
    ran.add("make demo-event")
    demo = subprocess.run([sys.executable, str(ROOT / "scripts" / "demo_event.py"), "--bots", "4", "--heat", "2",
                           "--rounds", "1", "--speed", "5"], capture_output=True, text=True, timeout=120)
    assert demo.returncode == 0, demo.stdout + demo.stderr
    assert "final standings of 'Demo Cup'" in demo.stdout and len(re.findall(r"^ +\d+ +bot\d\d ", demo.stdout, re.M)) == 4

    missing = documented() - ran
    assert not missing, f"documented event commands that no step runs: {sorted(missing)}"
