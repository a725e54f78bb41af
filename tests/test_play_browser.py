"""The play page (/play) in real browsers (Debian's chromium through playwright) against a live server.

Two browsers race each other to the end on one server, by click, drag and key, with an illegal move,
an undo, a dropped connection and a reload, giving up, the results and a rematch; scenarios are
combined into few tests (two shared cores). The races are on Forty Thieves deal 2, whose winning line
(tests/data/race_win_line.json) gives moves known to be legal.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest
from browser_util import context_options, launch_browser, skip_reason
from play_util import MS, drag, moves, player, status, tap_move, text, top_card, touch_drag
from playwright.async_api import expect
from redis_util import Client, LiveServer, create_race, live_server, register
from test_events import AUTH, ORGANISER, _round_open
from test_accounts_e2e import THIEVES, Term, needs_tmux, terms, thieves  # noqa: F401  (terms: a fixture)
from web_util import WIN

from shared import protocol as p
from shared.variants import VARIANTS

pytestmark = pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")


async def test_two_browsers_race_each_other_to_the_end_and_rematch(server: LiveServer) -> None:
    created = await create_race(server, seats=2, start_mode="all-ready", deal_source="number", deal=WIN["deal"],
                                rated=True, undo=True)
    code = created.race.code
    async with launch_browser() as browser:
        ann = await player(browser, server, "Ann")
        bob = await player(browser, server, "Bob")
        key = await ann.evaluate("() => localStorage.getItem('thieves.key')")
        assert key.startswith("ann."), "the key is in the browser's own storage after the register step"
        assert await ann.context.cookies() == [], "never in a cookie"
        for page in (ann, bob):
            await page.goto(f"{server.url}/play?race={code}")
            await status(page, "lobby")
        await bob.get_by_role("button", name="Leave (give the seat back)").click()
        await text(bob, "#say", "You gave your seat back.")
        assert await bob.is_hidden("#race") and await bob.is_visible("#lobby-pick")
        await bob.fill("#join-code", code.lower())  # (codes are case-insensitive)
        await bob.get_by_role("button", name="Join").click()
        await status(bob, "lobby")
        await ann.keyboard.press("s")  # ready by the terminal's key
        await bob.get_by_role("button", name=re.compile("^Ready")).click()  # and by the button
        for page in (ann, bob):
            await status(page, "running")
            await moves(page, 0)

        assert WIN["moves"][:3] == ["ba", "bF", "hg"]
        await ann.click(top_card(2))  # click-click: column 2 onto column 1
        await ann.click(top_card(1))
        await moves(ann, 1)
        await drag(ann, top_card(2), "#play-board .home")  # drag and drop: column 2 home
        await moves(ann, 2)
        await ann.keyboard.press("8")  # the terminal's keys: column 8 onto column 7
        await ann.keyboard.press("7")
        await moves(ann, 3)
        await ann.keyboard.press("u")  # undo
        await moves(ann, 2)
        await ann.keyboard.press("8")
        await ann.keyboard.press("7")
        await moves(ann, 3)
        await ann.keyboard.press("1")  # an illegal move: its reason in the server's words
        await ann.keyboard.press("2")
        await text(ann, "#move-say", "a card must be exactly one rank lower than the card it goes on")
        assert await ann.get_attribute("#play-board", "data-moves") == "3", "nothing changed"
        await ann.keyboard.press(" ")  # draw
        await moves(ann, 4)
        await text(bob, "#racers tr[data-seat='0'] .count", "1/104")  # the racers' bars live

        # A dropped connection: the server drops ann's socket; the page reconnects and keeps its seat.
        for conn in [c for c in server.service.hubs[created.race.id].conns if getattr(c, "seat", None) == 0]:
            conn.abort(p.CloseCode.SERVICE_RESTART)
        await ann.wait_for_selector("#conn[data-state=reconnecting]", timeout=MS)
        await ann.keyboard.press(" ")  # a move while away: kept, and sent again after the welcome
        await ann.wait_for_selector("#conn[data-state=live]", timeout=MS)
        await moves(ann, 5)
        # A reload: the seat comes back from the tab's own storage, with the board as it was.
        await bob.focus(top_card(2))  # the keyboard alone: a focused card picked with Enter
        await bob.keyboard.press("Enter")
        await bob.focus(top_card(1))
        await bob.keyboard.press("Enter")
        await moves(bob, 1)
        await bob.reload()
        await status(bob, "running")
        await moves(bob, 1)
        assert await bob.text_content("#race-code") == code

        await bob.keyboard.press("g")  # give up asks first
        await text(bob, "#move-say", "Give up?")
        await bob.get_by_role("button", name=re.compile("^Yes, give up")).click()
        await text(bob, "#say", "You gave up")
        await ann.keyboard.press("g")
        await ann.keyboard.press("y")
        for page in (ann, bob):
            await status(page, "finished")
            await page.wait_for_selector("#final:not([hidden])", timeout=MS)
            await text(page, "#standings li[data-rank='1']", "Ann")
            await text(page, "#standings li[data-rank='2']", "Bob")
            await text(page, "#rating-change", "Your rating: 1000 →")
        await text(ann, "#say", "You placed 1")

        await ann.get_by_role("button", name="Rematch").click()
        await text(bob, "#rematch-status", "Rematch offered by Ann")
        await bob.get_by_role("button", name="Rematch").click()
        for page in (ann, bob):
            await page.wait_for_function(f"() => document.getElementById('race-code').textContent !== '{code}'",
                                         timeout=MS)
            await status(page, "running")  # both said ready as they moved in
        assert await ann.text_content("#race-code") == await bob.text_content("#race-code")
        assert ann.csp == [] and bob.csp == [], ann.csp + bob.csp
        assert not [url for url in ann.urls if key in url or key.split(".")[1] in url], "never in a URL"


TAPPED = 40
HOME_AFTER_TAPPED = 9
"""Cards home after the first TAPPED moves of the winning line."""


async def test_a_phone_sized_race_played_by_touch_to_the_end(server: LiveServer) -> None:
    created = await create_race(server, seats=1, start_mode="all-ready", deal_source="number", deal=WIN["deal"],
                                hints=True)
    async with launch_browser() as browser:
        phone = await player(browser, server, "ann", register=False, **context_options("phone 390"))
        await phone.fill("#join-code", created.race.code)
        await phone.tap("#join-form button")
        await status(phone, "lobby")
        await phone.get_by_role("button", name=re.compile("^Ready")).tap()
        await status(phone, "running")
        assert await phone.evaluate("() => document.documentElement.scrollWidth") <= 390, "no sideways scroll"
        # Cards and piles are named for screen readers by what they are and where.
        await expect(phone.locator(top_card(1))).to_have_accessible_name(re.compile(r"^\w+ of \w+, column 1$"))
        await expect(phone.locator("#play-board .stock")).to_have_accessible_name("Stock, 64 cards: draw (space)")
        await expect(phone.locator("#play-board .home")).to_have_accessible_name(re.compile(r"^Home \(key f\), 0 of 104"))
        await phone.get_by_role("button", name=re.compile("^Hint")).tap()  # the race allows hints
        await text(phone, "#move-say", "Hint: ")
        assert WIN["moves"][0] == "ba"
        await touch_drag(phone, top_card(2), top_card(1))  # a finger drags column 2 onto column 1
        await moves(phone, 1)
        for played, move in enumerate(WIN["moves"][1:TAPPED], 1):  # (the whole line takes a loaded machine a minute)
            await tap_move(phone, move, played)
        await phone.get_by_role("button", name=re.compile("^Give up")).tap()
        await phone.get_by_role("button", name=re.compile("^Yes, give up")).tap()
        await status(phone, "finished")
        await text(phone, "#standings li[data-rank='1']", f"ann: gave up, {HOME_AFTER_TAPPED}/104 cards home")
        assert phone.csp == [], phone.csp


async def test_a_seek_from_two_browsers_meets_and_find_another_meets_again(server: LiveServer) -> None:
    async with launch_browser() as browser:
        cy = await player(browser, server, "cy", register=False)
        dee = await player(browser, server, "dee", register=False)
        await cy.fill("#seek-seats", "3")  # a seek nobody meets, called off
        await cy.get_by_role("button", name="Find a race now").click()
        await text(cy, "#seek-status", "Looking for a race in forty-thieves/3/300/casual: 1 waiting")
        await cy.get_by_role("button", name="Stop looking").click()
        await text(cy, "#seek-status", "Stopped looking.")
        await cy.wait_for_selector("#seek-cancel", state="hidden", timeout=MS)  # its socket closed
        for page in (cy, dee):
            await page.select_option("#seek-variant", "forty-thieves")
            await page.fill("#seek-seats", "2")
            await page.select_option("#seek-clock", "300")
            await page.get_by_role("button", name="Find a race now").click()
        for page in (cy, dee):
            await status(page, "running")  # matched, joined by the seat's token, ready said by the page
        first = await cy.text_content("#race-code")
        assert first and first == await dee.text_content("#race-code")
        await text(cy, "#racers", "dee")
        for page in (cy, dee):
            await page.keyboard.press("g")
            await page.keyboard.press("y")
        for page in (cy, dee):
            await status(page, "finished")
            assert await page.is_hidden("#rematch"), "guests get no rematch (the new race admits accounts)"
            await page.get_by_role("button", name="Find another").click()
        for page in (cy, dee):
            await page.wait_for_function(f"() => document.getElementById('race-code').textContent !== '{first}'",
                                         timeout=MS)
            await status(page, "running")
        assert await cy.text_content("#race-code") == await dee.text_content("#race-code")
        assert cy.csp == [] and dee.csp == [], cy.csp + dee.csp


async def test_a_partner_who_does_not_come_puts_the_browser_back_to_looking(redis_url: str) -> None:
    """Matched with a protocol client that never joins: after the join window (2 s here) the server puts
    the seek back ("seeking" with requeued), and the page leaves the dead race's lobby and says it looks
    again, as the terminal's seek screen does."""
    async with live_server(redis_url, seek_wave=0.1, seek_join=2.0, seek_deals="random") as server, \
            launch_browser() as browser:
        cy = await player(browser, server, "cy", register=False)
        await cy.get_by_role("button", name="Find a race now").click()
        await text(cy, "#seek-status", "Looking for a race in forty-thieves/2/300/casual: 1 waiting")
        nobody = await Client.connect(server)
        await nobody.send(p.Seek(name="nobody", time_limit=300))
        while not isinstance(await nobody.recv(MS / 1000), p.Matched):
            pass
        await expect(cy.locator("#race")).to_be_visible(timeout=MS)  # joined the race it was given
        await expect(cy.locator("#race")).to_be_hidden(timeout=MS)  # ... and back once nobody did not come
        await expect(cy.locator("#seek-status")).to_contain_text("Looking for a race in forty-thieves/2/300",
                                                                 timeout=MS)
        await expect(cy.locator("#seek-cancel")).to_be_visible()
        await nobody.close()


