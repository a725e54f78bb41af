"""What finished races leave behind for accounts: the results-pending outbox, rating plans, each account's
totals, ratings and history, and the leaderboards (key layout: ``keys.py``, ``AccountKeys``).

Applying a race is split so that each step touches one slot of a Redis
Cluster and can be repeated: the outbox entry (one key), the race's rating
plan (the race's hash tag; the first writer wins, so every process applies
the same numbers), each account's part (one script on that account's keys,
a no-op the second time) and its leaderboard score (its own slot, written
again after every call). ``server/accounts/recorder.py`` runs the steps.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from shared import protocol as p

from .history_records import AccountPart, AccountStats, Applied, LeaderRow, RatingPlan, VariantStats
from .keys import RESULTS_PENDING, AccountKeys, leaderboard_key, rating_plan_key
from .records import reply
from .scripts import register

_entry = msgspec.json.Encoder()
_entry_decoder = msgspec.json.Decoder(p.HistoryEntry)
_CURSOR = re.compile(r"(\d{1,16})-([a-z0-9]{1,40})\Z")
_ACCOUNT = re.compile(p.ACCOUNT_NAME_PATTERN)


class BadCursor(ValueError):
    """A ``before`` that no history page handed out."""


def account_of(name: str) -> str | None:
    """The account (key tag) of a name in any case, as ``server/accounts/keys.account_of`` makes it;
    None for a name no account can have (which also keeps braces, and so other hash tags, out of keys)."""
    return name.casefold() if _ACCOUNT.match(name) else None


def cursor(entry: p.HistoryEntry) -> str:
    """The ``before`` of the page after ``entry``."""
    return f"{entry.ended_at}-{entry.race}"


def parse_cursor(text: str) -> tuple[int, str]:
    match = _CURSOR.match(text)
    if match is None:
        raise BadCursor(f"before={text!r} is not a cursor a history page gave")
    return int(match.group(1)), match.group(2)


def _float(value: Any) -> float | None:
    return float(value) if value is not None and value is not False else None


class History:
    """Async access to accounts' results in one Redis or a Redis Cluster (one slot per account)."""

    def __init__(self, redis: Any) -> None:
        self.redis = redis
        self._apply = register(redis, "apply_account")
        self._read_history = register(redis, "read_history")

    # ------------------------------------------------------------ the outbox
    async def mark_pending(self, race: str, now: int) -> None:
        """Put a race on the outbox (before it ends); a race already there keeps its first time."""
        await self.redis.zadd(RESULTS_PENDING, {race: now}, nx=True)

    async def pending(self, limit: int = 100) -> list[str]:
        """Races whose results are not yet applied, oldest first."""
        return [bytes(r).decode() for r in await self.redis.zrange(RESULTS_PENDING, 0, limit - 1)]

    async def done(self, race: str) -> None:
        """Take a race off the outbox: every part of it is applied."""
        await self.redis.zrem(RESULTS_PENDING, race)

    # ----------------------------------------------------------- rating plans
    async def plan(self, race: str) -> RatingPlan | None:
        blob = await self.redis.get(rating_plan_key(race))
        return RatingPlan.decode(bytes(blob)) if blob is not None else None

    async def store_plan(self, plan: RatingPlan, ttl: int) -> RatingPlan:
        """Keep ``plan`` unless the race has one already; the race's plan either way (the first writer's).

        ``ttl``: seconds it is kept, like the race's other keys (``--retention``).
        """
        key = rating_plan_key(plan.race)
        await self.redis.set(key, plan.encode(), nx=True, ex=max(1, ttl))
        stored = await self.redis.get(key)
        return RatingPlan.decode(bytes(stored)) if stored is not None else plan

    async def ratings(self, accounts: list[str], variant: str) -> dict[str, tuple[float, float] | None]:
        """Each account's ``(mu, sigma)`` in ``variant`` now (None: not rated yet), one round trip
        (a cluster pipeline sends each node its part)."""
        if not accounts:
            return {}
        fields = (f"v:{variant}:mu", f"v:{variant}:sigma")
        async with self.redis.pipeline(transaction=False) as pipe:
            for account in accounts:
                pipe.hmget(AccountKeys(account).main, *fields)
            rows = await pipe.execute()
        out: dict[str, tuple[float, float] | None] = {}
        for account, (mu, sigma) in zip(accounts, rows):
            out[account] = (float(mu), float(sigma)) if mu is not None and sigma is not None else None
        return out

    # ------------------------------------------------------- one account's part
    async def apply_account(self, part: AccountPart, history_max: int) -> Applied:
        """Apply one account's part of a race, once: a second call answers the state without writing."""
        k = AccountKeys(part.account)
        c = part.change
        rating = [repr(c.mu_before), repr(c.sigma_before), repr(c.mu_after), repr(c.sigma_after)] if c else [""] * 4
        kind, rest = reply(await self._apply(keys=[k.main, k.history, k.entries], args=[
            part.entry.race, part.entry.ended_at, part.variant, int(part.won),
            "" if part.finish_ms is None else part.finish_ms, _entry.encode(part.entry), int(c is not None),
            *rating, max(1, history_max),
        ]))
        if kind == "missing":
            return Applied(applied_now=False, exists=False, mu=None, sigma=None, rated=0)
        return Applied(applied_now=kind == "ok", exists=True, mu=_float(rest[0]), sigma=_float(rest[1]),
                       rated=int(rest[2]))

    async def rank(self, variant: str, account: str, score: int) -> None:
        """Put the account's shown rating on the variant's leaderboard (repeatable: it sets, never adds)."""
        await self.redis.zadd(leaderboard_key(variant), {account: score})

    # ------------------------------------------------------------------ reads
    async def profile(self, name: str) -> AccountStats | None:
        account = account_of(name)
        raw = await self.redis.hgetall(AccountKeys(account).main) if account else None
        if not raw:
            return None
        d = {bytes(a).decode(): bytes(b).decode() for a, b in raw.items()}
        if "name" not in d:
            return None
        per: dict[str, dict[str, str]] = {}
        for key, value in d.items():
            if key.startswith("v:"):
                variant, _, what = key[2:].rpartition(":")
                per.setdefault(variant, {})[what] = value
        variants = {v: VariantStats(
            races=int(f.get("races", 0)), wins=int(f.get("wins", 0)),
            best_ms=int(f["best_ms"]) if "best_ms" in f else None,
            mu=float(f["mu"]) if "mu" in f else None, sigma=float(f["sigma"]) if "sigma" in f else None,
            rated=int(f.get("rated", 0)),
        ) for v, f in sorted(per.items())}
        return AccountStats(name=d["name"], created_at=int(d.get("created_at", 0) or 0),
                            races=int(d.get("races", 0)), wins=int(d.get("wins", 0)), variants=variants)

    async def history_page(self, name: str, before: str | None, limit: int) -> p.HistoryPage | None:
        """Up to ``limit`` entries, newest first, older than the cursor ``before``; None: no such account.
        Raises :class:`BadCursor` for a cursor no page gave."""
        at, race = parse_cursor(before) if before else (None, "")
        account = account_of(name)
        if account is None:
            return None
        k = AccountKeys(account)
        raw = await self._read_history(keys=[k.main, k.history, k.entries],
                                       args=["" if at is None else at, race, limit])
        if not int(raw[0]):
            return None
        entries = [_entry_decoder.decode(bytes(blob)) for blob in raw[2:]]
        more = bool(int(raw[1])) and bool(entries)
        return p.HistoryPage(races=entries, next=cursor(entries[-1]) if more else None)

    async def leaderboard(self, variant: str, limit: int) -> list[LeaderRow]:
        """The best ``limit`` rated accounts of ``variant``, best first (equal scores by account), with
        their names and ratings read from their own hashes (one pipeline: on a cluster, one batch per
        node). Equal scores at the cut may leave out one that sorts before an included one."""
        board = await self.redis.zrevrange(leaderboard_key(variant), 0, limit - 1, withscores=True)
        # Equal scores in name order (Redis gives reverse order for a reversed range).
        accounts = [bytes(a).decode() for a, _ in sorted(board, key=lambda row: (-row[1], row[0]))]
        if not accounts:
            return []
        fields = ("name", f"v:{variant}:mu", f"v:{variant}:sigma", f"v:{variant}:rated")
        async with self.redis.pipeline(transaction=False) as pipe:
            for account in accounts:
                pipe.hmget(AccountKeys(account).main, *fields)
            rows = await pipe.execute()
        out = []
        for account, (shown_name, mu, sigma, rated) in zip(accounts, rows):
            if shown_name is None or mu is None or sigma is None:
                continue  # (an account without a rating here: nothing to show)
            out.append(LeaderRow(account=account, name=bytes(shown_name).decode(), mu=float(mu),
                                 sigma=float(sigma), rated=int(rated or 0)))
        return out
