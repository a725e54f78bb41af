"""Test helpers for accounts' results: accounts and finished races written straight into Redis, and a
dump of every key to compare two end states.

Why straight into Redis: the recorder's promises (exactly once, the same end state after a crash) are
about what it does with a finished race, whoever ended it; a race built here has exactly the standings,
accounts and times a test needs.
"""

from __future__ import annotations

from typing import Any

import msgspec
import redis

from server.store import Keys, RaceMeta
from server.store.keys import AccountKeys
from shared import protocol as p

START = 1_700_000_000_000


def put_account(client: redis.Redis, name: str, created_at: int = START - 1) -> str:
    """An account as registration leaves it (name, key hash, creation time); its key tag."""
    account = name.lower()
    client.hset(AccountKeys(account).main, mapping={"name": name, "key_hash": "0" * 64, "created_at": created_at})
    return account


def standing(seat: int, account: str | None, status: str = "racing", home: int = 0, home_at: int | None = None,
             finished_at: int | None = None, moves: int = 10) -> p.Standing:
    """A standing line; ``home_at``/``finished_at`` in ms after START."""
    return p.Standing(rank=0, seat=seat, name=account.title() if account else f"guest{seat}",
                      status=status,  # type: ignore[arg-type]
                      home=home, total=104, moves=moves, account=account,
                      home_at=START + home_at if home_at is not None else None,
                      finished_at=START + finished_at if finished_at is not None else None)


def put_finished_race(client: redis.Redis, race: str, lines: list[p.Standing], *, rated: bool = True,
                      ended_after: int = 300_000, status: str = "finished", variant: str = "forty-thieves") -> p.Results:
    """A race hash and its results blob as ``end.lua`` leaves them (``status="started"``: still running)."""
    from shared.standings import ranked

    ordered = [msgspec.structs.replace(s, rank=rank) for rank, s in ranked(lines)]
    ended_at = START + ended_after
    meta = RaceMeta(id=race, code=race[:6].upper(), variant=variant, deal_source="number", deal=1, salt="s",
                    commitment="c", seats=len(lines), players=len(lines), time_limit=600, undo=True,
                    start_mode="creator", status=status, created_at=START - 10, starts_at=START,
                    ends_at=START + 600_000, ended_at=ended_at if status == "finished" else 0, version=10,
                    done=len(lines), rated=rated)
    client.hset(Keys(race).meta, mapping=dict(zip(meta.hash_fields()[::2], meta.hash_fields()[1::2])))
    results = p.Results(race=race, variant=variant, deal=1, salt="s", commitment="c", starts_at=START,
                        ended_at=ended_at, standings=ordered, records=[])
    if status == "finished":
        client.set(Keys(race).results, p.encode(results))
    return results


def dump(client: redis.Redis, skip: tuple[str, ...] = ()) -> dict[str, Any]:
    """Every key's type and content (hashes, zsets with scores, strings), for comparing end states."""
    out: dict[str, Any] = {}
    for raw in sorted(client.scan_iter(count=1000)):
        key = raw.decode()
        if any(part in key for part in skip):
            continue
        kind = client.type(raw).decode()
        if kind == "hash":
            out[key] = client.hgetall(raw)
        elif kind == "zset":
            out[key] = client.zrange(raw, 0, -1, withscores=True)
        elif kind == "string":
            out[key] = client.get(raw)
        elif kind == "list":
            out[key] = client.lrange(raw, 0, -1)
        else:
            out[key] = kind
    return out


async def apply(server: Any, race: str) -> None:
    """Apply a finished race's results to its accounts now (the sweep would, a little later)."""
    assert (await server.results.apply(race)).value == "applied"