@needs_tmux
async def test_a_terminal_challenge_accepted_in_the_browser_and_raced_to_the_end(
        server: LiveServer, tmp_path: Path, terms: list[Term]) -> None:
    home = tmp_path / "ann"
    home.mkdir()
    env = {"XDG_CONFIG_HOME": str(home)}
    registered = await asyncio.to_thread(thieves, "register", "Ann", "--server", server.url, env=env)
    assert registered.returncode == 0, registered.stderr
    async with launch_browser() as browser:
        bob = await player(browser, server, "Bob")
        term = Term(f"XDG_CONFIG_HOME={home} exec {THIEVES} challenge Bob --deal random --time-limit 300 "
                    f"--server {server.url}")
        terms.append(term)
        await text(bob, "#incoming", "Ann challenges you")
        await bob.get_by_role("button", name="Accept").click()
        await status(bob, "lobby")
        await asyncio.to_thread(term.wait_for, "press s")
        term.keys("s")  # the terminal says ready; the page said it as it moved in
        await status(bob, "running")
        await bob.keyboard.press(" ")
        await moves(bob, 1)
        await asyncio.to_thread(term.wait_for, "Bob")
        term.keys("Space")
        term.keys("Space")
        ann_line = bob.locator("#racers tbody tr", has_text="Ann")
        await expect(ann_line.locator("td.moves")).to_have_text("2", timeout=MS)  # the terminal's, live
        term.keys("g")
        term.keys("y")
        await expect(ann_line.locator(".status")).to_contain_text("gave up", timeout=MS)
        await bob.keyboard.press("g")
        await bob.keyboard.press("y")
        await status(bob, "finished")
        await text(bob, "#standings", "Ann: gave up, 0/104")
        await text(bob, "#standings", "Bob: gave up, 0/104")
        screen = await asyncio.to_thread(term.wait_for, "The race is over")
        assert re.search(r"\d\W+Bob\s+0/104", screen) and re.search(r"\d\W+Ann\s+0/104", screen), screen

        # A challenge sent from the browser, declined in the terminal.
        await bob.get_by_role("button", name="Back to the lobby").click()
        await bob.fill("#challenge-to", "ann")
        await bob.get_by_role("button", name="Send").click()
        await text(bob, "#challenge-status", "Challenge sent to Ann: waiting for the answer")
        listed = await asyncio.to_thread(thieves, "challenges", "--server", server.url, env=env)
        ident = re.search(r"^  (\w+)  from Bob", listed.stdout, re.M)
        assert ident, listed.stdout
        declined = await asyncio.to_thread(thieves, "challenges", "decline", ident.group(1), "--server", server.url,
                                           env=env)
        assert declined.returncode == 0, declined.stderr
        await text(bob, "#challenge-status", "The challenge was declined.")
        assert bob.csp == [], bob.csp


