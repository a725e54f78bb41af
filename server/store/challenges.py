"""Challenges in Redis: one hash per challenge under its own hash tag (keys.challenge_key), and each
account's index of the challenges it sent or received (``account:{NAME}:challenges``).

Every step of a challenge (made, claimed for an accept, accepted, released, declined, cancelled) is a
one-key script on the challenge's hash, so it is atomic on one Redis and on a Redis Cluster alike. The
indexes live in the accounts' slots and are written after the challenge: they are only a list of ids
to look at, never trusted for a challenge's state (an id whose hash is gone is skipped, and entries
older than :data:`KEEP_MS` past their expiry are trimmed as they are read).

Why a TTL past the expiry rather than at it: an answer that comes a little late must read
``challenge_expired`` (or the outcome: the race of an accepted one), not ``challenge_not_found``; the
open window itself is the ``expires_at`` field, which the step script compares with the clock.
"""

from __future__ import annotations

from typing import Any

from .keys import AccountKeys, challenge_key, rematch_key
from .records import ChallengeRecord, RematchRecord, StoreError, reply
from .scripts import register

KEEP_MS = 600_000
"""How long a challenge's hash outlives its expiry (then ``challenge_not_found``)."""


class ChallengeRefused(StoreError):
    """A step refused: ``code`` (an ErrorCode value) and, for ``challenge_closed``, the challenge's status."""

    def __init__(self, code: str, challenge_status: str = "") -> None:
        super().__init__(code)
        self.challenge_status = challenge_status


class ChallengeStore:
    """Challenges and the accounts' indexes of them, shared by every server process."""

    def __init__(self, redis: Any) -> None:
        self.redis = redis
        self._create = register(redis, "challenge_create")
        self._step = register(redis, "challenge_step")
        self._rematch = register(redis, "rematch")
        self._slot = register(redis, "challenge_slot")

    async def take_slot(self, record: ChallengeRecord, now: int, to_one: int, total: int) -> None:
        """Count the new challenge among its challenger's open ones (challenge_slot.lua), before it is
        stored; raises :class:`ChallengeRefused` (``too_many_challenges``, status ``to_one`` or ``total``:
        which cap) and writes nothing when a cap is reached."""
        kind, rest = reply(await self._slot(keys=[AccountKeys(record.challenger).sent], args=[
            now, record.sent_member, record.lease_until or record.expires_at, record.challenged, to_one, total]))
        if kind != "ok":
            raise ChallengeRefused("too_many_challenges", rest[0])

    async def free_slot(self, record: ChallengeRecord) -> None:
        """The challenge is no longer open (answered, cancelled, withdrawn): it stops counting."""
        await self.redis.zrem(AccountKeys(record.challenger).sent, record.sent_member)

    async def seen(self, record: ChallengeRecord, now: int, lease_ms: int) -> None:
        """The challenger still waits for the answer: its lease runs ``lease_ms`` from now, in the
        challenge and in the count of its open challenges (raises :class:`ChallengeRefused` when the
        challenge is no longer open)."""
        await self.step(record.id, "seen", now, record.challenger, "", lease_ms)
        until = min(now + lease_ms, record.expires_at)
        await self.redis.zadd(AccountKeys(record.challenger).sent, {record.sent_member: until}, xx=True)

    async def create(self, record: ChallengeRecord) -> bool:
        """Store a new challenge and index it under both accounts; False if its id was taken."""
        made = await self._create(keys=[challenge_key(record.id)],
                                  args=[record.expires_at + KEEP_MS, *record.hash_fields()])
        if not made:
            return False
        for account in (record.challenger, record.challenged):
            await self.redis.zadd(AccountKeys(account).challenges, {record.id: record.expires_at})
        return True

    async def get(self, challenge: str) -> ChallengeRecord | None:
        raw = await self.redis.hgetall(challenge_key(challenge))
        return ChallengeRecord.from_hash(raw) if raw else None

    async def step(self, challenge: str, action: str, now: int, actor: str, claim: str = "",
                   *extra: Any) -> None:
        """One step of the challenge (challenge_step.lua); raises :class:`ChallengeRefused`."""
        kind, rest = reply(await self._step(keys=[challenge_key(challenge)],
                                            args=[action, now, actor, claim, *extra]))
        if kind != "ok":
            raise ChallengeRefused(rest[0], rest[1] if len(rest) > 1 else "")

    async def of_account(self, account: str, now: int) -> list[ChallengeRecord]:
        """The challenges the account sent or received that are still kept, newest first."""
        index = AccountKeys(account).challenges
        await self.redis.zremrangebyscore(index, "-inf", now - KEEP_MS)
        ids = [i.decode() for i in await self.redis.zrevrange(index, 0, -1)]
        if not ids:
            return []
        async with self.redis.pipeline(transaction=False) as pipe:
            for challenge in ids:
                pipe.hgetall(challenge_key(challenge))
            raws = await pipe.execute()
        found = [ChallengeRecord.from_hash(raw) for raw in raws if raw]
        return sorted(found, key=lambda c: c.created_at, reverse=True)

    async def accepting(self, account: str) -> bool:
        """Whether the account takes challenges (the default)."""
        return bool(await self.redis.hget(AccountKeys(account).main, "challenges") != b"off")

    async def set_accepting(self, account: str, accept: bool) -> None:
        """Take challenges or refuse them all (a field of the account's hash; the account exists)."""
        if accept:
            await self.redis.hdel(AccountKeys(account).main, "challenges")
        else:
            await self.redis.hset(AccountKeys(account).main, "challenges", "off")

    # ------------------------------------------------------------ rematches
    async def rematch(self, race: str) -> RematchRecord | None:
        """The finished race's rematch offer, if one is kept."""
        raw = await self.redis.hgetall(rematch_key(race))
        return RematchRecord.from_hash(raw) if raw else None

    async def answer_rematch(self, race: str, account: str, accept: bool, now: int, window_ms: int, racers: int,
                             claim: str) -> str:
        """A racer's yes or no (rematch.lua): ``make`` when this yes was the last one missing (the caller
        then makes the race and calls :meth:`rematch_made`, or :meth:`rematch_release`), ``made`` when
        the race exists already, else ``ok``; raises :class:`ChallengeRefused` (``rematch_closed``)."""
        kind, rest = reply(await self._rematch(keys=[rematch_key(race)], args=[
            "answer", now, account, "yes" if accept else "no", window_ms, racers, claim, KEEP_MS]))
        if kind == "err":
            raise ChallengeRefused(rest[0])
        return kind

    async def rematch_made(self, race: str, claim: str, new_race: str, code: str) -> None:
        kind, rest = reply(await self._rematch(keys=[rematch_key(race)],
                                               args=["made", 0, "", claim, new_race, code]))
        if kind == "err":
            raise ChallengeRefused(rest[0])

    async def rematch_release(self, race: str, claim: str) -> None:
        await self._rematch(keys=[rematch_key(race)], args=["release", 0, "", claim])
