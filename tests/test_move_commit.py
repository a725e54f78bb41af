"""The move commit is one typed record (server/store/records.py ``MoveCommit``) whose values moves.lua reads by
name: the names, the values the record packs and the places the script reads are defined once."""

from __future__ import annotations

import re

from server.store import MOVE_FIELDS, MoveCommit
from server.store.scripts import source


def test_each_packed_value_is_the_field_of_its_name() -> None:
    commit = MoveCommit(seat=3, now=1_700_000_000_123, seq=11, expected_n=41, move="bF", home=7, moves=52,
                        status="blocked")
    packed = dict(zip(MOVE_FIELDS, commit.lua_args(), strict=True))
    assert packed == {"seat": "3", "now": "1700000000123", "seq": "11", "expected_n": 41, "move": "bF",
                      "home": "7", "moves": "52", "status": "blocked", "n_after": "42"}


def test_the_moves_script_reads_each_value_at_the_place_the_record_packs_it() -> None:
    """A move's list in the script is its race's number, then :data:`MOVE_FIELDS` in order."""
    places = re.search(r"local M = \{ (.*?) \}", source("moves"))
    assert places is not None
    assert places.group(1) == ", ".join(f"{name} = {i}" for i, name in enumerate(("race", *MOVE_FIELDS), 1))
    assert "{{" not in source("moves")
