"""Each part's section of the settings: exactly its part's options, typed as they are, filled from the
flags and environment like the rest, and no secret in its repr.

Why it matters: a section is how a part sees its settings (``config.races``, ``config.edge`` …) while
``--help``, the ``THIEVES_*`` variables and the start summary are made from the one flat list; a section
that lost or gained an option, or typed one differently, would let the two drift.
"""

from __future__ import annotations

from dataclasses import fields, replace
from typing import get_type_hints

import pytest

from server import config as settings
from server.config import PARTS, SECTIONS, Config, parse_args


def test_every_part_has_one_section_named_like_it() -> None:
    assert list(SECTIONS) == list(PARTS)
    assert all(isinstance(getattr(Config(), part), kind) for part, kind in SECTIONS.items())


@pytest.mark.parametrize("part", list(SECTIONS))
def test_a_section_holds_exactly_its_parts_options_typed_alike(part: str) -> None:
    kind = SECTIONS[part]
    flat = {f.name for f in fields(Config) if f.metadata["part"] == part}
    assert [f.name for f in fields(kind)] == [f.name for f in fields(Config) if f.name in flat]
    config_types, section_types = get_type_hints(Config, vars(settings)), get_type_hints(kind, vars(settings))
    assert {name: section_types[name] for name in flat} == {name: config_types[name] for name in flat}


def test_sections_carry_the_flags_and_environment_and_follow_a_replace() -> None:
    config = parse_args(["--seek-wave", "0.25", "--rate", "30"],
                        {"THIEVES_COUNTDOWN": "1.5", "THIEVES_DAILY_MIN_RATED_RACES": "0"})
    assert config.matchmaking.seek_wave == 0.25 and config.edge.rate == 30.0
    assert config.races.countdown == 1.5 and config.events.daily_min_rated_races == 0
    assert config.deals == Config().deals and config.races.token_ttl == Config().token_ttl
    assert replace(config, countdown=2.0).races.countdown == 2.0  # a replaced Config has its own sections


def test_a_sections_repr_keeps_its_secret() -> None:
    config = Config(token_secret="s3cret-token-key", organiser_token="organiser-secret-0123456789")
    assert config.races.token_secret == "s3cret-token-key"
    assert config.events.organiser_token == "organiser-secret-0123456789"
    assert "s3cret" not in repr(config.races) and "organiser-secret" not in repr(config.events)
    assert "s3cret" not in repr(config) and "organiser-secret" not in repr(config)