async def test_an_entrants_page_takes_them_into_their_heat_when_it_opens(redis_url: str) -> None:
    async with live_server(redis_url, organiser_token=ORGANISER) as server, launch_browser() as browser:
        ann = await player(browser, server, "Ann")
        bob_key = await register(server, "Bob")
        status_, event = await server.http("POST", "/events", {"name": "Cup", "rounds": 1, "heat_size": 2,
                                                                 "join_seconds": 1, "break_seconds": 0,
                                                                 "time_limit": 120, "deals": [WIN["deal"]]},
                                           headers=AUTH)
        assert status_ == 201, event
        key = await ann.evaluate("() => localStorage.getItem('thieves.key')")
        for entrant in (key, bob_key):
            answer = await server.http("POST", f"/events/{event['id']}/entrants",
                                       headers={"authorization": f"Bearer {entrant}"})
            assert answer[0] == 200, answer
        await ann.goto(f"{server.url}/play?event={event['id']}")
        await text(ann, "#event-status", "Waiting for your next race in Cup")
        assert (await server.http("POST", f"/events/{event['id']}/start", headers=AUTH))[0] == 200
        bob = await Client.connect(server)
        heat = (await _round_open(server, event["id"], 1)).heats[0]
        await bob.hello(heat.code, key=bob_key)
        await status(ann, "running")  # the page took ann into her heat as it opened
        assert await ann.text_content("#race-code") == heat.code
        await bob.expect(p.Countdown, timeout=30)
        await bob.give_up()
        await ann.keyboard.press("g")
        await ann.keyboard.press("y")
        await status(ann, "finished")
        await text(ann, "#event-status", "Cup is finished")
        await bob.close()
        assert ann.csp == [], ann.csp


async def test_the_board_of_every_variant_fits_a_phone(server: LiveServer) -> None:
    """Every variant's board (8 to 13 columns, up to 16 foundations) at 390 px, in a race the page made
    and started: each column in its place, no card face cut off, no sideways scroll."""
    async with launch_browser() as browser:
        context = await browser.new_context(**context_options("phone 390"))
        for key, variant in VARIANTS.items():
            page = await context.new_page()
            await page.goto(f"{server.url}/play")
            await page.fill("#guest-name", "zed")
            await page.select_option("#create-variant", key)  # the page makes the race, and keeps its
            await page.fill("#create-seats", "1")  # creator token to start it
            await page.get_by_role("button", name="Make a race").tap()
            await status(page, "lobby")
            await page.get_by_role("button", name=re.compile("^Start")).tap()
            await status(page, "running")
            assert len(await page.query_selector_all("#play-board .col")) == variant.columns, key
            assert await page.evaluate("() => document.documentElement.scrollWidth") <= 390, key
            cut = await page.eval_on_selector_all("#play-board .card", "cards => cards.filter("
                                                  "c => c.scrollWidth > c.clientWidth + 1).length")
            assert cut == 0, f"{key}: {cut} card faces cut off"
            await page.close()
